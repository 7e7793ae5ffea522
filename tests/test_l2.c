/* test_l2.c - the L2 model (l2.h): exact uniform latencies without noise, the
 * slice histogram follows the hash, near-far from two SMs in different
 * partitions, victims pushed to the far partition, seeded noise, background
 * evictions at their rate, deterministic per-(SM, slice) skew, stats; the
 * batch run equal to single accesses. */
#include <math.h>
#include <string.h>

#include "gpuxray/dram.h"
#include "gpuxray/hash.h"
#include "gpuxray/l2.h"
#include "gpuxray/profile.h"
#include "testutil.h"

/* A small card: 128 B lines of 4 sectors, 4 ways, 2 partitions x 2 slices,
 * 8 sets per slice; slice = PA bits 7, 8; set = bits 9..11; 8 SMs. SMs 0-3
 * sit next to partition 0 (slices 0, 1), SMs 4-7 next to partition 1. */
static gx_profile *small_profile(gx_topology topo)
{
    gx_profile *p = gx_profile_new();
    assert_non_null(p);
    strcpy(p->provenance.kind, "reference");
    strcpy(p->device.name, "test card");
    p->device.sm_count = 8;
    p->device.sm_clock_mhz = 1000;
    p->device.api_l2_bytes = 16384;
    p->timer_overhead_cycles = 4;
    p->memory.page_bytes = 2 << 20;
    p->memory.dram_latency_cycles = 300;
    p->l2.present = 1;
    p->l2.line_bytes = 128;
    p->l2.sector_bytes = 32;
    p->l2.ways = 4;
    p->l2.partitions = 2;
    p->l2.slices = 4;
    p->l2.sets_per_slice = 8;
    p->l2.capacity_bytes = 4 * 8 * 4 * 128;
    strcpy(p->l2.policy, "lru");
    p->l2.topology = topo;
    if (topo == GX_TOPO_UNIFORM) {
        p->l2.hit_cycles = 100;
    } else {
        p->l2.near_hit_cycles = 100;
        p->l2.far_hit_cycles = 200;
        p->l2.near_far.copy_to_near = 1;
        p->l2.near_far.victims_to_far = 1;
    }
    p->l2.slice_hash.present = 1;
    p->l2.slice_hash.n_masks = 2;
    p->l2.slice_hash.masks[0] = 1u << 7;
    p->l2.slice_hash.masks[1] = 1u << 8;
    p->l2.set_hash.present = 1;
    p->l2.set_hash.n_masks = 3;
    for (int i = 0; i < 3; i++)
        p->l2.set_hash.masks[i] = 1u << (9 + i);
    p->sim.present = 1;
    p->sim.jitter_cycles = 2;
    p->sim.outlier_rate = 0.001;
    p->sim.outlier_cycles = 1000;
    p->sim.background_evictions_per_kaccess = 0;
    p->sim.sm_slice_skew_cycles = 30;
    p->sim.frames_seed = 7;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_profile_validate(p, &m);
    if (rc != GX_OK)
        print_error("validate: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    return p;
}

static gx_l2 *mk(const gx_profile *p, int noise, int skew, uint64_t seed)
{
    gx_l2_opts o = {noise, skew, seed};
    gx_l2 *l2 = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_l2_new(p, &o, &l2, &m);
    if (rc != GX_OK)
        print_error("gx_l2_new: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    return l2;
}

static double lat(gx_l2 *l2, uint64_t pa, uint32_t sm, gx_l2_level *level)
{
    gx_l2_result r;
    gx_l2_access(l2, pa, sm, GX_L2_READ, &r);
    if (level)
        *level = r.level;
    return r.latency_cycles;
}

static void test_uniform_exact(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_UNIFORM);
    gx_l2 *l2 = mk(p, 0, 0, 1);
    gx_l2_level lv;
    assert_true(lat(l2, 0x1000, 3, &lv) == 300.0);
    assert_int_equal(lv, GX_L2_DRAM);
    assert_true(lat(l2, 0x1008, 3, &lv) == 100.0); /* same sector */
    assert_int_equal(lv, GX_L2_NEAR);
    assert_true(lat(l2, 0x1020, 5, &lv) == 300.0); /* next sector: sector miss */
    assert_true(lat(l2, 0x1020, 6, &lv) == 100.0);
    /* 5 lines of one set (4 ways, LRU): the first is gone */
    for (uint64_t j = 0; j < 5; j++)
        lat(l2, 0x80000 + j * 4096, 0, NULL);
    assert_true(lat(l2, 0x80000, 0, &lv) == 300.0);
    gx_l2_stats s;
    gx_l2_get_stats(l2, &s);
    assert_int_equal(s.level[GX_L2_NEAR].accesses, 10);
    assert_int_equal(s.level[GX_L2_NEAR].hits, 2);
    assert_int_equal(s.level[GX_L2_NEAR].sector_misses, 1);
    assert_int_equal(s.level[GX_L2_NEAR].line_misses, 7);
    assert_int_equal(s.level[GX_L2_FAR].accesses, 0);
    assert_int_equal(s.dram_accesses, 8);
    assert_int_equal(gx_l2_sm_partition(l2, 7), 0);
    gx_l2_reset_stats(l2);
    gx_l2_get_stats(l2, &s);
    assert_int_equal(s.level[GX_L2_NEAR].accesses + s.dram_accesses, 0);
    /* a flush empties the cache */
    assert_true(lat(l2, 0x84000, 3, NULL) == 100.0);
    gx_l2_flush(l2);
    assert_true(lat(l2, 0x84000, 3, NULL) == 300.0);
    gx_l2_free(l2);
    gx_profile_free(p);
}

static void test_slice_histogram_follows_hash(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_UNIFORM);
    /* a less regular slice hash: bit 7 ^ bit 12, bit 8 ^ bit 9 ^ bit 13 */
    p->l2.slice_hash.masks[0] = (1u << 7) | (1u << 12);
    p->l2.slice_hash.masks[1] = (1u << 8) | (1u << 9) | (1u << 13);
    gx_l2 *l2 = mk(p, 0, 0, 1);
    uint64_t expect[4] = {0};
    for (uint64_t i = 0; i < 3000; i++) {
        uint64_t pa = (i * 0x9e3779b1ULL) & 0xffff80ULL;
        gx_l2_result r;
        gx_l2_access(l2, pa, (uint32_t)(i % 8), GX_L2_READ, &r);
        uint64_t s = gx_hash_eval(&p->l2.slice_hash, pa);
        assert_int_equal(r.slice, s);
        expect[s]++;
    }
    gx_l2_stats st;
    gx_l2_get_stats(l2, &st);
    assert_int_equal(st.slices, 4);
    for (int s = 0; s < 4; s++)
        assert_int_equal(st.slice_accesses[s], expect[s]);
    gx_l2_free(l2);
    gx_profile_free(p);
}

