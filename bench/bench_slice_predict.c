/* bench_slice_predict.c - the slice-prediction bar of issue 3 (stage 5):
 * the recovered hash predicts the slice of 100 000 held-out lines, in pages
 * it has not seen, with no error, after measuring at most 1% of each new
 * page's lines.
 *
 * Usage: bench_slice_predict [PROFILE.json | gen:SEED] [LINES] [SEED]
 *   default profiles/seed-ampere-6mb.json, 100000 lines.
 *
 * Method: learn (gx_slicepred_learn) on one arena; then a FRESH arena (new,
 * unknown physical frames) of enough pages for LINES lines; per page:
 * identify it from at most 1% of its lines, predict the held-out lines
 * (distinct random lines, none of those the identification measured), and
 * check each prediction against (a) a fresh fingerprint measurement of the
 * line and (b) the simulator's truth (the bench, unlike discovery, may read
 * the profile: a prediction must equal the truth up to one relabelling of
 * slices for the whole run and a per-page XOR constant on the truth's hash
 * bits for the frame it cannot see).
 *
 * Prints the figures; exit 0 when both error counts are 0 and every page
 * stayed within 1%, 1 otherwise, 2 on bad usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/clock.h"
#include "gpuxray/generate.h"
#include "gpuxray/hash.h"
#include "gpuxray/profile.h"
#include "gpuxray/rng.h"
#include "gpuxray/slicepredict.h"
#include "gpuxray/target.h"

#ifndef GX_SOURCE_DIR
#define GX_SOURCE_DIR "."
#endif

/* The truth's hash bits of in-page offset x (frame unknown: bits above the
 * page left out), and the truth slice under a constant c on those bits. */
static uint64_t truth_bits(const gx_hash_fn *h, uint64_t page_bytes, uint64_t x)
{
    uint64_t b = 0;
    for (int i = 0; i < h->n_masks; i++)
        b |= (uint64_t)gx_parity64(x & h->masks[i] & (page_bytes - 1)) << i;
    return b;
}

static int truth_slice(const gx_hash_fn *h, uint64_t bits)
{
    return h->table ? (int)h->table[bits] : (int)bits;
}

/* Predictions pred[] of lines xs[] agree with the truth for some constant c
 * (per page), with a global relabelling p2t[] (-1 = unset; extended here). */
static int truth_consistent(const gx_profile *tp, uint64_t page_bytes, uint32_t spp,
                            const uint64_t *xs, const int *pred, size_t n, int *p2t, int np)
{
    const gx_hash_fn *h = &tp->l2.slice_hash;
    uint64_t ncs = (uint64_t)1 << h->n_masks;
    int *trial = malloc((size_t)np * sizeof *trial);
    if (!trial)
        return 0;
    int ok = 0;
    for (uint64_t c = 0; c < ncs && !ok; c++) {
        memcpy(trial, p2t, (size_t)np * sizeof *trial);
        ok = 1;
        for (size_t i = 0; i < n && ok; i++) {
            int t = truth_slice(h, truth_bits(h, page_bytes, xs[i]) ^ c);
            if (spp)
                t %= (int)spp; /* near-far copies: classes within a partition */
            if (pred[i] < 0 || pred[i] >= np)
                ok = 0;
            else if (trial[pred[i]] < 0)
                trial[pred[i]] = t;
            else
                ok = trial[pred[i]] == t;
        }
    }
    if (ok)
        memcpy(p2t, trial, (size_t)np * sizeof *trial);
    free(trial);
    return ok;
}

