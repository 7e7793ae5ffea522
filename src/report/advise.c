/* advise.c - the advisor's engine (advise.h): coalesce each warp
 * instruction's lanes into sectors, map each sector's line to (slice, set)
 * with the profile's hashes, and accumulate the load per slice and per
 * partition (whole run and per wave of one warp instruction per SM), the
 * sector efficiency and the distinct lines per set; the array patterns and
 * the padding search; the persisting-window hit ratio.
 *
 * Notes:
 * - Physical addresses: when the slice hash uses bits at or above the page
 *   (a reference profile) each page gets a frame from the model's placement
 *   (gx_placement, the profile's frames_seed), as `gpuxray sim` does; a
 *   measured hash sees only bits below the page, so the address is used as
 *   is: within a page exact, and every page assumed to spread like the
 *   measured one (the result's assumption says so).
 * - A partition is slice / (slices / partitions), as in the model.
 * - Loads are compared with each slice's share of the address space (the
 *   table's entries per class; equal shares for a linear hash): a measured
 *   table whose classes merged two slices expects twice the load there.
 * - Distinct lines are counted in an open-addressing table of at most
 *   ADV_MAX_LINES lines; beyond it set counts cover the lines seen first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adv_int.h"
#include "gpuxray/bits.h"
#include "gpuxray/hash.h"
#include "gpuxray/placement.h"
#include "gpuxray/rng.h"

#define ADV_MAX_LINES (1u << 22)     /* distinct lines tracked for set counts (64 MiB table) */
#define ADV_PHYS_BYTES (64ULL << 30) /* the trace simulator's default physical space */

static int hash_above_page(const gx_hash_fn *h, uint64_t page)
{
    uint64_t above = ~(page - 1);
    for (int i = 0; i < h->n_masks; i++)
        if (h->masks[i] & above)
            return 1;
    return 0;
}

/* Each slice's share: table entries per class, else equal. */
static void shares(adv_state *s)
{
    const gx_hash_fn *h = &s->p->l2.slice_hash;
    uint64_t n = h->table && h->n_masks < 31 ? 1ULL << h->n_masks : 0;
    for (uint32_t i = 0; i < s->slices; i++)
        s->slice_w[i] = n ? 0 : 1.0 / s->slices;
    for (uint64_t i = 0; i < n; i++)
        if (h->table[i] < s->slices)
            s->slice_w[h->table[i]] += 1.0 / (double)n;
    for (uint32_t i = 0; i < s->slices; i++)
        s->part_w[i / (s->slices / s->parts)] += s->slice_w[i];
}

int adv_init(adv_state *s, const gx_profile *p, uint32_t sms, gx_msg *msg)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    if (!p->l2.slice_hash.present || !p->l2.line_bytes)
        return gx_fail(msg, GX_EINVAL,
                       "advise: the profile has no l2.hash.slice or l2.line_bytes (needed to map "
                       "addresses to slices)");
    s->line = p->l2.line_bytes;
    s->sector = p->l2.sector_bytes && p->l2.sector_bytes <= s->line ? p->l2.sector_bytes : s->line;
    s->slices = (uint32_t)gx_hash_range(&p->l2.slice_hash);
    if (p->l2.slices > s->slices)
        s->slices = p->l2.slices;
    s->parts = p->l2.partitions && s->slices % p->l2.partitions == 0 ? p->l2.partitions : 1;
    s->sets = p->l2.set_hash.present ? (uint32_t)gx_hash_range(&p->l2.set_hash) : 0;
    s->ways = p->l2.ways;
    s->sms = sms ? sms : (p->device.sm_count ? p->device.sm_count : 1);
    uint64_t page = p->memory.page_bytes ? p->memory.page_bytes : (2u << 20);
    if (hash_above_page(&p->l2.slice_hash, page) ||
        (p->l2.set_hash.present && hash_above_page(&p->l2.set_hash, page))) {
        uint64_t seed = p->sim.present && p->sim.frames_seed ? p->sim.frames_seed : 1;
        int rc = gx_placement_new(page, ADV_PHYS_BYTES, seed, &s->pl, msg);
        if (rc != GX_OK)
            return rc;
        int contiguous = p->sim.present && p->sim.contiguous_frames == 1;
        if (contiguous)
            gx_placement_set_contiguous(s->pl, 1);
        snprintf(s->assumption, sizeof s->assumption,
                 "pages placed on physical frames by the model's placement (frames seed %llu%s)",
                 (unsigned long long)seed, contiguous ? ", consecutive frames" : "");
    } else {
        snprintf(s->assumption, sizeof s->assumption,
                 "the hash sees physical bits below the %llu-byte page only: addresses used as "
                 "is, every page assumed to spread like the measured one",
                 (unsigned long long)page);
    }
    s->slice_n = calloc(s->slices, sizeof *s->slice_n);
    s->slice_w = calloc(s->slices, sizeof *s->slice_w);
    s->part_w = calloc(s->parts, sizeof *s->part_w);
    s->wave_n = calloc(s->slices, sizeof *s->wave_n);
    s->part_n = calloc(s->parts, sizeof *s->part_n);
    s->wpart_n = calloc(s->parts, sizeof *s->wpart_n);
    if (s->sets) {
        s->set_lines = calloc((size_t)s->slices * s->sets, sizeof *s->set_lines);
        s->tab_cap = 1u << 16;
        s->tab = calloc(s->tab_cap, sizeof *s->tab);
    }
    if (!s->slice_n || !s->wave_n || !s->part_n || !s->wpart_n || !s->slice_w || !s->part_w ||
        (s->sets && (!s->set_lines || !s->tab))) {
        adv_free(s);
        return gx_fail(msg, GX_ENOMEM, "advise: out of memory");
    }
    shares(s);
    return GX_OK;
}

