/* smem.c - the shared-memory bank model (see smem.h for the rule): a warp
 * instruction's lane addresses -> lane groups, per-bank word counts,
 * degree, transfers, cycles; statistics per SM.
 *
 * Notes:
 * - Word counting per group uses a small open list per bank (at most
 *   32 lanes x 5 words touched per group), so a warp access costs
 *   O(lanes x words) with no allocation.
 * - Broadcast merges equal words within a group only: lanes of different
 *   groups are served by different transfers anyway. */
#include "gpuxray/smem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "smem_internal.h"

/* A lane's access of up to 16 bytes, unaligned, touches at most 5 words of 4 B. */
#define MAX_WORDS_PER_LANE (GX_SMEM_MAX_WIDTH / 4 + 1)
#define MAX_GROUP_WORDS (GX_SMEM_LANES * MAX_WORDS_PER_LANE)


static int check_geometry(const gx_smem_cfg *c, gx_msg *msg)
{
    if (!c || !c->present)
        return gx_fail(msg, GX_ECONFIG, "smem: no shared-memory section");
    if (!c->banks || !c->bank_bytes || !c->transfer_bytes || c->broadcast < 0)
        return gx_fail(msg, GX_ECONFIG,
                       "smem: banks, bank_bytes, transfer_bytes and broadcast are required");
    return GX_OK;
}

/* Degree of one lane group [lo, hi): the most words one bank serves. */
static uint32_t group_degree(const gx_smem_cfg *c, const uint32_t *addr, uint32_t active,
                             uint32_t lo, uint32_t hi, uint32_t width, uint32_t *lanes)
{
    uint64_t words[MAX_GROUP_WORDS];
    uint32_t nw = 0;
    *lanes = 0;
    for (uint32_t i = lo; i < hi; i++) {
        if (!(active >> i & 1u))
            continue;
        (*lanes)++;
        uint64_t w0 = addr[i] / c->bank_bytes, w1 = ((uint64_t)addr[i] + width - 1) / c->bank_bytes;
        for (uint64_t w = w0; w <= w1 && nw < MAX_GROUP_WORDS; w++) {
            int dup = 0;
            if (c->broadcast)
                for (uint32_t k = 0; k < nw && !dup; k++)
                    dup = words[k] == w;
            if (!dup)
                words[nw++] = w;
        }
    }
    uint32_t best = 0;
    /* count per bank: words are few (<= 160), a quadratic pass is cheap */
    for (uint32_t k = 0; k < nw; k++) {
        uint64_t bank = words[k] % c->banks;
        uint32_t n = 0, seen_before = 0;
        for (uint32_t j = 0; j < nw; j++)
            if (words[j] % c->banks == bank) {
                if (j < k) {
                    seen_before = 1;
                    break;
                }
                n++;
            }
        if (!seen_before && n > best)
            best = n;
    }
    return best;
}

int gx_smem_warp_cost(const gx_smem_cfg *c, const uint32_t addr[GX_SMEM_LANES], uint32_t active,
                      uint32_t width, gx_smem_cost *out, gx_msg *msg)
{
    int rc = check_geometry(c, msg);
    if (rc != GX_OK)
        return rc;
    if (!addr || !out)
        return gx_fail(msg, GX_EINVAL, "smem: NULL lane addresses or result");
    if (width == 0 || width > GX_SMEM_MAX_WIDTH)
        return gx_fail(msg, GX_EINVAL, "smem: access width %u bytes outside 1..%d", width,
                       GX_SMEM_MAX_WIDTH);
    memset(out, 0, sizeof *out);
    uint32_t per = c->transfer_bytes / width;
    if (per < 1)
        per = 1;
    if (per > GX_SMEM_LANES)
        per = GX_SMEM_LANES;
    for (uint32_t lo = 0; lo < GX_SMEM_LANES; lo += per) {
        uint32_t hi = lo + per < GX_SMEM_LANES ? lo + per : GX_SMEM_LANES, lanes = 0;
        uint32_t d = group_degree(c, addr, active, lo, hi, width, &lanes);
        if (!lanes)
            continue;
        out->lanes += lanes;
        out->groups++;
        out->transfers += d;
        if (d > out->degree)
            out->degree = d;
    }
    if (out->transfers)
        out->cycles = c->latency_cycles + (double)(out->transfers - 1) * c->conflict_cycles;
    return GX_OK;
}