int main(int argc, char **argv)
{
    const char *arg = argc > 1 ? argv[1] : GX_SOURCE_DIR "/profiles/seed-ampere-6mb.json";
    long lines_total = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    if (lines_total < 1) {
        fprintf(stderr, "usage: bench_slice_predict [PROFILE.json | gen:SEED] [LINES] [SEED]\n");
        return 2;
    }
    gx_msg msg;
    gx_profile *tp = NULL;
    char path[4096], tmp[64] = "";
    if (!strncmp(arg, "gen:", 4)) {
        if (gx_generate(strtoull(arg + 4, NULL, 10), NULL, &tp, &msg) != GX_OK) {
            fprintf(stderr, "bench_slice_predict: %s\n", msg.text);
            return 2;
        }
        const char *dir = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "bench-slice-%ld.json", (long)getpid());
        snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/tmp", tmp);
        if (gx_profile_save(tp, path, &msg) != GX_OK) {
            fprintf(stderr, "bench_slice_predict: %s\n", msg.text);
            return 2;
        }
    } else {
        snprintf(path, sizeof path, "%s", arg);
        if (gx_profile_load(path, &tp, &msg) != GX_OK) {
            fprintf(stderr, "bench_slice_predict: %s\n", msg.text);
            return 2;
        }
    }
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", path);
    gx_target *t = NULL;
    if (gx_target_open(spec, seed, &t, &msg) != GX_OK) {
        fprintf(stderr, "bench_slice_predict: %s\n", msg.text);
        return 2;
    }
    if (tmp[0])
        remove(path);
    const uint64_t page = gx_target_get_info(t)->page_bytes;
    const uint32_t line = tp->l2.line_bytes;
    const uint64_t page_lines = page / line;
    const uint32_t budget = (uint32_t)(page_lines / 100);

    /* learn */
    double t0 = gx_monotonic_seconds();
    gx_target_stats s0, s1, s2;
    int rc = gx_target_arena(t, 256 * page, &msg); /* room for many page components */
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = line;
    o.seed = seed;
    gx_slicepred *sp = NULL;
    gx_target_get_stats(t, &s0);
    if (rc == GX_OK)
        rc = gx_slicepred_learn(t, &o, &sp, &msg);
    if (rc != GX_OK) {
        fprintf(stderr, "bench_slice_predict: learning failed: %s\n", msg.text);
        return 1;
    }
    gx_target_get_stats(t, &s1);
    double t_learn = gx_monotonic_seconds() - t0;
    gx_slicepred_summary sum;
    gx_slicepred_get_summary(sp, &sum);

    /* new pages */
    uint64_t per_page = page_lines - budget; /* room for held-out lines */
    uint64_t pages = ((uint64_t)lines_total + per_page - 1) / per_page;
    rc = gx_target_arena(t, pages * page, &msg);
    if (rc != GX_OK) {
        fprintf(stderr, "bench_slice_predict: arena: %s\n", msg.text);
        return 1;
    }
    uint32_t spp = 0;
    int np = (int)sum.classes + 1;
    int *p2t = malloc((size_t)np * sizeof *p2t);
    uint64_t *offs = malloc(page_lines * sizeof *offs), *xs = malloc(page_lines * sizeof *xs);
    int *meas = malloc(page_lines * sizeof *meas), *pred = malloc(page_lines * sizeof *pred);
    if (!p2t || !offs || !xs || !meas || !pred) {
        fprintf(stderr, "bench_slice_predict: out of memory\n");
        return 1;
    }
    for (int i = 0; i < np; i++)
        p2t[i] = -1;
    if (tp->l2.topology == GX_TOPO_NEAR_FAR && tp->l2.near_far.copy_to_near > 0 &&
        tp->l2.partitions > 1 && sum.classes * tp->l2.partitions == tp->l2.slices)
        spp = tp->l2.slices / tp->l2.partitions;
    gx_rng r;
    gx_rng_seed(&r, seed ^ 0xbe7c4ULL);
    uint64_t done = 0, err_meas = 0, err_truth = 0, id_max = 0, id_total = 0, unknown = 0;
    t0 = gx_monotonic_seconds();
    for (uint64_t p = 0; p < pages && rc == GX_OK; p++) {
        gx_slicepred_page pg;
        uint64_t base = p * page;
        rc = gx_slicepred_identify(sp, base, budget, &pg, &msg);
        if (rc != GX_OK)
            break;
        id_total += pg.lines_measured;
        if (pg.lines_measured > id_max)
            id_max = pg.lines_measured;
        /* held-out: a random subset of the page's lines */
        uint64_t n = (uint64_t)lines_total - done < per_page ? (uint64_t)lines_total - done
                                                              : per_page;
        for (uint64_t i = 0; i < page_lines; i++)
            xs[i] = i * line;
        gx_rng_shuffle_u64(&r, xs, page_lines);
        for (uint64_t i = 0; i < n; i++) {
            offs[i] = base + xs[i];
            pred[i] = gx_slicepred_predict(sp, &pg, offs[i]);
        }
        rc = gx_slicepred_measure(sp, offs, (size_t)n, meas, &msg);
        for (uint64_t i = 0; rc == GX_OK && i < n; i++) {
            err_meas += meas[i] != pred[i];
            unknown += meas[i] < 0;
        }
        if (rc == GX_OK && !truth_consistent(tp, page, spp, xs, pred, (size_t)n, p2t, np))
            err_truth += n; /* the page as a whole disagrees with the truth */
        done += n;
    }
    gx_target_get_stats(t, &s2);
    double t_pred = gx_monotonic_seconds() - t0;
    if (rc != GX_OK) {
        fprintf(stderr, "bench_slice_predict: %s\n", msg.text);
        return 1;
    }
    printf("profile              %s\n", tp->name);
    printf("learned              %u classes, %d masks%s, %u components; %u SMs x %u reloads\n",
           sum.classes, sum.k, sum.linear ? "" : " + table", sum.components, sum.sms,
           sum.reps);
    printf("learning cost        %.2f s, %" PRIu64 " accesses, %" PRIu64 " calls, %" PRIu64
           " lines; held-out check %" PRIu64 "/%" PRIu64 "\n",
           t_learn, s1.accesses - s0.accesses, s1.calls - s0.calls, sum.lines_measured,
           sum.verified - sum.verify_errors, sum.verified);
    printf("new pages            %" PRIu64 " (fresh arena, unseen frames)\n", pages);
    printf("held-out lines       %" PRIu64 "\n", done);
    printf("measured per page    max %" PRIu64 " lines = %.3f%% (bar 1%%), mean %.1f\n", id_max,
           100.0 * (double)id_max / (double)page_lines, (double)id_total / (double)pages);
    printf("errors vs fresh fingerprint   %" PRIu64 " (%" PRIu64 " unknown class)\n", err_meas,
           unknown);
    printf("errors vs simulator truth     %" PRIu64 "\n", err_truth);
    printf("prediction + check   %.2f s, %" PRIu64 " accesses\n", t_pred,
           s2.accesses - s1.accesses);
    int ok = err_meas == 0 && err_truth == 0 && id_max <= budget && done == (uint64_t)lines_total;
    printf("bar                  %s\n", ok ? "PASS" : "FAIL");
    free(p2t);
    free(offs);
    free(xs);
    free(meas);
    free(pred);
    gx_slicepred_free(sp);
    gx_target_close(t);
    gx_profile_free(tp);
    return ok ? 0 : 1;
}