void adv_free(adv_state *s)
{
    gx_placement_free(s->pl);
    free(s->slice_n);
    free(s->slice_w);
    free(s->part_w);
    free(s->wave_n);
    free(s->part_n);
    free(s->wpart_n);
    free(s->set_lines);
    free(s->tab);
    memset(s, 0, sizeof *s);
}

/* 1 when the line was not seen before (table insert); 0 seen or table full. */
static int new_line(adv_state *s, uint64_t line_pa)
{
    uint64_t key = line_pa + 1; /* 0 marks an empty slot */
    if (s->tab_n * 2 >= s->tab_cap) {
        if (s->tab_cap >= ADV_MAX_LINES * 2) {
            s->tab_full = 1;
            return 0;
        }
        uint64_t cap = s->tab_cap * 2, *t = calloc(cap, sizeof *t);
        if (!t) {
            s->tab_full = 1;
            return 0;
        }
        for (uint64_t i = 0; i < s->tab_cap; i++)
            if (s->tab[i]) {
                uint64_t h = (s->tab[i] * 0x9E3779B97F4A7C15ULL) & (cap - 1);
                while (t[h])
                    h = (h + 1) & (cap - 1);
                t[h] = s->tab[i];
            }
        free(s->tab);
        s->tab = t;
        s->tab_cap = cap;
    }
    uint64_t h = (key * 0x9E3779B97F4A7C15ULL) & (s->tab_cap - 1);
    while (s->tab[h]) {
        if (s->tab[h] == key)
            return 0;
        h = (h + 1) & (s->tab_cap - 1);
    }
    s->tab[h] = key;
    s->tab_n++;
    return 1;
}

/* Busiest over expected: max over classes of n[i] / max(1, total * w[i]). */
static double load_ratio(const uint64_t *n, const double *w, uint32_t k, uint64_t total)
{
    double worst = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (!n[i])
            continue;
        double expect = (double)total * w[i];
        double r = (double)n[i] / (expect > 1 ? expect : 1);
        worst = r > worst ? r : worst;
    }
    return worst;
}

static void close_wave(adv_state *s)
{
    if (!s->wave_sectors)
        return;
    double im = load_ratio(s->wave_n, s->slice_w, s->slices, s->wave_sectors);
    s->imb_sum += im;
    s->pimb_sum += load_ratio(s->wpart_n, s->part_w, s->parts, s->wave_sectors);
    s->imb_worst = im > s->imb_worst ? im : s->imb_worst;
    memset(s->wave_n, 0, s->slices * sizeof *s->wave_n);
    memset(s->wpart_n, 0, s->parts * sizeof *s->wpart_n);
    s->waves++;
    s->wave_sectors = 0;
}

