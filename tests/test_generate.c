/* test_generate.c - the generator of hidden profiles: every profile of 500
 * seeds validates, survives a save/load round trip, is reproducible, and
 * the distribution covers what the holdout proof needs (non-power-of-two
 * slices, both topologies, every candidate policy, modulo sets, noise from
 * none to heavy, unobservable hash bits); the widened mode draws the shapes
 * real GPUs publish (heavy masks mostly reaching above the page, up to 40
 * ways and 160 slices, hundreds of modulo sets, near-far without copies). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/generate.h"
#include "gpuxray/hash.h"
#include "gpuxray/policy.h"
#include "gpuxray/profile.h"
#include "gpuxray/bits.h"

#define N_SEEDS 500

static void test_500_seeds_validate_and_cover(void **state)
{
    (void)state;
    size_t nc = gx_policy_candidate_count();
    assert_true(nc > 0);
    unsigned *pol_seen = calloc(nc, sizeof *pol_seen);
    assert_non_null(pol_seen);
    unsigned npow2 = 0, nonpow2 = 0, uniform = 0, nearfar = 0, modulo = 0, line64 = 0,
             line128 = 0, sec_line = 0, sec32 = 0, sec64 = 0, quiet = 0, heavy = 0, high = 0,
             part4 = 0, small_skew = 0, big_skew = 0, slices1 = 0, big_slices = 0;
    uint32_t min_ways = 99, max_ways = 0;
    for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
        gx_profile *p = NULL;
        gx_msg m;
        gx_msg_clear(&m);
        int rc = gx_generate(seed, NULL, &p, &m);
        if (rc != GX_OK)
            fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, m.text);
        assert_int_equal(rc, GX_OK);
        assert_int_equal(gx_profile_validate(p, &m), GX_OK);
        assert_string_equal(p->provenance.kind, "simulated");
        const uint64_t cap = p->l2.capacity_bytes;
        assert_true(cap >= (256u << 10) && cap <= (8u << 20));
        assert_true(p->l2.sets_per_slice >= 4);
        assert_true(p->l2.ways >= 2 && p->l2.ways <= 32);
        assert_true(p->l2.slices >= 1 && p->l2.slices <= 128);
        assert_true(p->device.sm_count >= 16 && p->device.sm_count <= 132);
        assert_true(p->memory.page_bytes == (2u << 20));
        double top = p->l2.topology == GX_TOPO_NEAR_FAR ? p->l2.far_hit_cycles : p->l2.hit_cycles;
        assert_true(p->memory.dram_latency_cycles > top);
        assert_true(p->sim.sm_slice_skew_cycles >= 3 * p->sim.jitter_cycles);
        assert_true(p->sim.sm_slice_skew_cycles >= 4 && p->sim.sm_slice_skew_cycles <= 60);
        /* levels consistent with the topology */
        assert_true(p->l2.levels[p->l2.n_levels - 1].capacity_bytes == cap);
        if (p->l2.topology == GX_TOPO_NEAR_FAR) {
            assert_int_equal(p->l2.n_levels, 2);
            assert_true(p->l2.levels[0].capacity_bytes == cap / p->l2.partitions);
            assert_int_equal(p->l2.near_far.copy_to_near, 1);
            assert_int_equal(p->l2.near_far.victims_to_far, 1);
            double ratio = p->l2.far_hit_cycles / p->l2.near_hit_cycles;
            assert_true(ratio >= 1.49 && ratio <= 2.21);
        } else {
            assert_int_equal(p->l2.n_levels, 1);
        }
        /* slice masks: weight 2-10 in the observable bits */
        for (int i = 0; i < p->l2.slice_hash.n_masks; i++) {
            uint64_t obs = p->l2.slice_hash.masks[i] & ((1u << 21) - 1);
            int w = __builtin_popcountll(obs);
            assert_true(w >= 2 && w <= 10);
            if (p->l2.slice_hash.masks[i] >> 21)
                high++;
        }
        /* every (slice, set) pair is reachable within one page: count the
         * distinct pairs over all lines of a page when the page is small enough */
        if ((uint64_t)p->l2.slices * p->l2.sets_per_slice <= 4096 && seed % 10 == 0) {
            uint64_t pairs = (uint64_t)p->l2.slices * p->l2.sets_per_slice;
            unsigned char *seen = calloc(pairs, 1);
            assert_non_null(seen);
            uint64_t distinct = 0;
            for (uint64_t a = 0; a < (2u << 20); a += p->l2.line_bytes) {
                uint64_t k = gx_hash_eval(&p->l2.slice_hash, a) * p->l2.sets_per_slice +
                             gx_hash_eval(&p->l2.set_hash, a);
                assert_true(k < pairs);
                if (!seen[k]++)
                    distinct++;
            }
            assert_true(distinct == pairs);
            free(seen);
        }
        for (size_t c = 0; c < nc; c++)
            if (strcmp(p->l2.policy, gx_policy_candidate(c)) == 0)
                pol_seen[c]++;
        if (gx_is_pow2_u64(p->l2.slices))
            npow2++;
        else
            nonpow2++;
        slices1 += p->l2.slices == 1;
        big_slices += p->l2.slices >= 64;
        uniform += p->l2.topology == GX_TOPO_UNIFORM;
        nearfar += p->l2.topology == GX_TOPO_NEAR_FAR;
        part4 += p->l2.partitions == 4;
        modulo += p->l2.set_hash.modulo != 0;
        line64 += p->l2.line_bytes == 64;
        line128 += p->l2.line_bytes == 128;
        sec_line += p->l2.sector_bytes == p->l2.line_bytes;
        sec32 += p->l2.sector_bytes == 32;
        sec64 += p->l2.sector_bytes == 64;
        quiet += p->sim.jitter_cycles == 0 && p->sim.outlier_rate == 0;
        heavy += p->sim.jitter_cycles >= 6;
        small_skew += p->sim.sm_slice_skew_cycles <= fmax(3 * p->sim.jitter_cycles, 4) + 4;
        big_skew += p->sim.sm_slice_skew_cycles >= 50;
        if (p->l2.ways < min_ways)
            min_ways = p->l2.ways;
        if (p->l2.ways > max_ways)
            max_ways = p->l2.ways;
        gx_profile_free(p);
    }
    fprintf(stderr,
            "pow2 slices %u, non-pow2 %u, 1 slice %u, >=64 %u; uniform %u near-far %u "
            "(4 partitions %u); modulo sets %u; lines 64:%u 128:%u; sectors 32:%u 64:%u line:%u; "
            "quiet %u heavy %u; skew small %u large %u; masks with high bits %u; ways %u..%u\n",
            npow2, nonpow2, slices1, big_slices, uniform, nearfar, part4, modulo, line64, line128,
            sec32, sec64, sec_line, quiet, heavy, small_skew, big_skew, high, min_ways, max_ways);
    assert_true(nonpow2 >= 50 && npow2 >= 50);
    assert_true(uniform >= 50 && nearfar >= 50 && part4 >= 10);
    assert_true(modulo >= 30 && N_SEEDS - modulo >= 30);
    assert_true(line64 >= 50 && line128 >= 50);
    assert_true(sec32 >= 20 && sec64 >= 20 && sec_line >= 20);
    assert_true(quiet >= 20 && heavy >= 20);
    assert_true(small_skew >= 10 && big_skew >= 10);
    assert_true(high >= 20 && slices1 >= 1 && big_slices >= 20);
    assert_true(min_ways == 2 && max_ways == 32);
    for (size_t c = 0; c < nc; c++) {
        if (pol_seen[c] == 0)
            fprintf(stderr, "policy %s never generated\n", gx_policy_candidate(c));
        assert_true(pol_seen[c] > 0);
    }
    free(pol_seen);
}

