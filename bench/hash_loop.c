/* hash_loop.c - closing the loop of the slice hash on any target (issue 4):
 * learn the slice classes, then take a FRESHLY allocated region, predict
 * the class of every line of each of its pages from at most 1% of that
 * page's lines, and compare with full fresh measurements of every line.
 *
 * Usage: hash_loop [--target T] [--pages P] [--seed S] [--line B] [--sms N] [-o F.csv]
 *   T default cuda:0, P default 1 (one 2 MiB region), line default 128,
 *   N the SMs of a fingerprint (default 0: the learner's pilot picks 16 or 32).
 *
 * Method: gx_slicepred_learn on a 512 MiB arena (as discovery's slices
 * stage does); a new arena (new allocation, unseen frames); per page:
 * gx_slicepred_identify with at most 1% of its lines, gx_slicepred_predict
 * for every line, then every line measured twice, fresh (A and B, the
 * same classifier discovery uses). A != B on a line means no prediction
 * can match "a full fresh measurement" there: the chip's own
 * repeatability bounds what exact prediction can mean.
 *
 * Prints the figures; with -o, one CSV row per line (page, offset,
 * predicted, measured A, measured B). Exit 0 when every line's prediction
 * equals measurement A and the budget held; 1 otherwise; 2 bad usage;
 * 3 no usable device. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/clock.h"
#include "gpuxray/slicepredict.h"
#include "gpuxray/target.h"

static int usage(void)
{
    fprintf(stderr, "usage: hash_loop [--target T] [--pages P] [--seed S] [--line B] [--sms N] "
                    "[-o F.csv]\n");
    return 2;
}

static int fail(const char *what, const gx_msg *m, int rc)
{
    fprintf(stderr, "hash_loop: %s: %s\n", what, m->text);
    return rc == GX_ENODEV ? 3 : 1;
}

int main(int argc, char **argv)
{
    const char *spec = "cuda:0", *out = NULL;
    unsigned long pages = 1, line = 128, sms = 0;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            return usage();
        const char *a = argv[i], *v = argv[i + 1];
        char *end = NULL;
        if (!strcmp(a, "--target"))
            spec = v;
        else if (!strcmp(a, "-o"))
            out = v;
        else if (!strcmp(a, "--pages") && (pages = strtoul(v, &end, 10)) > 0 && !*end)
            ;
        else if (!strcmp(a, "--seed") && ((seed = strtoull(v, &end, 10)), !*end))
            ;
        else if (!strcmp(a, "--line") && (line = strtoul(v, &end, 10)) > 0 && !*end)
            ;
        else if (!strcmp(a, "--sms") && ((sms = strtoul(v, &end, 10)), !*end) && sms <= 1024)
            ;
        else
            return usage();
    }
    gx_msg m;
    gx_msg_clear(&m);
    gx_target *t = NULL;
    int rc = gx_target_open(spec, seed, &t, &m);
    if (rc != GX_OK)
        return fail("open", &m, rc);
    const uint64_t page = gx_target_get_info(t)->page_bytes;
    const uint64_t lpp = page / line, budget = lpp / 100;

    double t0 = gx_monotonic_seconds();
    gx_target_stats s0, s1, s2;
    gx_target_get_stats(t, &s0);
    if ((rc = gx_target_arena(t, 256 * page, &m)) != GX_OK)
        return fail("arena", &m, rc);
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = (uint32_t)line;
    o.seed = seed;
    o.n_sms = (uint32_t)sms;
    gx_slicepred *sp = NULL;
    if ((rc = gx_slicepred_learn(t, &o, &sp, &m)) != GX_OK)
        return fail("learning", &m, rc);
    gx_target_get_stats(t, &s1);
    double t_learn = gx_monotonic_seconds() - t0;
    gx_slicepred_summary sum;
    gx_slicepred_get_summary(sp, &sum);

    if ((rc = gx_target_arena(t, pages * page, &m)) != GX_OK)
        return fail("fresh arena", &m, rc);
    uint64_t *offs = malloc(lpp * sizeof *offs);
    int *pred = malloc(lpp * sizeof *pred), *ma = malloc(lpp * sizeof *ma),
        *mb = malloc(lpp * sizeof *mb);
    FILE *f = out ? fopen(out, "w") : NULL;
    if (!offs || !pred || !ma || !mb || (out && !f)) {
        fprintf(stderr, "hash_loop: out of memory or cannot write %s\n", out ? out : "-");
        return 1;
    }
    if (f)
        fprintf(f, "page,offset,predicted,measured_a,measured_b\n");
    uint64_t n_all = 0, pa = 0, pb = 0, ab = 0, stable_ok = 0, unknown = 0, id_max = 0;
    uint64_t unidentified = 0;
    t0 = gx_monotonic_seconds();
    for (uint64_t p = 0; p < pages; p++) {
        gx_slicepred_page pg;
        uint64_t base = p * page;
        rc = gx_slicepred_identify(sp, base, (uint32_t)budget, &pg, &m);
        if (rc == GX_EUNSURE) {
            unidentified++;
            fprintf(stderr, "hash_loop: page %" PRIu64 " not identified: %s\n", p, m.text);
            continue;
        }
        if (rc != GX_OK)
            return fail("identify", &m, rc);
        if (pg.lines_measured > id_max)
            id_max = pg.lines_measured;
        for (uint64_t i = 0; i < lpp; i++) {
            offs[i] = base + i * line;
            pred[i] = gx_slicepred_predict(sp, &pg, offs[i]);
        }
        if ((rc = gx_slicepred_measure(sp, offs, (size_t)lpp, ma, &m)) != GX_OK ||
            (rc = gx_slicepred_measure(sp, offs, (size_t)lpp, mb, &m)) != GX_OK)
            return fail("measure", &m, rc);
        for (uint64_t i = 0; i < lpp; i++) {
            n_all++;
            pa += pred[i] == ma[i];
            pb += pred[i] == mb[i];
            ab += ma[i] == mb[i];
            stable_ok += ma[i] == mb[i] && pred[i] == ma[i];
            unknown += ma[i] < 0 || mb[i] < 0;
            if (f)
                fprintf(f, "%" PRIu64 ",%" PRIu64 ",%d,%d,%d\n", p, i * line, pred[i], ma[i],
                        mb[i]);
        }
    }
    gx_target_get_stats(t, &s2);
    double t_pred = gx_monotonic_seconds() - t0;
    if (f)
        fclose(f);
    printf("target               %s (%s)\n", spec, gx_target_get_info(t)->name);
    printf("learned              %u classes, %d masks%s, %u components, %u pages; %u SMs x %u "
           "reloads; held-out %" PRIu64 "/%" PRIu64 "\n",
           sum.classes, sum.k, sum.linear ? "" : " + table", sum.components, sum.pages_learned,
           sum.sms, sum.reps, sum.verified - sum.verify_errors, sum.verified);
    printf("learning cost        %.2f s, %" PRIu64 " accesses\n", t_learn,
           s1.accesses - s0.accesses);
    printf("fresh region         %lu page(s) of %" PRIu64 " lines; %" PRIu64 " not identified\n",
           pages, lpp, unidentified);
    printf("measured per page    max %" PRIu64 " lines = %.3f%% (bar 1%%)\n", id_max,
           100.0 * (double)id_max / (double)lpp);
    double d = n_all ? (double)n_all : 1.0;
    printf("prediction = fresh A %" PRIu64 "/%" PRIu64 " (%.3f%%)\n", pa, n_all, 100.0 * (double)pa / d);
    printf("prediction = fresh B %" PRIu64 "/%" PRIu64 " (%.3f%%)\n", pb, n_all, 100.0 * (double)pb / d);
    printf("fresh A = fresh B    %" PRIu64 "/%" PRIu64 " (%.3f%%): the chip's repeatability\n", ab,
           n_all, 100.0 * (double)ab / d);
    printf("prediction = A where A = B  %" PRIu64 "/%" PRIu64 "\n", stable_ok, ab);
    printf("unclassified         %" PRIu64 " line measurements\n", unknown);
    printf("prediction + check   %.2f s, %" PRIu64 " accesses\n", t_pred,
           s2.accesses - s1.accesses);
    int ok = n_all == pages * lpp && pa == n_all && id_max <= budget;
    printf("bar                  %s\n", ok ? "PASS" : "FAIL");
    free(offs);
    free(pred);
    free(ma);
    free(mb);
    gx_slicepred_free(sp);
    gx_target_close(t);
    return ok ? 0 : 1;
}
