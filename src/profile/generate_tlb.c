/* generate_tlb.c - the hidden translation hierarchy of a generated profile
 * (gx_generate with opts.translation; see generate.h for the ranges).
 *
 * Notes:
 * - Drawn from an rng stream of its own (seeded from the seed alone), so a
 *   seed's other fields are what they are without translation.
 * - The arena's translation page is the 2 MiB allocation granule
 *   (default_page_bytes = memory.page_bytes); page sizes 4 KiB, 64 KiB and
 *   2 MiB; Hopper's walk levels [1, 9, 9, 9, 8, 9] or Vega's [9, 9, 9, 9].
 * - Levels: 1 to 3; entries = sets x ways with a power-of-two number of
 *   sets (fully associative up to 64 entries), 8 to 8192 entries; an entry
 *   covers 2, 4, 8, 16 or 32 MiB (1 to 16 pages of 2 MiB); each level holds
 *   at least LEVEL_RATIO times the entries and the bytes of the one before
 *   (a level a chase cannot reach past the one before it is not a level a
 *   timing can see); the last level's reach stays within what one
 *   translation chase of GX_XCHASE_MAX_STEPS at 3 pages per step covers
 *   (MAX_LAST_BYTES), so its end is visible; per-SM levels hold at most
 *   MAX_SM_ENTRIES (the model keeps one instance per SM).
 * - Set index: a level of more than one set is xor (tlb.levels[].index)
 *   with probability XOR_FRACTION, else modulo (written "modulo"); a fully
 *   associative level leaves it absent. Drawn from a second stream of its
 *   own (seeded from the seed alone, one draw per level drawn), so a
 *   seed's other fields are what they were before the index existed
 *   whenever its drawn geometry was accepted then. A level after an xor
 *   level is xor too when it has sets: the stage counts a modulo level's
 *   ways in one-set chases at power-of-two strides, which an xor level
 *   before it holds whole (its capacity in pages is the same at every
 *   power-of-two stride from its reach up).
 * - Ways: a modulo level has more ways than the one before (with fewer it
 *   hides behind that level in the one-set chases that count its ways: the
 *   stage would need eviction pages for the level before, not built). An
 *   xor level may have fewer (the H200's second level: 8 ways behind 16):
 *   the stage counts its ways from the pages that miss just past its
 *   capacity at stride = its reach, chases of about its entries, which
 *   hold LEVEL_RATIO times what the level before holds at that stride.
 * - Sharing: level 0 per SM or per TPC (2 SMs); deeper levels as wide or
 *   wider (TPC, GPC of 6-18 SMs, at most half the GPU, or the GPU).
 *   sms_per_tpc / sms_per_gpc are set only when a level uses them.
 * - Latencies: level 0 hit 0-20 cycles (it adds to every access: no chase
 *   can tell it from the L2 hit), deeper levels 8-60; miss_cycles of a
 *   level = the next level's hit latency (what a chase sees), the last
 *   level's left absent (the walk's cost depends on what the page-walk
 *   caches and the L2 hold). Policy LRU. Walker: 4-64 walkers, reads at a
 *   fixed 40-300 cycles or through the L2; PWC and neighbour PWC each on
 *   or off (16-256 entries, 2-8 cycles a hit); 32-128 byte fetches. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpuxray/rng.h"
#include "generate_internal.h"

#define LEVEL_RATIO 4
#define MIN_ENTRIES 8
#define MAX_ENTRIES 8192
#define MAX_SM_ENTRIES 2048
#define MAX_FULLY_ASSOC 64
#define MAX_LAST_BYTES (96ULL << 30)
#define GRANULE (2ULL << 20)
/* Of the levels with sets drawn, the xor share: about 40 % of those
 * accepted are xor (an xor level may have fewer ways, so more xor draws
 * pass; a level after an xor level is xor). */
#define XOR_FRACTION 0.25

static uint64_t ur(gx_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + gx_rng_below(r, hi - lo + 1);
}

/* One level's geometry above (entries, bytes) of the previous level; its
 * set index xor when xor_draw (a uniform of the index stream) falls under
 * XOR_FRACTION or the previous level is xor, and the level has sets. */