static void test_reproducible_and_round_trip(void **state)
{
    (void)state;
    for (uint64_t seed = 1000; seed < 1020; seed++) {
        gx_profile *a = gx_generate_profile(seed, NULL), *b = gx_generate_profile(seed, NULL);
        assert_non_null(a);
        assert_non_null(b);
        char *ta = gx_profile_to_json(a), *tb = gx_profile_to_json(b);
        assert_string_equal(ta, tb);
        gx_profile *c = NULL;
        gx_msg m;
        assert_int_equal(gx_profile_parse(ta, "gen.json", &c, &m), GX_OK);
        char *tc = gx_profile_to_json(c);
        assert_string_equal(ta, tc);
        free(ta);
        free(tb);
        free(tc);
        gx_profile_free(a);
        gx_profile_free(b);
        gx_profile_free(c);
    }
    gx_profile *x = gx_generate_profile(1, NULL), *y = gx_generate_profile(2, NULL);
    char *tx = gx_profile_to_json(x), *ty = gx_profile_to_json(y);
    assert_true(strcmp(tx, ty) != 0);
    free(tx);
    free(ty);
    gx_profile_free(x);
    gx_profile_free(y);
}

static void test_options(void **state)
{
    (void)state;
    gx_generate_opts o;
    gx_generate_opts_default(&o);
    o.policy = "lru";
    o.max_capacity_bytes = 1u << 20;
    o.unobservable_bits = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        gx_profile *p = gx_generate_profile(seed, &o);
        assert_non_null(p);
        assert_string_equal(p->l2.policy, "lru");
        assert_true(p->l2.capacity_bytes <= (1u << 20));
        for (int i = 0; i < p->l2.slice_hash.n_masks; i++)
            assert_true(p->l2.slice_hash.masks[i] >> 21 == 0);
        for (int i = 0; i < p->l2.set_hash.n_masks; i++)
            assert_true(p->l2.set_hash.masks[i] >> 21 == 0);
        gx_profile_free(p);
    }
    o.min_capacity_bytes = 2u << 20; /* min > max: impossible */
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_generate(1, &o, &p, &m), GX_ERANGE);
    assert_null(p);
}

