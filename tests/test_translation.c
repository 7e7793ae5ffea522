/* test_translation.c - address translation in the memory system (memsys.h,
 * tlb.h, walker.h, coalescer.h, vmem.h): one hand-derived outcome per
 * mechanism, replayed exactly.
 *
 * The machine: the seed card's L2 with a Vega-like page table (9, 9, 9, 9
 * bits over 4 KiB: PDE2 -> PDE1 -> PDE0 -> PTE), 8-byte PTEs, sizes 4 KiB,
 * 64 KiB, 2 MiB, 1 GiB; profiles are built in C here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/memsys.h"
#include "gpuxray/profile.h"
#include "gpuxray/trace.h"
#include "testutil.h"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

static void set_level(gx_tlb_level_cfg *l, const char *name, uint32_t entries, uint32_t ways,
                      double lat)
{
    gx_tlb_level_init(l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->entries = entries;
    l->ways = ways;
    l->entry_bytes = 4 * KiB;
    l->sharing = GX_SHARE_SM;
    l->hit_latency_cycles = lat;
    snprintf(l->policy, sizeof l->policy, "lru");
}

static void set_pwc(gx_small_cache_cfg *c, uint32_t entries, uint32_t ways, double lat)
{
    gx_small_cache_init(c);
    c->present = 1;
    c->entries = entries;
    c->ways = ways;
    c->hit_latency_cycles = lat;
    snprintf(c->policy, sizeof c->policy, "lru");
}

/* The seed card with gem5's Vega defaults in a tlb section. */
static gx_profile *vega(uint32_t fetch_bytes, uint64_t default_page)
{
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m),
                     GX_OK);
    gx_tlb_cfg *t = &p->tlb;
    gx_tlb_cfg_init(t);
    t->present = 1;
    const uint64_t sizes[] = {4 * KiB, 64 * KiB, 2 * MiB, 1 * GiB};
    t->n_page_sizes = 4;
    memcpy(t->page_sizes, sizes, sizeof sizes);
    t->default_page_bytes = default_page;
    t->n_level_bits = 4;
    for (int i = 0; i < 4; i++)
        t->level_bits[i] = 9;
    t->pte_bytes = 8;
    t->n_levels = 3;
    set_level(&t->levels[0], "L1", 32, 32, 1);
    set_level(&t->levels[1], "L2", 4096, 32, 69);
    set_level(&t->levels[2], "L3", 8192, 32, 150);
    t->walker.fetch_bytes = fetch_bytes;
    t->walker.walkers = 8;
    t->walker.queue_entries = 0;
    t->walker.fixed_read_cycles = NAN;
    set_pwc(&t->walker.pwc, 64, 64, 1);
    set_pwc(&t->walker.neighbour_pwc, 256, 64, 1);
    t->coalescer.window_cycles = 0;
    t->coalescer.max_granule_bytes = 2 * MiB;
    return p;
}