static int draw_geometry(gx_rng *r, double xor_draw, const gx_tlb_level_cfg *prev,
                         gx_tlb_level_cfg *l)
{
    static const uint32_t ways_opts[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    const int first = prev == NULL;
    const uint32_t prev_entries = first ? 0 : prev->entries;
    const uint64_t prev_bytes = first ? 0 : (uint64_t)prev->entries * prev->entry_bytes;
    uint32_t lo = first ? MIN_ENTRIES : prev_entries * LEVEL_RATIO;
    if (lo > MAX_ENTRIES)
        return 0;
    /* log-uniform entries in [lo, min(max, lo * 64)] */
    uint32_t hi = lo * 64u < MAX_ENTRIES ? lo * 64u : MAX_ENTRIES;
    double e = exp(log((double)lo) + (log((double)hi) - log((double)lo)) * gx_rng_uniform(r));
    uint32_t ways, sets;
    if (e <= MAX_FULLY_ASSOC && gx_rng_uniform(r) < 0.3) {
        ways = (uint32_t)lround(e);
        sets = 1;
    } else {
        ways = ways_opts[gx_rng_below(r, sizeof ways_opts / sizeof ways_opts[0])];
        int k = (int)lround(log2(e / ways));
        if (k < 1)
            return 0;
        sets = 1u << k;
    }
    uint64_t entries = (uint64_t)sets * ways;
    if (entries < lo || entries > MAX_ENTRIES)
        return 0;
    uint64_t reach = GRANULE << gx_rng_below(r, 5);
    const int prev_xor = !first && prev->set_index == GX_TLB_INDEX_XOR;
    const int xor = sets > 1 && (xor_draw < XOR_FRACTION || prev_xor);
    if (!first && (entries * reach < prev_bytes * LEVEL_RATIO || (!xor && ways <= prev->ways)))
        return 0;
    l->set_index = sets == 1 ? GX_TLB_INDEX_DEFAULT : xor ? GX_TLB_INDEX_XOR
                                                          : GX_TLB_INDEX_MODULO;
    l->entries = (uint32_t)entries;
    l->ways = ways;
    l->entry_bytes = reach;
    return 1;
}

static void draw_sharing(gx_rng *r, gx_profile *p, gx_tlb_cfg *t)
{
    uint32_t gpc_opts[] = {6, 8, 10, 12, 14, 16, 18}, n_gpc = 0;
    for (uint32_t i = 0; i < 7; i++)
        if (gpc_opts[i] * 2 <= p->device.sm_count)
            gpc_opts[n_gpc++] = gpc_opts[i];
    gx_sharing prev = GX_SHARE_SM;
    for (int j = 0; j < t->n_levels; j++) {
        gx_sharing s;
        if (j == 0)
            s = gx_rng_uniform(r) < 0.7 ? GX_SHARE_SM : GX_SHARE_TPC;
        else
            s = (gx_sharing)ur(r, (uint64_t)prev, GX_SHARE_GPU);
        if (s == GX_SHARE_GPC && !n_gpc)
            s = GX_SHARE_GPU;
        if (s == GX_SHARE_SM && t->levels[j].entries > MAX_SM_ENTRIES)
            s = GX_SHARE_TPC;
        t->levels[j].sharing = s;
        prev = s;
    }
    for (int j = 0; j < t->n_levels; j++) {
        if (t->levels[j].sharing == GX_SHARE_TPC)
            t->sms_per_tpc = 2;
        if (t->levels[j].sharing == GX_SHARE_GPC)
            t->sms_per_gpc = gpc_opts[gx_rng_below(r, n_gpc)];
    }
}

static void draw_small_cache(gx_rng *r, gx_small_cache_cfg *c)
{
    if (gx_rng_uniform(r) < 0.5)
        return;
    c->present = 1;
    c->entries = 16u << gx_rng_below(r, 5);
    c->ways = c->entries < 16 ? c->entries : 16;
    snprintf(c->policy, sizeof c->policy, "lru");
    c->hit_latency_cycles = (double)ur(r, 2, 8);
}

static void draw_walker(gx_rng *r, const gx_profile *p, gx_tlb_cfg *t)
{
    static const uint32_t level_hopper[] = {1, 9, 9, 9, 8, 9}, level_vega[] = {9, 9, 9, 9};
    t->n_page_sizes = 3;
    t->page_sizes[0] = 4096;
    t->page_sizes[1] = 65536;
    t->page_sizes[2] = GRANULE;
    t->default_page_bytes = GRANULE;
    if (gx_rng_uniform(r) < 0.5) {
        t->n_level_bits = 6;
        memcpy(t->level_bits, level_hopper, sizeof level_hopper);
    } else {
        t->n_level_bits = 4;
        memcpy(t->level_bits, level_vega, sizeof level_vega);
    }
    t->pte_bytes = 8;
    uint32_t line = p->l2.line_bytes ? p->l2.line_bytes : 128;
    t->walker.fetch_bytes = 32u << gx_rng_below(r, 3);
    if (t->walker.fetch_bytes > line)
        t->walker.fetch_bytes = line;
    t->walker.walkers = (uint32_t)ur(r, 4, 64);
    t->walker.queue_entries = 0;
    t->walker.fixed_read_cycles = gx_rng_uniform(r) < 0.5 ? (double)ur(r, 40, 300) : NAN;
    draw_small_cache(r, &t->walker.pwc);
    draw_small_cache(r, &t->walker.neighbour_pwc);
    t->coalescer.window_cycles = 0;
    t->coalescer.max_granule_bytes = GRANULE;
}

int gx_generate_tlb(uint64_t seed, gx_profile *p)
{
    gx_rng r, ri; /* ri: the set indexes */
    gx_rng_seed(&r, gx_mix64(seed ^ 0x746c62686965ULL));
    gx_rng_seed(&ri, gx_mix64(seed ^ 0x746c62696478ULL));
    gx_tlb_cfg *t = &p->tlb;
    for (int attempt = 0; attempt < 10000; attempt++) {
        gx_tlb_cfg_init(t);
        t->present = 1;
        t->n_levels = 1 + (int)gx_rng_below(&r, 3);
        int ok = 1;
        for (int j = 0; j < t->n_levels && ok; j++) {
            gx_tlb_level_cfg *l = &t->levels[j];
            ok = draw_geometry(&r, gx_rng_uniform(&ri), j ? &t->levels[j - 1] : NULL, l);
            snprintf(l->name, sizeof l->name, "L%d", j + 1);
            snprintf(l->policy, sizeof l->policy, "lru");
        }
        const gx_tlb_level_cfg *last = &t->levels[t->n_levels - 1];
        if (!ok || (uint64_t)last->entries * last->entry_bytes > MAX_LAST_BYTES)
            continue;
        for (int j = 0; j < t->n_levels; j++)
            t->levels[j].hit_latency_cycles = j ? (double)ur(&r, 8, 60) : (double)ur(&r, 0, 20);
        for (int j = 0; j + 1 < t->n_levels; j++)
            t->levels[j].miss_cycles = t->levels[j + 1].hit_latency_cycles;
        draw_sharing(&r, p, t);
        draw_walker(&r, p, t);
        return 1;
    }
    return 0;
}