static void test_near_far_swap(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_NEAR_FAR);
    gx_l2 *l2 = mk(p, 0, 0, 1);
    assert_int_equal(gx_l2_sm_partition(l2, 0), 0);
    assert_int_equal(gx_l2_sm_partition(l2, 3), 0);
    assert_int_equal(gx_l2_sm_partition(l2, 4), 1);
    assert_int_equal(gx_l2_sm_partition(l2, 7), 1);
    gx_l2_level lv;
    const uint64_t a = 0x4200; /* slice 0: home partition 0 */
    assert_true(lat(l2, a, 0, &lv) == 300.0);
    assert_true(lat(l2, a, 1, &lv) == 100.0); /* SM 1 shares partition 0 */
    assert_int_equal(lv, GX_L2_NEAR);
    /* SM 5 (partition 1): far, then (the line moved) near */
    assert_true(lat(l2, a, 5, &lv) == 200.0);
    assert_int_equal(lv, GX_L2_FAR);
    assert_true(lat(l2, a, 5, &lv) == 100.0);
    assert_int_equal(lv, GX_L2_NEAR);
    /* now SM 0 sees it far */
    assert_true(lat(l2, a, 0, &lv) == 200.0);
    assert_int_equal(lv, GX_L2_FAR);
    gx_l2_stats s;
    gx_l2_get_stats(l2, &s);
    assert_int_equal(s.level[GX_L2_NEAR].accesses, 5);
    assert_int_equal(s.level[GX_L2_NEAR].hits, 2);
    assert_int_equal(s.level[GX_L2_FAR].accesses, 3);
    assert_int_equal(s.level[GX_L2_FAR].hits, 2);
    assert_int_equal(s.dram_accesses, 1);
    gx_l2_free(l2);
    gx_profile_free(p);
}