static gx_memsys *mk(const gx_profile *p)
{
    gx_memsys_cfg c = {0, 1, 1, 7, 64 * GiB};
    gx_memsys *ms = NULL;
    gx_msg m;
    int rc = gx_memsys_new(p, &c, &ms, &m);
    if (rc != GX_OK)
        print_error("gx_memsys_new: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    return ms;
}

/* One request alone at cycle t; returns its result. */
static gx_memsys_res one(gx_memsys *ms, uint64_t va, double t)
{
    gx_memsys_req q = {va, 0, 4, GX_L2_READ};
    gx_memsys_res r;
    gx_memsys_access_group(ms, &q, 1, t, &r);
    return r;
}

static gx_translation_stats stats(const gx_memsys *ms)
{
    gx_translation_stats s;
    assert_int_equal(gx_memsys_get_translation_stats(ms, &s), 1);
    return s;
}

/* 4096 pages of 4 KiB in order: the leaf level (3) is read once per fetch
 * block of 16 PTEs with 128-byte fetches, once per page with 8-byte ones;
 * above it, one read per new entry (8 PDE0 entries cover 16 MiB, 1 PDE1,
 * 1 PDE2) thanks to the PWC. */
static void test_leaf_reads_per_fetch(void **state)
{
    (void)state;
    const uint32_t fetch[2] = {128, 8};
    const uint64_t want_leaf[2] = {256, 4096};
    for (int k = 0; k < 2; k++) {
        gx_profile *p = vega(fetch[k], 4 * KiB);
        gx_memsys *ms = mk(p);
        for (uint64_t pg = 0; pg < 4096; pg++)
            (void)one(ms, (1ULL << 40) + pg * 4 * KiB, 0);
        gx_translation_stats s = stats(ms);
        assert_int_equal(s.walker.reads_by_level[3], want_leaf[k]);
        assert_int_equal(s.walker.reads_by_level[2], 8);
        assert_int_equal(s.walker.reads_by_level[1], 1);
        assert_int_equal(s.walker.reads_by_level[0], 1);
        assert_int_equal(s.faults, 0);
        gx_memsys_free(ms);
        gx_profile_free(p);
    }
}

/* The PWC holds no leaf: 2 MiB pages end at PDE0 (level 2); with a
 * one-entry TLB and no neighbour PWC, pages A, B, A walk three times: the
 * PWC serves levels 0 and 1 after the first walk (2 insertions, 4 hits) and
 * never level 2, which is read every time. */
static void test_pwc_never_holds_a_leaf(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 2 * MiB);
    p->tlb.n_levels = 1;
    set_level(&p->tlb.levels[0], "L1", 1, 1, 1);
    p->tlb.walker.neighbour_pwc.present = 0;
    gx_memsys *ms = mk(p);
    const uint64_t a = 1ULL << 40, b = a + 2 * MiB;
    (void)one(ms, a, 0);
    (void)one(ms, b, 0);
    (void)one(ms, a, 0);
    gx_translation_stats s = stats(ms);
    assert_int_equal(s.walker.walks, 3);
    assert_int_equal(s.walker.pwc_insertions, 2);
    assert_int_equal(s.walker.pwc_hits, 4);
    assert_int_equal(s.walker.pwc_hits_by_level[2], 0);
    assert_int_equal(s.walker.reads_by_level[2], 3);
    assert_int_equal(s.walker.page_table_reads, 5);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

/* Every other 4 KiB page mapped (default unmapped): each leaf fetch of 16
 * PTEs holds 8 valid and 8 invalid; touching the 2048 mapped pages of 16
 * MiB in order reads 256 blocks and skips exactly 256 * 8 invalid
 * neighbours; an unmapped page faults without an L2 access. */
static void test_invalid_neighbours_skipped(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 0);
    gx_memsys *ms = mk(p);
    const uint64_t base = 1ULL << 40;
    for (uint64_t pg = 0; pg < 4096; pg += 2)
        assert_int_equal(gx_memsys_map(ms, base + pg * 4 * KiB, 4 * KiB, 4 * KiB, NULL), GX_OK);
    for (uint64_t pg = 0; pg < 4096; pg += 2)
        assert_int_equal(one(ms, base + pg * 4 * KiB, 0).fault, 0);
    gx_translation_stats s = stats(ms);
    assert_int_equal(s.walker.reads_by_level[3], 256);
    assert_int_equal(s.walker.pwc2_invalid_neighbours_skipped, 256 * 8);
    gx_memsys_res r = one(ms, base + 4 * KiB, 0);
    assert_int_equal(r.fault, 1);
    assert_int_equal(r.sectors, 0);
    assert_true(r.translation_cycles > 0);
    assert_int_equal(stats(ms).faults, 1);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

/* Any address inside a 2 MiB mapping hits the entry its base installed. */
static void test_2m_entry_covers_its_page(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 2 * MiB);
    gx_memsys *ms = mk(p);
    const uint64_t base = (1ULL << 40) + 6 * MiB;
    (void)one(ms, base, 0);
    uint64_t x = 12345;
    for (int i = 0; i < 100; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        gx_memsys_res r = one(ms, base + (x >> 11) % (2 * MiB), 0);
        assert_true(r.translation_cycles == 1.0); /* an L1 hit */
    }
    gx_translation_stats s = stats(ms);
    assert_int_equal(s.level[0].hits, 100);
    assert_int_equal(s.level[0].hits_by_size[2], 100);
    assert_int_equal(s.walker.walks, 1);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

/* One level of 8 sets: 16 pages 8 pages apart fill one set of a modulo
 * index (8 ways: a cyclic pass misses all 16) and two pages per set of the
 * xor index (page k's entry 8k folds to (k & 7) ^ (k >> 3): a second pass
 * hits all 16). With 1 way, pages 0 and 9 share set 0 under xor (1 ^ 1 = 0)
 * and sets 0 and 1 under modulo. */
static uint64_t l1_hits_masked(gx_tlb_index idx, uint32_t ways, const uint64_t *pages, int n,
                               const uint64_t *masks)
{
    gx_profile *p = vega(128, 4 * KiB);
    p->tlb.n_levels = 1;
    set_level(&p->tlb.levels[0], "L1", 8 * ways, ways, 1);
    p->tlb.levels[0].set_index = idx;
    if (masks) {
        p->tlb.levels[0].n_set_masks = 3;
        memcpy(p->tlb.levels[0].set_masks, masks, 3 * sizeof *masks);
    }
    gx_msg vm;
    assert_int_equal(gx_profile_validate(p, &vm), GX_OK);
    gx_memsys *ms = mk(p);
    const uint64_t base = 1ULL << 40;
    for (int i = 0; i < n; i++)
        (void)one(ms, base + pages[i] * 4 * KiB, 0);
    uint64_t hits = stats(ms).level[0].hits;
    gx_memsys_free(ms);
    gx_profile_free(p);
    return hits;
}

static uint64_t l1_hits_of(gx_tlb_index idx, uint32_t ways, const uint64_t *pages, int n)
{
    return l1_hits_masked(idx, ways, pages, n, NULL);
}

static void test_xor_index(void **state)
{
    (void)state;
    uint64_t pages[32];
    for (int i = 0; i < 32; i++)
        pages[i] = 8 * (uint64_t)(i % 16);
    assert_int_equal(l1_hits_of(GX_TLB_INDEX_MODULO, 8, pages, 32), 0);
    assert_int_equal(l1_hits_of(GX_TLB_INDEX_DEFAULT, 8, pages, 32), 0);
    assert_int_equal(l1_hits_of(GX_TLB_INDEX_XOR, 8, pages, 32), 16);
    const uint64_t pair[] = {0, 9, 0};
    assert_int_equal(l1_hits_of(GX_TLB_INDEX_MODULO, 1, pair, 3), 1);
    assert_int_equal(l1_hits_of(GX_TLB_INDEX_XOR, 1, pair, 3), 0);
    /* set_masks: bits 0, 1, 2 alone are the modulo index; the masks of the
     * 3-bit fold (bit i of every chunk, 16 chunks of e) are the fold */
    const uint64_t mod_masks[] = {1, 2, 4};
    uint64_t fold_masks[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 16; c++)
            fold_masks[i] |= 1ULL << (3 * c + i);
    assert_int_equal(l1_hits_masked(GX_TLB_INDEX_XOR, 8, pages, 32, mod_masks), 0);
    assert_int_equal(l1_hits_masked(GX_TLB_INDEX_XOR, 8, pages, 32, fold_masks), 16);
    assert_int_equal(l1_hits_masked(GX_TLB_INDEX_XOR, 1, pair, 3, fold_masks), 0);
    /* sets not a power of two: refused, naming the field */
    gx_profile *p = vega(128, 4 * KiB);
    set_level(&p->tlb.levels[0], "L1", 24, 8, 1);
    p->tlb.levels[0].set_index = GX_TLB_INDEX_XOR;
    gx_msg m;
    assert_int_not_equal(gx_profile_validate(p, &m), GX_OK);
    assert_non_null(strstr(m.text, "tlb.levels[0].index"));
    /* masks without the xor index, or not one per set bit: refused */
    set_level(&p->tlb.levels[0], "L1", 64, 8, 1);
    p->tlb.levels[0].n_set_masks = 3;
    p->tlb.levels[0].set_masks[0] = 1;
    p->tlb.levels[0].set_masks[1] = 2;
    p->tlb.levels[0].set_masks[2] = 4;
    assert_int_not_equal(gx_profile_validate(p, &m), GX_OK);
    assert_non_null(strstr(m.text, "tlb.levels[0].set_masks"));
    p->tlb.levels[0].set_index = GX_TLB_INDEX_XOR;
    p->tlb.levels[0].n_set_masks = 2;
    assert_int_not_equal(gx_profile_validate(p, &m), GX_OK);
    assert_non_null(strstr(m.text, "tlb.levels[0].set_masks"));
    gx_profile_free(p);
}

/* tlb.hit_fills_entry: a deeper level's hit returns its whole entry. 2 MiB
 * pages, entries of 32 MiB (16 pages, all filled by one walk: a 128-byte
 * fetch holds 16 PTEs), L1 one entry, L2 64. A0 walks (both levels get
 * A's 16 pages), B0 walks (L1 now B), A1 misses L1 and hits L2, which
 * copies A's 16 pages into L1: A2 hits L1. Without the flag L1 gets A1
 * alone and A2 misses it (and hits L2). */
static void hits_after_copy(int fills, uint64_t want_l1, uint64_t want_l2)
{
    gx_profile *p = vega(128, 2 * MiB);
    p->tlb.n_levels = 2;
    p->tlb.hit_fills_entry = fills;
    set_level(&p->tlb.levels[0], "L1", 1, 1, 1);
    set_level(&p->tlb.levels[1], "L2", 64, 64, 10);
    p->tlb.levels[0].entry_bytes = p->tlb.levels[1].entry_bytes = 32 * MiB;
    gx_memsys *ms = mk(p);
    const uint64_t a = 1ULL << 40, b = a + 32 * MiB;
    const uint64_t seq[] = {a, b, a + 2 * MiB, a + 4 * MiB};
    for (int i = 0; i < 4; i++)
        (void)one(ms, seq[i], 0);
    gx_translation_stats st = stats(ms);
    assert_int_equal(st.walker.walks, 2);
    assert_int_equal(st.level[0].hits, want_l1);
    assert_int_equal(st.level[1].hits, want_l2);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

static void test_hit_fills_entry(void **state)
{
    (void)state;
    hits_after_copy(1, 1, 1);
    hits_after_copy(0, 0, 2);
    hits_after_copy(-1, 0, 2);
}

/* The page-size predictor (4 bits, from 0, predicts 2 MiB at >= 8): 20
 * instructions on 2 MiB pages mispredict exactly the first 8 (the counter
 * then climbs to 15 and stays); 20 more on 4 KiB pages mispredict exactly
 * 8 (15 -> 7: the hysteresis). */
static void test_size_predictor_hysteresis(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 0);
    gx_tlb_cfg *t = &p->tlb;
    t->n_regions = 2;
    t->regions[0] = (gx_va_region){1ULL << 40, 1 * GiB, 2 * MiB};
    t->regions[1] = (gx_va_region){(1ULL << 40) + 1 * GiB, 1 * GiB, 4 * KiB};
    gx_memsys *ms = mk(p);
    for (int i = 0; i < 20; i++)
        (void)one(ms, (1ULL << 40) + (uint64_t)i * 2 * MiB, 0);
    assert_int_equal(stats(ms).coalescer.size_mispredictions, 8);
    for (int i = 0; i < 20; i++)
        (void)one(ms, (1ULL << 40) + 1 * GiB + (uint64_t)i * 4 * KiB, 0);
    gx_translation_stats s = stats(ms);
    assert_int_equal(s.coalescer.size_mispredictions, 16);
    assert_int_equal(s.coalescer.size_predictions, 40);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

/* A 1 GiB mapping coalesces at the clamp granule (2 MiB): one instruction
 * of 32 requests over 8 chunks of 2 MiB of one 1 GiB page makes 8
 * translations, not 1 (the page's whole range) and not 32. */
static void test_1g_clamped_to_granule(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 0);
    p->tlb.n_regions = 1;
    p->tlb.regions[0] = (gx_va_region){4 * GiB, 1 * GiB, 1 * GiB};
    gx_memsys *ms = mk(p);
    gx_memsys_req q[32];
    gx_memsys_res r[32];
    for (uint32_t i = 0; i < 32; i++)
        q[i] = (gx_memsys_req){4 * GiB + (i % 8) * 2 * MiB + (i / 8) * 64 * KiB, 0, 4,
                               GX_L2_READ};
    gx_memsys_access_group(ms, q, 32, 0, r);
    gx_translation_stats s = stats(ms);
    assert_int_equal(s.coalescer.uncoalesced_accesses, 32);
    assert_int_equal(s.coalescer.coalesced_accesses, 8);
    assert_int_equal(s.walker.walks, 1);
    assert_int_equal(s.level[0].hits_by_size[3], 7);
    for (int i = 0; i < 32; i++)
        assert_int_equal(r[i].fault, 0);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

/* An invalidation empties both PWCs (and the TLBs): the next walk of a
 * page walked before hits neither and reads all four levels. */
static void test_invalidation_empties_pwcs(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 4 * KiB);
    gx_memsys *ms = mk(p);
    const uint64_t base = 1ULL << 40;
    (void)one(ms, base, 0);
    (void)one(ms, base + 4 * KiB, 0); /* TLB miss, neighbour PWC hit */
    gx_translation_stats s0 = stats(ms);
    assert_int_equal(s0.walker.pwc2_hits, 1);
    gx_memsys_invalidate(ms, 0, 0);
    (void)one(ms, base + 8 * KiB, 0);
    gx_translation_stats s = stats(ms);
    assert_int_equal(s.walker.pwc_hits, s0.walker.pwc_hits);
    assert_int_equal(s.walker.pwc2_hits, s0.walker.pwc2_hits);
    assert_int_equal(s.walker.page_table_reads - s0.walker.page_table_reads, 4);
    assert_int_equal(s.walker.pwc_invalidations, 1);
    assert_int_equal(s.walker.pwc2_invalidations, 1);
    assert_int_equal(s.invalidations, 1);
    gx_memsys_free(ms);
    gx_profile_free(p);
}

/* One walker, reads at 100 cycles, no PWCs, one TLB level of hit latency
 * 1: four misses of one instruction at cycle 0 walk one after another;
 * each walk is 4 reads = 400 cycles, requested at cycle 1: translations
 * take 401, 801, 1201, 1601 cycles, the queue waits 0 + 400 + 800 + 1200.
 * With a queue of one entry the third and fourth find it full (2 retries)
 * and the times are the same. */
static void test_one_walker_queues(void **state)
{
    (void)state;
    for (uint32_t qe = 0; qe < 2; qe++) {
        gx_profile *p = vega(128, 4 * KiB);
        gx_tlb_cfg *t = &p->tlb;
        t->n_levels = 1;
        t->walker.walkers = 1;
        t->walker.queue_entries = qe;
        t->walker.fixed_read_cycles = 100;
        t->walker.pwc.present = 0;
        t->walker.neighbour_pwc.present = 0;
        gx_memsys *ms = mk(p);
        gx_memsys_req q[4];
        gx_memsys_res r[4];
        for (uint32_t i = 0; i < 4; i++) /* pages in four different 1 GiB ranges */
            q[i] = (gx_memsys_req){(1ULL << 40) + i * GiB, 0, 4, GX_L2_READ};
        gx_memsys_access_group(ms, q, 4, 0, r);
        for (int i = 0; i < 4; i++)
            assert_true(r[i].translation_cycles == 401.0 + 400.0 * i);
        gx_translation_stats s = stats(ms);
        assert_true(s.walker.queue_cycles == 2400.0);
        assert_int_equal(s.walker.queued_walks, 3);
        assert_int_equal(s.walker.queue_retries, qe ? 2 : 0);
        gx_memsys_free(ms);
        gx_profile_free(p);
    }
}

/* Bad walker configurations are refused naming the field. */
static void test_bad_config_named(void **state)
{
    (void)state;
    const uint32_t bad[] = {96, 4, 256};
    for (int i = 0; i < 3; i++) {
        gx_profile *p = vega(bad[i], 4 * KiB);
        gx_memsys_cfg c = {0, 1, 1, 7, 64 * GiB};
        gx_memsys *ms = NULL;
        gx_msg m;
        assert_int_equal(gx_memsys_new(p, &c, &ms, &m), GX_ECONFIG);
        assert_non_null(strstr(m.text, "tlb.walker.fetch_bytes"));
        gx_profile_free(p);
    }
}

/* A mixed workload through the trace simulator, its statistics (JSON,
 * "translation" object included) compared with tests/golden/: regions of
 * 4 KiB, 64 KiB and 2 MiB pages mapped by MAP records, warp instructions
 * of 32 lanes (unit stride, 4 KiB stride, scattered), writes, an
 * invalidation half way and accesses to unmapped memory.
 * GX_UPDATE_GOLDEN=1 rewrites the golden file. */
static void push(gx_trace_rec *r, uint64_t *n, uint8_t op, uint64_t addr, uint64_t arg,
                 uint32_t sm, uint32_t warp, uint16_t size)
{
    gx_trace_rec *x = &r[(*n)++];
    memset(x, 0, sizeof *x);
    x->op = op;
    x->addr = addr;
    x->arg = arg;
    x->sm = sm;
    x->warp = warp;
    x->size = size;
}

static uint64_t mixed_trace(gx_trace_rec *r)
{
    uint64_t n = 0, x = 99;
    const uint64_t r4k = 1ULL << 40, r64k = r4k + 1 * GiB, r2m = r4k + 2 * GiB;
    push(r, &n, GX_TRACE_MAP, r4k, 64 * MiB, 0, 0, 12);
    push(r, &n, GX_TRACE_MAP, r64k, 64 * MiB, 0, 0, 16);
    push(r, &n, GX_TRACE_MAP, r2m, 256 * MiB, 0, 0, 21);
    uint32_t warp = 1;
    for (int inst = 0; inst < 600; inst++, warp++) {
        uint32_t sm = (uint32_t)inst % 4;
        uint64_t region = inst % 3 == 0 ? r4k : inst % 3 == 1 ? r64k : r2m;
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t base = region + (x >> 20) % (60 * MiB);
        uint8_t op = inst % 5 == 4 ? GX_TRACE_WRITE : GX_TRACE_READ;
        for (uint64_t lane = 0; lane < 32; lane++) {
            uint64_t a = inst % 4 == 0 ? base + lane * 4
                         : inst % 4 == 1 ? base + lane * 4096
                         : base + ((x >> (lane % 32)) & 0xffff) * 64;
            push(r, &n, op, a & ~3ULL, 0, sm, warp, 4);
        }
        if (inst == 300)
            push(r, &n, GX_TRACE_INVALIDATE, 0, 0, 0, 0, 0);
        if (inst % 50 == 7) /* unmapped */
            push(r, &n, GX_TRACE_READ, 1ULL << 44, 0, sm, 0, 4);
    }
    return n;
}

static void test_golden_mixed(void **state)
{
    (void)state;
    gx_profile *p = vega(128, 0);
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *ts = NULL;
    gx_msg m;
    assert_int_equal(gx_tsim_new(p, &cfg, &ts, &m), GX_OK);
    gx_trace_rec *rec = calloc(600 * 34 + 8, sizeof *rec);
    assert_non_null(rec);
    uint64_t n = mixed_trace(rec);
    gx_tsim_run(ts, rec, n / 2);
    gx_tsim_run(ts, rec + n / 2, n - n / 2);
    gx_tsim_flush(ts);
    const char *out = gx_test_tmp("translation-mixed.json");
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    assert_int_equal(gx_tsim_write_json(ts, f), GX_OK);
    fclose(f);
    const char *gold = gx_test_path("tests/golden/translation-mixed.json");
    size_t la = 0, lb = 0;
    char *a = gx_test_slurp(out, &la);
    assert_non_null(a);
    if (getenv("GX_UPDATE_GOLDEN")) {
        f = fopen(gold, "w");
        assert_non_null(f);
        fwrite(a, 1, la, f);
        fclose(f);
    }
    char *b = gx_test_slurp(gold, &lb);
    assert_non_null(b);
    if (la != lb || memcmp(a, b, la))
        print_error("statistics differ from %s (see %s)\n", gold, out);
    assert_true(la == lb && !memcmp(a, b, la));
    assert_non_null(strstr(a, "\"pwc2InvalidNeighboursSkipped\""));
    free(a);
    free(b);
    free(rec);
    gx_tsim_free(ts);
    gx_profile_free(p);
}

/* gx_memsys_run_alone against gx_memsys_access_group one request at a time
 * (issued at its cycle, or at the total so far), on both page sizes with
 * faults: first-level hits and misses in runs of every length, the same
 * latencies in the tally, the same translation and L2 statistics. */
static void run_alone_vs_groups(uint64_t default_page, uint32_t first_level_entries)
{
    gx_profile *p = vega(128, default_page);
    p->tlb.levels[0].entries = first_level_entries;
    p->tlb.levels[0].ways = first_level_entries;
    gx_memsys *a = mk(p), *b = mk(p);
    for (int k = 0; k < 2; k++) { /* 2 MiB pages, 4 KiB pages, unmapped holes around */
        gx_memsys *ms = k ? b : a;
        assert_int_equal(gx_memsys_map(ms, 0, 4 * MiB, 2 * MiB, NULL), GX_OK);
        assert_int_equal(gx_memsys_map(ms, 8 * MiB, 1 * MiB, 4 * KiB, NULL), GX_OK);
    }
    enum { N = 20000 };
    static uint64_t va[N], cyc[N];
    static uint32_t sm[N];
    uint64_t x = 99;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint32_t kind = (uint32_t)(x >> 60);
        /* mostly the mapped pages (first-level hits in runs), some holes */
        va[i] = kind < 9 ? (x >> 20) % (4 * MiB) : kind < 14 ? 8 * MiB + (x >> 20) % MiB
                                                              : (x >> 20) % (12 * MiB);
        va[i] &= ~(uint64_t)31; /* one sector */
        sm[i] = (uint32_t)(x >> 8) % 3;
        cyc[i] = kind == 15 && i % 8 == 0 ? (uint64_t)4000 * i : 0; /* some issue cycles given */
    }
    uint64_t ha[GX_TSIM_LAT_BINS], hb[GX_TSIM_LAT_BINS];
    memset(ha, 0, sizeof ha);
    memset(hb, 0, sizeof hb);
    gx_l2_tally ta = {{0}, INFINITY, -INFINITY, ha, GX_TSIM_LAT_BINS, 0};
    gx_l2_tally tb = ta;
    tb.hist = hb;
    const size_t chunks[] = {1, 5000, 3, 700, 4096, 17};
    for (size_t at = 0, c = 0; at < N; c++) {
        const size_t n = chunks[c % 6] < N - at ? chunks[c % 6] : N - at;
        gx_memsys_run_alone(a, va + at, sm + at, cyc + at, n, &ta);
        for (size_t i = at; i < at + n; i++) {
            gx_memsys_req q = {va[i], sm[i], 4, GX_L2_READ};
            gx_memsys_res r;
            gx_memsys_access_group(b, &q, 1, cyc[i] ? (double)cyc[i] : gx_cyc_value(&tb.total),
                                   &r);
            gx_l2_tally_add(&tb, r.latency_cycles);
            tb.sectors += r.sectors;
        }
        at += n;
    }
    assert_true(ta.total.v == tb.total.v);
    assert_true(ta.lo == tb.lo && ta.hi == tb.hi);
    assert_int_equal(ta.sectors, tb.sectors);
    assert_memory_equal(ha, hb, sizeof ha);
    gx_translation_stats sa = stats(a), sb = stats(b);
    assert_memory_equal(&sa, &sb, sizeof sa);
    assert_true(sa.faults > 0 && sa.level[0].hits > 0 && sa.level[0].misses > 0);
    gx_l2_stats la, lb;
    gx_l2_get_stats(gx_memsys_l2(a), &la);
    gx_l2_get_stats(gx_memsys_l2(b), &lb);
    assert_int_equal(la.dram_accesses, lb.dram_accesses);
    assert_int_equal(la.level[0].hits, lb.level[0].hits);
    gx_memsys_free(a);
    gx_memsys_free(b);
    gx_profile_free(p);
}

static void test_run_alone_matches_groups(void **state)
{
    (void)state;
    run_alone_vs_groups(4 * KiB, 32);
    run_alone_vs_groups(2 * MiB, 32);
    run_alone_vs_groups(4 * KiB, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaf_reads_per_fetch),
        cmocka_unit_test(test_pwc_never_holds_a_leaf),
        cmocka_unit_test(test_invalid_neighbours_skipped),
        cmocka_unit_test(test_2m_entry_covers_its_page),
        cmocka_unit_test(test_size_predictor_hysteresis),
        cmocka_unit_test(test_1g_clamped_to_granule),
        cmocka_unit_test(test_invalidation_empties_pwcs),
        cmocka_unit_test(test_one_walker_queues),
        cmocka_unit_test(test_bad_config_named),
        cmocka_unit_test(test_xor_index),
        cmocka_unit_test(test_hit_fills_entry),
        cmocka_unit_test(test_golden_mixed),
        cmocka_unit_test(test_run_alone_matches_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
