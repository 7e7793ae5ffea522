/* smem_trace.c - shared-memory trace records into the bank model: lane
 * records grouped into warp instructions, and the statistics written as
 * text and JSON (`gpuxray sim`).
 *
 * Notes:
 * - Grouping (trace.h, gx_trace_rec.warp): consecutive shared records of one
 *   SM with the same non-zero warp id and op are the lanes of one warp
 *   instruction; warp 0 is an instruction of its own. Records of other SMs
 *   may come in between (each SM keeps its own open instruction).
 * - A record's lane is its lane field; when that lane is taken already
 *   (traces that give no lanes say 0 every time) the lowest free lane. A
 *   33rd record closes the instruction and opens the next.
 * - An instruction's width is its widest record, clamped to 16 bytes (a
 *   lane's widest shared access); wider records are counted (oversize).
 * - Addresses are taken modulo 2^32 (bank mapping uses the low bits only:
 *   banks x bank_bytes is a power of two far below 2^32). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/smem.h"
#include "smem_internal.h"

static void close_pending(gx_smem *s, uint32_t sm)
{
    gx_smem_pending *p = &s->pending[sm];
    if (p->active)
        gx_smem_access(s, sm, p->is_write, p->addr, p->active, p->width, NULL, NULL);
    p->active = 0;
    p->width = 0;
}

int gx_smem_record(gx_smem *s, uint32_t sm, uint32_t warp, uint32_t lane, int is_write,
                   uint64_t addr, uint32_t size, gx_msg *msg)
{
    if (sm >= s->sm_count)
        return gx_fail(msg, GX_ERANGE, "smem: SM %u out of range (%u SMs)", sm, s->sm_count);
    if (size == 0)
        return gx_fail(msg, GX_EINVAL, "smem: a shared access of 0 bytes");
    gx_smem_pending *p = &s->pending[sm];
    int same = p->active && warp != 0 && p->warp == warp && p->is_write == (is_write != 0);
    if (!same)
        close_pending(s, sm);
    uint32_t l = lane < GX_SMEM_LANES ? lane : 0;
    if (p->active >> l & 1u) {
        l = 0;
        while (l < GX_SMEM_LANES && (p->active >> l & 1u))
            l++;
        if (l == GX_SMEM_LANES) {
            close_pending(s, sm);
            l = lane < GX_SMEM_LANES ? lane : 0;
        }
    }
    if (size > GX_SMEM_MAX_WIDTH) {
        s->oversize++;
        size = GX_SMEM_MAX_WIDTH;
    }
    p->warp = warp;
    p->is_write = is_write != 0;
    p->addr[l] = (uint32_t)addr;
    p->active |= 1u << l;
    if (size > p->width)
        p->width = size;
    if (warp == 0)
        close_pending(s, sm);
    return GX_OK;
}

void gx_smem_flush(gx_smem *s)
{
    for (uint32_t sm = 0; sm < s->sm_count; sm++)
        close_pending(s, sm);
}

uint64_t gx_smem_oversize(const gx_smem *s)
{
    return s->oversize;
}

static size_t last_degree(const gx_smem_stats *st)
{
    size_t last = 0;
    for (size_t d = 0; d < sizeof st->by_degree / sizeof st->by_degree[0]; d++)
        if (st->by_degree[d])
            last = d;
    return last;
}

static double per(double a, uint64_t n)
{
    return n ? a / (double)n : 0.0;
}

int gx_smem_write_text(const gx_smem *s, FILE *f)
{
    gx_smem_stats st;
    gx_smem_get_stats(s, UINT32_MAX, &st);
    const gx_smem_cfg *c = &s->cfg;
    fprintf(f, "shared memory (%u banks x %u B, %u-byte lane groups, broadcast %s):\n", c->banks,
            c->bank_bytes, c->transfer_bytes, c->broadcast ? "on" : "off");
    fprintf(f, "  warp accesses  %llu (%llu reads, %llu writes), %llu lanes\n",
            (unsigned long long)st.accesses, (unsigned long long)st.reads,
            (unsigned long long)st.writes, (unsigned long long)st.lanes);
    fprintf(f, "  transfers      %llu (%.2f per access)\n", (unsigned long long)st.transfers,
            per((double)st.transfers, st.accesses));
    fprintf(f, "  conflicted     %llu (%.1f%% of accesses)\n", (unsigned long long)st.conflicted,
            100 * per((double)st.conflicted, st.accesses));
    fprintf(f, "  by degree     ");
    size_t last = last_degree(&st);
    for (size_t d = 1; d <= last; d++)
        if (st.by_degree[d])
            fprintf(f, " %zu-way %llu", d, (unsigned long long)st.by_degree[d]);
    fprintf(f, "%s\n", st.accesses ? "" : " -");
    fprintf(f, "  cycles         %.0f (%.2f per access)\n", st.cycles, per(st.cycles, st.accesses));
    if (s->oversize)
        fprintf(f, "  oversize       %llu records wider than %d B (modelled as %d B lanes)\n",
                (unsigned long long)s->oversize, GX_SMEM_MAX_WIDTH, GX_SMEM_MAX_WIDTH);
    return ferror(f) ? GX_EIO : GX_OK;
}

int gx_smem_write_json(const gx_smem *s, FILE *f)
{
    gx_smem_stats st;
    gx_smem_get_stats(s, UINT32_MAX, &st);
    const gx_smem_cfg *c = &s->cfg;
    fprintf(f, "{\"banks\": %u, \"bank_bytes\": %u, \"transfer_bytes\": %u, \"broadcast\": %s, ",
            c->banks, c->bank_bytes, c->transfer_bytes, c->broadcast ? "true" : "false");
    fprintf(f, "\"accesses\": %llu, \"reads\": %llu, \"writes\": %llu, \"lanes\": %llu, "
               "\"transfers\": %llu, \"conflicted\": %llu, \"oversize\": %llu, \"by_degree\": {",
            (unsigned long long)st.accesses, (unsigned long long)st.reads,
            (unsigned long long)st.writes, (unsigned long long)st.lanes,
            (unsigned long long)st.transfers, (unsigned long long)st.conflicted,
            (unsigned long long)s->oversize);
    size_t last = last_degree(&st);
    const char *sep = "";
    for (size_t d = 1; d <= last; d++)
        if (st.by_degree[d]) {
            fprintf(f, "%s\"%zu\": %llu", sep, d, (unsigned long long)st.by_degree[d]);
            sep = ", ";
        }
    fprintf(f, "}, \"cycles\": %.3f}", st.cycles);
    return ferror(f) ? GX_EIO : GX_OK;
}