/* far_stream_extra: a far hit that follows a far hit of the same SM pays it;
 * a far hit after a near hit, or after another SM's far hit, does not. */
static void test_far_stream_extra(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_NEAR_FAR);
    p->l2.far_stream_extra_cycles = 40;
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    gx_l2 *l2 = mk(p, 0, 0, 1);
    gx_l2_level lv;
    const uint64_t a = 0x4200, b = 0x4400, c = 0x4600; /* slice 0, home partition 0 */
    assert_true(lat(l2, a, 0, &lv) == 300.0);
    assert_true(lat(l2, b, 0, &lv) == 300.0);
    assert_true(lat(l2, c, 0, &lv) == 300.0);
    /* SM 5: a is a far hit after nothing far (an extra only from the 2nd on) */
    assert_true(lat(l2, a, 5, &lv) == 200.0);
    assert_int_equal(lv, GX_L2_FAR);
    assert_true(lat(l2, b, 5, &lv) == 240.0); /* back to back */
    assert_int_equal(lv, GX_L2_FAR);
    assert_true(lat(l2, b, 5, &lv) == 100.0); /* near hit resets the stream */
    assert_true(lat(l2, c, 5, &lv) == 200.0);
    /* each SM has its own stream: SM 0's far hit follows its DRAM miss */
    assert_true(lat(l2, a, 0, &lv) == 200.0); /* a moved to partition 1: far for SM 0 */
    gx_l2_free(l2);
    /* a uniform card refuses the field */
    gx_profile *u = small_profile(GX_TOPO_UNIFORM);
    u->l2.far_stream_extra_cycles = 40;
    assert_int_equal(gx_profile_validate(u, &m), GX_ECONFIG);
    assert_non_null(strstr(m.text, "far_stream_extra"));
    u->l2.far_stream_extra_cycles = NAN;
    p->l2.far_stream_extra_cycles = -1;
    assert_int_equal(gx_profile_validate(p, &m), GX_ECONFIG);
    assert_non_null(strstr(m.text, "far_stream_extra"));
    gx_profile_free(u);
    gx_profile_free(p);
}

/* 5 lines of one near set (4 ways): the first one leaves the near partition.
 * With victims_to_far it is found in the far partition; without it, it is
 * gone (its home is the near partition). */
static void test_victims_to_far(void **state)
{
    (void)state;
    for (int victims = 0; victims <= 1; victims++) {
        gx_profile *p = small_profile(GX_TOPO_NEAR_FAR);
        p->l2.near_far.victims_to_far = victims;
        gx_l2 *l2 = mk(p, 0, 0, 1);
        for (uint64_t j = 0; j < 5; j++)
            assert_true(lat(l2, 0x100000 + j * 4096, 2, NULL) == 300.0);
        gx_l2_level lv;
        double t = lat(l2, 0x100000, 2, &lv);
        if (victims) {
            assert_true(t == 200.0);
            assert_int_equal(lv, GX_L2_FAR);
            /* it moved back near; the line it displaced went far */
            assert_true(lat(l2, 0x100000, 2, &lv) == 100.0);
            assert_true(lat(l2, 0x100000 + 1 * 4096, 2, &lv) == 200.0);
        } else {
            assert_true(t == 300.0);
            assert_int_equal(lv, GX_L2_DRAM);
        }
        gx_l2_free(l2);
        gx_profile_free(p);
    }
}