/* One sector request (an L2 access) at virtual address va. */
static void sector_access(adv_state *s, uint64_t va)
{
    const gx_profile *p = s->p;
    uint64_t pa = s->pl ? gx_placement_translate(s->pl, va) : va;
    uint64_t line_pa = pa / s->line * s->line;
    uint32_t sl = (uint32_t)gx_hash_eval(&p->l2.slice_hash, line_pa);
    if (sl >= s->slices)
        sl %= s->slices;
    uint32_t part = sl / (s->slices / s->parts);
    s->slice_n[sl]++;
    s->wave_n[sl]++;
    s->part_n[part]++;
    s->wpart_n[part]++;
    s->wave_sectors++;
    s->sectors++;
    if (s->sets && new_line(s, line_pa)) {
        uint32_t set = (uint32_t)(gx_hash_eval(&p->l2.set_hash, line_pa) % s->sets);
        s->set_lines[(size_t)sl * s->sets + set]++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct lane_rng {
    uint64_t a, e; /* [a, e) */
} lane_rng;

static int cmp_rng(const void *a, const void *b)
{
    return cmp_u64(&((const lane_rng *)a)->a, &((const lane_rng *)b)->a);
}

void adv_warp(adv_state *s, const uint64_t *addr, const uint32_t *size, uint32_t n)
{
    if (!n)
        return;
    /* useful bytes: the union of the lanes' byte ranges */
    lane_rng lr[ADV_MAX_LANES];
    uint64_t sec[ADV_MAX_LANES * 8];
    uint32_t ns = 0, nl = n < ADV_MAX_LANES ? n : ADV_MAX_LANES;
    for (uint32_t i = 0; i < nl; i++) {
        uint64_t z = size[i] ? size[i] : 1;
        lr[i].a = addr[i];
        lr[i].e = addr[i] > UINT64_MAX - z ? UINT64_MAX : addr[i] + z;
    }
    qsort(lr, nl, sizeof *lr, cmp_rng);
    uint64_t covered = 0, end = 0;
    for (uint32_t i = 0; i < nl; i++) {
        uint64_t a = lr[i].a, e = lr[i].e;
        uint64_t from = a > end ? a : end;
        if (e > from)
            covered += e - from;
        end = e > end ? e : end;
        for (uint64_t sct = a / s->sector; sct <= (e - 1) / s->sector && ns < ADV_MAX_LANES * 8; sct++)
            sec[ns++] = sct;
    }
    qsort(sec, ns, sizeof *sec, cmp_u64);
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < ns; i++)
        if (i == 0 || sec[i] != sec[i - 1]) {
            sector_access(s, sec[i] * s->sector);
            distinct++;
        }
    s->useful += (double)covered;
    s->moved += (double)distinct * s->sector;
    s->lanes += nl;
    s->warp_insts++;
    if (++s->in_wave >= s->sms) {
        close_wave(s);
        s->in_wave = 0;
    }
}

/* The busiest / expected that uniform random addresses give for waves of
 * `per_wave` sectors (balls into bins with the slices' shares): the
 * baseline a layout is compared with. Monte Carlo, fixed seed. */
#define ADV_BASELINE_WAVES 64
static double random_baseline(const adv_state *s, double per_wave)
{
    uint64_t n = (uint64_t)llround(per_wave);
    if (n == 0)
        return NAN;
    double *cdf = malloc(s->slices * sizeof *cdf);
    uint64_t *cnt = calloc(s->slices, sizeof *cnt);
    double sum = 0, acc = 0;
    if (!cdf || !cnt) {
        free(cdf);
        free(cnt);
        return NAN;
    }
    for (uint32_t i = 0; i < s->slices; i++)
        cdf[i] = (acc += s->slice_w[i]);
    gx_rng rng;
    gx_rng_seed(&rng, 1);
    for (int w = 0; w < ADV_BASELINE_WAVES; w++) {
        memset(cnt, 0, s->slices * sizeof *cnt);
        for (uint64_t k = 0; k < n; k++) {
            double u = gx_rng_uniform(&rng) * acc;
            uint32_t lo = 0, hi = s->slices - 1;
            while (lo < hi) {
                uint32_t mid = (lo + hi) / 2;
                if (cdf[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            cnt[lo]++;
        }
        sum += load_ratio(cnt, s->slice_w, s->slices, n);
    }
    free(cdf);
    free(cnt);
    return sum / ADV_BASELINE_WAVES;
}

void adv_finish(adv_state *s, gx_adv_result *r)
{
    close_wave(s);
    memset(r, 0, sizeof *r);
    r->warp_insts = s->warp_insts;
    r->lanes = s->lanes;
    r->sectors = s->sectors;
    r->useful_bytes = s->useful;
    r->moved_bytes = s->moved;
    r->sector_efficiency = s->moved > 0 ? s->useful / s->moved : NAN;
    r->slices = s->slices;
    r->partitions = s->parts;
    r->sms = s->sms;
    r->slice_max_mean = s->sectors ? load_ratio(s->slice_n, s->slice_w, s->slices, s->sectors) : NAN;
    r->partition_max_mean = s->sectors ? load_ratio(s->part_n, s->part_w, s->parts, s->sectors) : NAN;
    r->wave_slice_imbalance = s->waves ? s->imb_sum / (double)s->waves : NAN;
    r->wave_partition_imbalance = s->waves ? s->pimb_sum / (double)s->waves : NAN;
    r->worst_wave_slice_imbalance = s->waves ? s->imb_worst : NAN;
    r->random_wave_slice_imbalance =
        s->waves ? random_baseline(s, (double)s->sectors / (double)s->waves) : NAN;
    r->ways = s->ways;
    if (s->sets) {
        r->have_sets = 1;
        r->lines = s->tab_n;
        uint64_t n = (uint64_t)s->slices * s->sets, used = 0, over = 0;
        uint32_t m = 0;
        for (uint64_t i = 0; i < n; i++) {
            used += s->set_lines[i] > 0;
            over += s->ways && s->set_lines[i] > s->ways;
            m = s->set_lines[i] > m ? s->set_lines[i] : m;
        }
        r->set_count = n;
        r->sets_over_ways = over;
        r->set_lines_max = m;
        r->set_lines_mean = (double)s->tab_n / (double)n;
        (void)used;
    }
    r->complete = !s->stopped;
    snprintf(r->assumption, sizeof r->assumption, "%s%s", s->assumption,
             s->tab_full ? "; set counts cover the first 4M distinct lines" : "");
}