int gx_smem_new(const gx_smem_cfg *cfg, uint32_t sm_count, gx_smem **out, gx_msg *msg)
{
    *out = NULL;
    int rc = gx_smem_cfg_validate(cfg, 1, msg);
    if (rc != GX_OK)
        return rc;
    if (sm_count == 0)
        return gx_fail(msg, GX_EINVAL, "smem: sm_count is 0");
    gx_smem *s = calloc(1, sizeof *s);
    if (!s || !(s->per_sm = calloc(sm_count, sizeof *s->per_sm)) ||
        !(s->pending = calloc(sm_count, sizeof *s->pending))) {
        if (s)
            free(s->per_sm);
        free(s);
        return gx_fail(msg, GX_ENOMEM, "smem: out of memory for %u SMs", sm_count);
    }
    s->cfg = *cfg;
    s->sm_count = sm_count;
    *out = s;
    return GX_OK;
}

void gx_smem_free(gx_smem *s)
{
    if (!s)
        return;
    free(s->per_sm);
    free(s->pending);
    free(s);
}

int gx_smem_access(gx_smem *s, uint32_t sm, int is_write, const uint32_t addr[GX_SMEM_LANES],
                   uint32_t active, uint32_t width, gx_smem_cost *out, gx_msg *msg)
{
    if (sm >= s->sm_count)
        return gx_fail(msg, GX_ERANGE, "smem: SM %u out of range (%u SMs)", sm, s->sm_count);
    gx_smem_cost c;
    int rc = gx_smem_warp_cost(&s->cfg, addr, active, width, &c, msg);
    if (rc != GX_OK)
        return rc;
    if (c.lanes) {
        gx_smem_stats *st = &s->per_sm[sm];
        const size_t last = sizeof st->by_degree / sizeof st->by_degree[0] - 1;
        st->accesses++;
        if (is_write)
            st->writes++;
        else
            st->reads++;
        st->lanes += c.lanes;
        st->transfers += c.transfers;
        st->conflicted += c.degree >= 2;
        st->by_degree[c.degree < last ? c.degree : last]++;
        st->cycles += c.cycles;
    }
    if (out)
        *out = c;
    return GX_OK;
}

static void add_stats(gx_smem_stats *a, const gx_smem_stats *b)
{
    a->accesses += b->accesses;
    a->reads += b->reads;
    a->writes += b->writes;
    a->lanes += b->lanes;
    a->transfers += b->transfers;
    a->conflicted += b->conflicted;
    for (size_t i = 0; i < sizeof a->by_degree / sizeof a->by_degree[0]; i++)
        a->by_degree[i] += b->by_degree[i];
    a->cycles += b->cycles;
}

/* One SM's statistics with its open trace instruction (if any) counted as
 * if it had been closed now: reading statistics never changes the model. */
static void sm_stats(const gx_smem *s, uint32_t sm, gx_smem_stats *out)
{
    *out = s->per_sm[sm];
    const gx_smem_pending *p = &s->pending[sm];
    gx_smem_cost c;
    if (!p->active || gx_smem_warp_cost(&s->cfg, p->addr, p->active, p->width, &c, NULL) != GX_OK)
        return;
    gx_smem_stats one;
    memset(&one, 0, sizeof one);
    one.accesses = 1;
    one.reads = !p->is_write;
    one.writes = p->is_write != 0;
    one.lanes = c.lanes;
    one.transfers = c.transfers;
    one.conflicted = c.degree >= 2;
    const size_t last = sizeof one.by_degree / sizeof one.by_degree[0] - 1;
    one.by_degree[c.degree < last ? c.degree : last] = 1;
    one.cycles = c.cycles;
    add_stats(out, &one);
}

void gx_smem_get_stats(const gx_smem *s, uint32_t sm, gx_smem_stats *out)
{
    memset(out, 0, sizeof *out);
    if (sm != UINT32_MAX) {
        if (sm < s->sm_count)
            sm_stats(s, sm, out);
        return;
    }
    gx_smem_stats one;
    for (uint32_t i = 0; i < s->sm_count; i++) {
        sm_stats(s, i, &one);
        add_stats(out, &one);
    }
}

const gx_smem_cfg *gx_smem_get_cfg(const gx_smem *s)
{
    return &s->cfg;
}

int gx_smem_new_from_profile(const gx_profile *p, gx_smem **out, gx_msg *msg)
{
    *out = NULL;
    gx_smem_cfg c;
    int rc = gx_smem_cfg_from_profile(p, &c, msg);
    if (rc != GX_OK)
        return rc;
    if (!c.present)
        gx_smem_cfg_default(&c);
    return gx_smem_new(&c, p->device.sm_count ? p->device.sm_count : 1, out, msg);
}