/* copy_to_near without victims: a line homed in the far partition keeps its
 * home copy, so after leaving the near partition it is a far hit. */
static void test_copy_keeps_home(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_NEAR_FAR);
    p->l2.near_far.victims_to_far = 0;
    gx_l2 *l2 = mk(p, 0, 0, 1);
    const uint64_t base = 0x100100; /* bits 7, 8 = 0, 1: slice 2, home partition 1 */
    assert_true(lat(l2, base, 0, NULL) == 300.0);
    /* 4 lines of slice 0 (home: the near partition) share its near set */
    for (uint64_t j = 0; j < 4; j++)
        assert_true(lat(l2, 0x200000 + j * 4096, 0, NULL) == 300.0);
    gx_l2_level lv;
    assert_true(lat(l2, base, 0, &lv) == 200.0);
    assert_int_equal(lv, GX_L2_FAR);
    /* the SMs of partition 1 see it near */
    assert_true(lat(l2, base, 6, &lv) == 100.0);
    assert_int_equal(lv, GX_L2_NEAR);
    gx_l2_free(l2);
    gx_profile_free(p);
}

static void test_noise_seeded(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_UNIFORM);
    gx_l2 *a = mk(p, 1, 1, 11), *b = mk(p, 1, 1, 11), *c = mk(p, 1, 1, 12);
    int differ = 0, outliers = 0;
    double sum = 0;
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        uint64_t pa = (uint64_t)(i % 64) * 128;
        double x = lat(a, pa, 1, NULL);
        assert_true(x == lat(b, pa, 1, NULL));
        differ += x != lat(c, pa, 1, NULL);
        if (x > 900)
            outliers++;
        else if (i >= 64)
            sum += x;
    }
    assert_true(differ > n / 2);
    /* outlier_rate 0.001: about 20 of 20000 */
    assert_true(outliers >= 5 && outliers <= 45);
    /* jitter is centred: hits average hit + mean skew of slice(s) for SM 1 */
    double mean = sum / (n - 64 - outliers);
    assert_true(mean > 100 && mean < 160); /* skew < 30, +30 across partitions */
    gx_l2_free(a);
    gx_l2_free(b);
    gx_l2_free(c);
    gx_profile_free(p);
}

static void test_background_evictions(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_UNIFORM);
    p->sim.jitter_cycles = 0;
    p->sim.outlier_rate = 0;
    p->sim.background_evictions_per_kaccess = 50; /* 5% of accesses */
    gx_l2 *l2 = mk(p, 1, 0, 3);
    /* 64 lines, two in each of the 32 sets: every eviction hits one of them */
    for (int i = 0; i < 64; i++)
        lat(l2, (uint64_t)i * 128, 0, NULL);
    gx_l2_reset_stats(l2);
    const int n = gx_test_sanitizer() ? 20000 : 100000;
    for (int i = 0; i < n; i++)
        lat(l2, (uint64_t)(i % 64) * 128, 0, NULL);
    gx_l2_stats s;
    gx_l2_get_stats(l2, &s);
    double expect = 0.05 * n;
    assert_true(fabs((double)s.dram_accesses - expect) < 0.15 * expect);
    gx_l2_free(l2);
    /* without noise, none */
    l2 = mk(p, 0, 0, 3);
    for (int i = 0; i < 64; i++)
        lat(l2, (uint64_t)i * 128, 0, NULL);
    gx_l2_reset_stats(l2);
    for (int i = 0; i < 10000; i++)
        lat(l2, (uint64_t)(i % 64) * 128, 0, NULL);
    gx_l2_get_stats(l2, &s);
    assert_int_equal(s.dram_accesses, 0);
    gx_l2_free(l2);
    gx_profile_free(p);
}