static int popcount64(uint64_t v)
{
    return __builtin_popcountll(v);
}

static void test_wide_mode(void **state)
{
    (void)state;
    gx_generate_opts o;
    gx_generate_opts_wide(&o);
    unsigned masks = 0, high = 0, heavy = 0, big_slices = 0, many_sets = 0, modulo = 0,
             nf_copy = 0, nf_nocopy = 0, sec_half = 0, sec_line = 0, sec32 = 0;
    uint32_t max_ways = 0;
    for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
        gx_profile *p = NULL;
        gx_msg m;
        gx_msg_clear(&m);
        int rc = gx_generate(seed, &o, &p, &m);
        if (rc != GX_OK)
            fprintf(stderr, "wide seed %llu: %s\n", (unsigned long long)seed, m.text);
        assert_int_equal(rc, GX_OK);
        assert_int_equal(gx_profile_validate(p, &m), GX_OK);
        const __typeof__(p->l2) *l = &p->l2;
        assert_true(l->capacity_bytes >= (256u << 10) && l->capacity_bytes <= (64u << 20));
        assert_true(l->ways >= 2 && l->ways <= 40);
        assert_true(l->slices >= 1 && l->slices <= 160);
        if (l->ways > max_ways)
            max_ways = l->ways;
        big_slices += l->slices > 128;
        const int line_bits = gx_log2_ceil_u64(l->line_bytes);
        sec32 += l->sector_bytes == 32;
        sec_half += l->sector_bytes == l->line_bytes / 2 && l->sector_bytes != 32;
        sec_line += l->sector_bytes == l->line_bytes;
        const gx_hash_fn *fn[2] = {&l->slice_hash, &l->set_hash};
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < fn[h]->n_masks; i++) {
                uint64_t mk = fn[h]->masks[i];
                int w = popcount64(mk);
                int lo = h == 1 && l->set_hash.modulo ? 1 : 2, hi = h == 1 && l->set_hash.modulo ? 3 : 12;
                assert_true(w >= lo && w <= hi);
                assert_true(mk >> 34 == 0 && (mk & ((1ull << line_bits) - 1)) == 0);
                masks++;
                high += (mk >> 21) != 0;
                heavy += w >= 7;
            }
        if (l->set_hash.modulo) {
            modulo++;
            assert_true(!gx_is_pow2_u64(l->sets_per_slice));
            many_sets += l->sets_per_slice >= 200;
        }
        if (l->topology == GX_TOPO_NEAR_FAR) {
            if (l->near_far.copy_to_near) {
                nf_copy++;
                assert_int_equal(l->n_levels, 2);
            } else {
                nf_nocopy++;
                assert_int_equal(l->n_levels, 1); /* one SM sees one level at the mean */
                assert_true(l->levels[0].latency_cycles > l->near_hit_cycles &&
                            l->levels[0].latency_cycles < l->far_hit_cycles);
            }
        }
        gx_profile_free(p);
    }
    fprintf(stderr, "wide: %u masks, %u with bits above the page, %u of weight >= 7; slices > 128: "
                    "%u; modulo %u (>= 200 sets %u); near-far copy %u, no copy %u; ways up to %u; "
                    "sectors 32:%u half:%u line:%u\n",
            masks, high, heavy, big_slices, modulo, many_sets, nf_copy, nf_nocopy, max_ways, sec32,
            sec_half, sec_line);
    assert_true(high * 10 >= masks * 7); /* most masks reach above the page */
    assert_true(heavy * 5 >= masks);
    assert_true(big_slices >= 5 && many_sets >= 5 && modulo >= 100);
    assert_true(nf_copy >= 30 && nf_nocopy >= 30);
    assert_true(max_ways == 40);
    assert_true(sec32 >= 20 && sec_half >= 20 && sec_line >= 20);
    /* a seed names one profile per mode */
    gx_profile *a = gx_generate_profile(7, &o), *b = gx_generate_profile(7, NULL);
    assert_non_null(a);
    assert_non_null(b);
    char *ta = gx_profile_to_json(a), *tb = gx_profile_to_json(b);
    assert_true(strcmp(ta, tb) != 0);
    free(ta);
    free(tb);
    gx_profile_free(a);
    gx_profile_free(b);
    assert_int_equal(gx_generate_mode_parse("wide"), GX_GEN_WIDE);
    assert_int_equal(gx_generate_mode_parse("classic"), GX_GEN_CLASSIC);
    assert_int_equal(gx_generate_mode_parse("Wide"), -1);
    assert_int_equal(gx_generate_mode_parse(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_500_seeds_validate_and_cover),
        cmocka_unit_test(test_reproducible_and_round_trip),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_wide_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