static void test_skew_deterministic(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_UNIFORM);
    gx_l2 *a = mk(p, 0, 1, 1), *b = mk(p, 0, 1, 99);
    double seen[8][4];
    for (uint32_t sm = 0; sm < 8; sm++)
        for (uint64_t sl = 0; sl < 4; sl++) {
            uint64_t pa = sl * 128;
            lat(a, pa, sm, NULL);
            double x = lat(a, pa, sm, NULL); /* a hit: 100 + skew */
            lat(b, pa, sm, NULL);
            assert_true(x == lat(b, pa, sm, NULL)); /* a property of the chip */
            assert_true(x >= 100 && x < 160); /* random part < 30, +30 across partitions */
            /* and of (sm, slice) only: another line of the same slice */
            lat(a, pa + 8192, sm, NULL);
            assert_true(lat(a, pa + 8192, sm, NULL) == x);
            seen[sm][sl] = x;
        }
    for (uint32_t sm = 0; sm < 8; sm++) {
        int distinct = 0;
        for (int i = 1; i < 4; i++)
            distinct += seen[sm][i] != seen[sm][0];
        assert_true(distinct >= 2); /* slices differ as seen from one SM */
    }
    int across = 0;
    for (uint32_t sm = 1; sm < 8; sm++)
        across += seen[sm][0] != seen[0][0];
    assert_true(across >= 6); /* and one slice differs across SMs */
    gx_l2_free(a);
    gx_l2_free(b);
    /* another chip (frames_seed) has another layout */
    p->sim.frames_seed = 8;
    a = mk(p, 0, 1, 1);
    lat(a, 0, 0, NULL);
    assert_true(lat(a, 0, 0, NULL) != seen[0][0]);
    gx_l2_free(a);
    gx_profile_free(p);
}

static void test_bad_profile(void **state)
{
    (void)state;
    gx_profile *p = small_profile(GX_TOPO_UNIFORM);
    gx_l2 *l2 = (gx_l2 *)p;
    gx_msg m;
    gx_msg_clear(&m);
    p->l2.slice_hash.present = 0;
    assert_int_equal(gx_l2_new(p, NULL, &l2, &m), GX_ECONFIG);
    assert_null(l2);
    assert_non_null(strstr(m.text, "l2.hash"));
    p->l2.slice_hash.present = 1;
    p->memory.dram_latency_cycles = NAN;
    assert_int_equal(gx_l2_new(p, NULL, &l2, &m), GX_ECONFIG);
    assert_non_null(strstr(m.text, "dram_latency_cycles"));
    gx_profile_free(p);
}

/* The batch run (gx_l2_run, and gx_l2_run_located on every other chunk of
 * the first runs) against gx_l2_access one access at a time on
 * the seed card, for the specialised path (plru-rand, plru, plru-rand:1)
 * and the general one (lru), skew on and off: the same statistics and
 * tallies bit for bit, over runs that cross its blocks, repeats (rep[] and
 * an entry repeating the sector before), two tallies of different bins
 * and a DRAM latency changed between runs, accesses of many SMs and of
 * few (its direct and counting statistics); gx_l2_run_plus likewise against
 * gx_l2_access with its extra added. */
static void run_ref(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, const uint32_t *rep,
                    size_t n, gx_l2_tally *t)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k <= rep[i]; k++) {
            gx_l2_result r;
            gx_l2_access(l2, pa[i], sm[i], GX_L2_READ, &r);
            gx_l2_tally_add(t, r.latency_cycles);
            t->sectors++;
        }
}

/* run_ref for gx_l2_run_plus: extra + each latency (no repeats). */
static void run_ref_plus(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, size_t n,
                         double extra, gx_l2_tally *t)
{
    for (size_t i = 0; i < n; i++) {
        gx_l2_result r;
        gx_l2_access(l2, pa[i], sm[i], GX_L2_READ, &r);
        gx_l2_tally_add(t, extra + r.latency_cycles);
        t->sectors++;
    }
}

static void same_tally(const gx_l2_tally *a, const gx_l2_tally *b)
{
    assert_true(a->total.v == b->total.v);
    assert_true(a->lo == b->lo && a->hi == b->hi);
    assert_int_equal(a->sectors, b->sectors);
    assert_memory_equal(a->hist, b->hist, a->bins * sizeof *a->hist);
}

static void same_l2_stats(const gx_l2 *a, const gx_l2 *b)
{
    gx_l2_stats x, y;
    gx_l2_get_stats(a, &x);
    gx_l2_get_stats(b, &y);
    assert_int_equal(x.dram_accesses, y.dram_accesses);
    for (int l = 0; l < 2; l++) {
        assert_int_equal(x.level[l].hits, y.level[l].hits);
        assert_int_equal(x.level[l].sector_misses, y.level[l].sector_misses);
        assert_int_equal(x.level[l].line_misses, y.level[l].line_misses);
    }
    assert_memory_equal(x.slice_accesses, y.slice_accesses, x.slices * sizeof(uint64_t));
}

static void run_vs_access(const char *policy, int skew, uint32_t sms)
{
    gx_profile *p = NULL;
    gx_msg m;
    if (gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m) != GX_OK)
        fail_msg("seed profile: %s", m.text);
    strcpy(p->l2.policy, policy);
    gx_l2 *a = mk(p, 0, skew, 5), *b = mk(p, 0, skew, 5);
    enum { N = 60000 };
    static uint64_t pa[N];
    static uint32_t sm[N], rep[N];
    uint64_t x = 777;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint32_t kind = (uint32_t)(x >> 60);
        /* mostly a 16 MiB footprint (misses, evictions), some 256 KiB (hits),
         * some the sector or line before (repeats, sector misses) */
        pa[i] = kind < 8 ? (x >> 20) & ((16u << 20) - 1) : (x >> 20) & ((256u << 10) - 1);
        if (i && kind == 12)
            pa[i] = pa[i - 1] + 4;
        if (i && kind == 13)
            pa[i] = pa[i - 1] ^ 32;
        sm[i] = (uint32_t)(x >> 8) % sms;
        rep[i] = kind == 14 ? (uint32_t)(x >> 40) % 9 : 0;
    }
    uint64_t ha[700], hb[700];
    memset(ha, 0, sizeof ha);
    memset(hb, 0, sizeof hb);
    gx_l2_tally ta = {{0}, INFINITY, -INFINITY, ha, 700, 0};
    gx_l2_tally tb = ta;
    tb.hist = hb;
    /* a long first run (the counting mode, folded within the run with many
     * SMs), short ones (the direct mode for a while) */
    const size_t chunks[] = {5000, 600, 4096, 513, 1, 7, 33, 100};
    size_t at = 0;
    for (size_t c = 0; at < N / 2; c++) {
        size_t k = chunks[c % 8] < N / 2 - at ? chunks[c % 8] : N / 2 - at;
        if (c & 1) { /* located first (by the other L2 of the same profile) */
            static uint64_t lw[N];
            gx_l2_locate_words(b, pa + at, sm + at, lw, k);
            for (size_t q = 0; q < k; q++) {
                gx_l2_loc loc;
                gx_l2_locate(b, pa[at + q], &loc);
                assert_int_equal(gx_l2_word_slice(lw[q]), loc.slice);
            }
            gx_l2_run_located(a, pa + at, lw, sm + at, rep + at, k, &ta);
        } else {
            gx_l2_run(a, pa + at, sm + at, rep + at, k, &ta);
        }
        run_ref(b, pa + at, sm + at, rep + at, k, &tb);
        at += k;
    }
    same_tally(&ta, &tb);
    same_l2_stats(a, b);
    /* another DRAM latency, the same bins (a fresh tally) */
    p->memory.dram_latency_cycles = 517.25;
    gx_dram *d = NULL;
    assert_int_equal(gx_dram_new(p, &d, &m), GX_OK);
    gx_l2_set_dram(a, d);
    gx_l2_set_dram(b, d);
    memset(ha, 0, sizeof ha);
    memset(hb, 0, sizeof hb);
    gx_l2_tally ta1 = {{0}, INFINITY, -INFINITY, ha, 700, 0};
    gx_l2_tally tb1 = ta1;
    tb1.hist = hb;
    gx_l2_run(a, pa + at, sm + at, rep + at, N / 4, &ta1);
    run_ref(b, pa + at, sm + at, rep + at, N / 4, &tb1);
    at += N / 4;
    same_tally(&ta1, &tb1);
    same_l2_stats(a, b);
    assert_true(ta1.hi >= 517.25); /* the new latency was used */
    /* another tally of fewer bins (clamped), no rep[] */
    uint64_t ha2[300], hb2[300];
    memset(ha2, 0, sizeof ha2);
    memset(hb2, 0, sizeof hb2);
    gx_l2_tally ta2 = {{0}, INFINITY, -INFINITY, ha2, 300, 0};
    gx_l2_tally tb2 = ta2;
    tb2.hist = hb2;
    static const uint32_t zero[N];
    gx_l2_run(a, pa + at, sm + at, NULL, N - at, &ta2);
    run_ref(b, pa + at, sm + at, zero, N - at, &tb2);
    same_tally(&ta2, &tb2);
    same_l2_stats(a, b);
    /* gx_l2_run_plus (a translation's cycles before each access), its
     * extras changing and runs of gx_l2_run between (the table rebuilt) */
    memset(ha, 0, sizeof ha);
    memset(hb, 0, sizeof hb);
    gx_l2_tally ta3 = {{0}, INFINITY, -INFINITY, ha, 700, 0};
    gx_l2_tally tb3 = ta3;
    tb3.hist = hb;
    const double extras[] = {69.5, 0, 1, 69.5, 150.25};
    for (size_t c = 0; c < 5; c++) {
        const size_t from = c * 5000;
        gx_l2_run_plus(a, pa + from, sm + from, 4000, extras[c], &ta3);
        run_ref_plus(b, pa + from, sm + from, 4000, extras[c], &tb3);
        gx_l2_run(a, pa + from + 4000, sm + from, NULL, 700, &ta3);
        run_ref(b, pa + from + 4000, sm + from, zero, 700, &tb3);
    }
    same_tally(&ta3, &tb3);
    same_l2_stats(a, b);
    assert_true(ta3.hi >= 150.25); /* the extra was added */
    gx_dram_free(d);
    gx_l2_free(a);
    gx_l2_free(b);
    gx_profile_free(p);
}

static void test_run_matches_access(void **state)
{
    (void)state;
    const char *pols[] = {"plru-rand:0.05", "plru", "plru-rand:1", "lru"};
    for (int i = 0; i < 4; i++)
        for (int skew = 0; skew < 2; skew++) {
            run_vs_access(pols[i], skew, 84); /* every SM of the card */
            run_vs_access(pols[i], skew, 2);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_exact),
        cmocka_unit_test(test_slice_histogram_follows_hash),
        cmocka_unit_test(test_near_far_swap),
        cmocka_unit_test(test_far_stream_extra),
        cmocka_unit_test(test_victims_to_far),
        cmocka_unit_test(test_copy_keeps_home),
        cmocka_unit_test(test_noise_seeded),
        cmocka_unit_test(test_background_evictions),
        cmocka_unit_test(test_skew_deterministic),
        cmocka_unit_test(test_bad_profile),
        cmocka_unit_test(test_run_matches_access),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
