/* slice_capacity.c - the capacity of one L2 slice, seen from one SM, through
 * the public target API: the lines of one slice are found by contention
 * (gx_target_contend, src/infer/slice/slice_contend.h), then chased.
 *
 *   slice_capacity [--target T] [--pages P] [--line B] [--sm S] [--slices K]
 *                  [--step N] [--reps R] [--seed N] [-o CSV] [--lines CSV]
 *
 * For each of K slices (the slice of page 0's first line, then of the first
 * line of page 0 that no earlier slice holds): every line of pages 0..P-1 is
 * joined to the slice of that target line (the lines its hammering slows);
 * the slice's lines, in address order, give chains of their first N lines
 * (N = step, 2 step, ... up to all of them) chased in a random cyclic order
 * from SM S. While N lines fit in the slice's sets (sets x ways lines, when
 * the set index spreads consecutive lines of a slice evenly) every step is a
 * hit; past it the chase's steps miss the slice (a far partition's copy or
 * DRAM). So the knee of the curve at N = sets x ways gives the sets per
 * slice without knowing the set index, and the curve of each slice is the
 * raw data for the capacity cross-check (slices x sets x ways x line against
 * the levels) of issue 12.
 *
 * --strides M (the set index's period, issue 12 item 3): then, for every
 * stride d = 1..M, the chase over the slice's lines i0, i0 + d, i0 + 2d, ...
 * (K = --chain of them, fewer when the slice has not K d lines; i0 = 0 and
 * i0 = d / 2). When the set index gives consecutive lines of a slice (in
 * address order) consecutive sets modulo S, the lines d = S apart share one
 * set: K > 2 x ways of them miss the whole L2 (DRAM), d = S / 2 puts them in
 * two sets (the near level misses), any d sharing no large factor with S
 * spreads them (hits). Any other index shows as another spectrum; the rows
 * are the raw data. Then, for the stride of the slowest chase (d >= 2), every
 * start i0 = 0..d-1 is chased (each of the d classes the period would give),
 * and K lines drawn at random as the control.
 *
 * --classes C (the set index itself): then up to C congruence classes (sets)
 * of the slice's lines by minimal eviction sets and cyclic runs
 * (gx_setclass_partition, src/infer/evset/setclass.h); when the lines run
 * out, the classes are the slice's sets. Output --classes-csv:
 * slice,class,offset.
 *
 * Output: a summary line per slice on stdout; CSV rows
 * slice,target_offset,lines,chain,mean_cycles; --lines CSV: slice,offset for
 * every line found; --strides-csv CSV: slice,kind,stride,start,k,mean_cycles
 * (kind: spectrum, period, random). Exit codes: 0 ok, 1 no contention or a measurement
 * failed, 2 bad usage, 3 the target could not be opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/clock.h"
#include "gpuxray/error.h"
#include "gpuxray/parse.h"
#include "gpuxray/rng.h"
#include "gpuxray/target.h"
#include "infer/evset/setclass.h"
#include "infer/slice/slice_contend.h"

#define MAX_SLICES 16u
#define MAX_PAGES 256u
/* Lines a stride's chase takes: past 2 x ways of one set (32 on an H200,
 * near + far) with room, so one shared set misses the whole L2 */
#define STRIDE_CHAIN 48u

typedef struct opts {
    const char *spec, *csv, *lines_csv, *strides_csv, *classes_csv;
    uint64_t pages, line, sm, slices, step, reps, seed, strides, chain, classes, ways;
} opts;

/* A non-negative integer option (the project's strict parser). */
static int u64_opt(const char *name, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    gx_msg m;
    if (gx_parse_u64(name, v, lo, hi, GX_NUM_PLAIN, out, &m) != GX_OK) {
        fprintf(stderr, "slice_capacity: %s\n", m.text);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){"cuda", NULL, NULL, NULL, NULL, 32, 128, 0, 2, 128, 4, 1, 0, STRIDE_CHAIN, 0, 16};
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "slice_capacity: %s needs a value\n", a);
            return -1;
        }
        int bad = 0;
        if (!strcmp(a, "--target"))
            o->spec = v;
        else if (!strcmp(a, "-o"))
            o->csv = v;
        else if (!strcmp(a, "--lines"))
            o->lines_csv = v;
        else if (!strcmp(a, "--strides-csv"))
            o->strides_csv = v;
        else if (!strcmp(a, "--strides"))
            bad = u64_opt(a, v, 1, 1u << 16, &o->strides);
        else if (!strcmp(a, "--classes-csv"))
            o->classes_csv = v;
        else if (!strcmp(a, "--classes"))
            bad = u64_opt(a, v, 1, 1u << 16, &o->classes);
        else if (!strcmp(a, "--ways"))
            bad = u64_opt(a, v, 1, 256, &o->ways);
        else if (!strcmp(a, "--chain"))
            bad = u64_opt(a, v, 2, 4096, &o->chain);
        else if (!strcmp(a, "--pages"))
            bad = u64_opt(a, v, 1, MAX_PAGES, &o->pages);
        else if (!strcmp(a, "--line"))
            bad = u64_opt(a, v, 32, 4096, &o->line) || (o->line & (o->line - 1));
        else if (!strcmp(a, "--sm"))
            bad = u64_opt(a, v, 0, 4095, &o->sm);
        else if (!strcmp(a, "--slices"))
            bad = u64_opt(a, v, 1, MAX_SLICES, &o->slices);
        else if (!strcmp(a, "--step"))
            bad = u64_opt(a, v, 1, 1u << 20, &o->step);
        else if (!strcmp(a, "--reps"))
            bad = u64_opt(a, v, 1, GX_CONTEND_MAX_REPS, &o->reps);
        else if (!strcmp(a, "--seed"))
            bad = u64_opt(a, v, 0, UINT64_MAX, &o->seed);
        else {
            fprintf(stderr, "slice_capacity: unknown option %s\n", a);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "slice_capacity: bad value for %s\n", a);
            return -1;
        }
    }
    return 0;
}

/* The lines of pages 0..pages-1 that the slice of `target` holds, in address
 * order: *n_out of them into out (room for all lines). */
static int slice_lines(gx_target *t, const sc_opts *so, uint64_t target, uint64_t page,
                       uint64_t pages, uint64_t *buf, int *cls, uint64_t *out, size_t *n_out,
                       gx_msg *msg)
{
    sc_partition *p = calloc(1, sizeof *p);
    if (!p)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    double base[2];
    gx_contend_req q = {target, 0, &target, 1, so->reps, so->sm};
    int rc = gx_target_contend(t, &q, &base[0], msg);
    if (rc == GX_OK)
        rc = gx_target_contend(t, &q, &base[1], msg);
    p->classes = 1;
    p->first[0] = target;
    p->first_base[0] = base[0] < base[1] ? base[0] : base[1];
    size_t nl = (size_t)(page / so->line_bytes), n = 0;
    for (uint64_t pg = 0; rc == GX_OK && pg < pages; pg++) {
        size_t none = 0, twice = 0;
        sc_page_lines(pg * page, so->line_bytes, nl, buf);
        if ((rc = sc_join_lines(t, so, p, buf, nl, cls, &none, &twice, msg)) != GX_OK)
            break;
        for (size_t i = 0; i < nl; i++)
            if (cls[i] == 0)
                out[n++] = buf[i];
    }
    free(p);
    *n_out = n;
    return rc;
}

/* Mean cycles of a chase over the first n lines of v in a random cyclic order. */
static int chase_prefix(gx_target *t, const uint64_t *v, size_t n, uint32_t sm, gx_rng *r,
                        uint64_t *chain, double *mean, gx_msg *msg)
{
    memcpy(chain, v, n * sizeof *v);
    gx_rng_shuffle_u64(r, chain, n);
    gx_chase_req q = {chain, n, 2, 2, 0, sm};
    return gx_target_chase(t, &q, mean, msg);
}

static int in_list(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* The chase over v[i0], v[i0 + d], ... (k of them) into *mean. */
static int chase_stride(gx_target *t, const uint64_t *v, size_t i0, size_t d, size_t k,
                        uint32_t sm, gx_rng *r, uint64_t *chain, double *mean, gx_msg *msg)
{
    for (size_t j = 0; j < k; j++)
        chain[j] = v[i0 + j * d];
    gx_rng_shuffle_u64(r, chain, k);
    gx_chase_req q = {chain, k, 2, 2, 0, sm};
    return gx_target_chase(t, &q, mean, msg);
}

/* Chains of a stride's start: at most want, as many as the n lines hold. */
static size_t stride_k(size_t n, size_t i0, size_t d, size_t want)
{
    size_t k = i0 < n ? (n - 1 - i0) / d + 1 : 0;
    return k < want ? k : want;
}

/* --strides: the spectrum over d = 1..max, then every start of the slowest
 * stride and a random control (rows into csv; see the opening note). */
static int stride_spectrum(gx_target *t, const opts *o, uint64_t slice, const uint64_t *v,
                           size_t n, gx_rng *r, uint64_t *chain, FILE *csv, gx_msg *msg)
{
    double worst = -1;
    size_t worst_d = 0;
    for (size_t d = 1; d <= o->strides; d++) {
        for (size_t s = 0; s < 2; s++) {
            size_t i0 = s ? d / 2 : 0, k = stride_k(n, i0, d, o->chain);
            double mean = 0;
            if ((s && i0 == 0) || k < 2)
                continue;
            int rc = chase_stride(t, v, i0, d, k, (uint32_t)o->sm, r, chain, &mean, msg);
            if (rc != GX_OK)
                return rc;
            if (csv)
                fprintf(csv, "%llu,spectrum,%zu,%zu,%zu,%.2f\n", (unsigned long long)slice, d,
                        i0, k, mean);
            if (d >= 2 && k == o->chain && mean > worst) {
                worst = mean;
                worst_d = d;
            }
        }
    }
    double lo = 1e300, hi = 0;
    for (size_t i0 = 0; i0 < worst_d; i0++) {
        size_t k = stride_k(n, i0, worst_d, o->chain);
        double mean = 0;
        int rc = chase_stride(t, v, i0, worst_d, k, (uint32_t)o->sm, r, chain, &mean, msg);
        if (rc != GX_OK)
            return rc;
        lo = mean < lo ? mean : lo;
        hi = mean > hi ? mean : hi;
        if (csv)
            fprintf(csv, "%llu,period,%zu,%zu,%zu,%.2f\n", (unsigned long long)slice, worst_d,
                    i0, k, mean);
    }
    double ctl = 0;
    if (n >= o->chain) {
        memcpy(chain, v, n * sizeof *v);
        gx_rng_shuffle_u64(r, chain, n); /* the first chain lines: a random draw */
        gx_chase_req q = {chain, (size_t)o->chain, 2, 2, 0, (uint32_t)o->sm};
        int rc = gx_target_chase(t, &q, &ctl, msg);
        if (rc != GX_OK)
            return rc;
        if (csv)
            fprintf(csv, "%llu,random,0,0,%llu,%.2f\n", (unsigned long long)slice,
                    (unsigned long long)o->chain, ctl);
    }
    printf("slice %llu: strides 1..%llu, slowest %zu (%.1f cycles); its %zu starts %.1f..%.1f; "
           "%llu random lines %.1f\n",
           (unsigned long long)slice, (unsigned long long)o->strides, worst_d, worst, worst_d,
           lo, hi, (unsigned long long)o->chain, ctl);
    return GX_OK;
}

/* --classes: up to o->classes congruence classes of the n lines v
 * (gx_setclass_partition), rows slice,class,offset in the order found. */
static int set_classes(gx_target *t, const opts *o, uint64_t slice, const uint64_t *v, size_t n,
                       gx_rng *r, FILE *csv, gx_msg *msg)
{
    int32_t *cls = malloc((n ? n : 1) * sizeof *cls);
    if (!cls)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    gx_setclass_result res;
    double t0 = gx_monotonic_seconds();
    int rc = gx_setclass_partition(t, v, n, (uint32_t)o->sm, (uint32_t)o->ways,
                                   (size_t)o->classes, r, cls, &res, msg);
    if (rc == GX_OK) {
        printf("classes: near reload %.0f cycles, after the slice's lines %.0f: threshold %.0f\n",
               res.near_cycles, res.miss_cycles, res.threshold);
        printf("slice %llu: %zu classes of %zu..%zu lines (%zu tries unsure), %zu of %zu lines "
               "left (%.1f s, %llu launches)\n",
               (unsigned long long)slice, res.classes, res.min_size, res.max_size, res.unsure,
               res.unassigned, n, gx_monotonic_seconds() - t0, (unsigned long long)res.launches);
        for (size_t k = 0; csv && k < res.classes; k++)
            for (size_t i = 0; i < n; i++)
                if (cls[i] == (int32_t)k)
                    fprintf(csv, "%llu,%zu,%llu\n", (unsigned long long)slice, k,
                            (unsigned long long)v[i]);
    }
    free(cls);
    return rc;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: slice_capacity [--target T] [--pages P] [--line B] [--sm S] "
                        "[--slices K] [--step N] [--reps R] [--seed N] [-o CSV] [--lines CSV] "
                        "[--strides M [--chain K] [--strides-csv CSV]] "
                        "[--classes C [--ways W] [--classes-csv CSV]]\n");
        return 2;
    }
    gx_target *t = NULL;
    gx_msg msg = {0};
    if (gx_target_open(o.spec, o.seed, &t, &msg) != GX_OK) {
        fprintf(stderr, "slice_capacity: %s\n", msg.text);
        return 3;
    }
    const gx_target_info *info = gx_target_get_info(t);
    uint64_t page = info->page_bytes ? info->page_bytes : (2ULL << 20);
    size_t nl = (size_t)(page / o.line), all = nl * (size_t)o.pages;
    uint64_t *buf = malloc(nl * sizeof *buf), *found = malloc(all * sizeof *found);
    uint64_t *chain = malloc(all * sizeof *chain);
    uint64_t *mine[MAX_SLICES] = {0};
    size_t nmine[MAX_SLICES] = {0};
    int *cls = malloc(nl * sizeof *cls), rc = 1;
    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL, *lcsv = o.lines_csv ? fopen(o.lines_csv, "w") : NULL;
    FILE *scsv = o.strides_csv ? fopen(o.strides_csv, "w") : NULL;
    FILE *ccsv = o.classes_csv ? fopen(o.classes_csv, "w") : NULL;
    gx_rng r;
    gx_rng_seed(&r, o.seed);
    if (!buf || !found || !chain || !cls || (o.csv && !csv) || (o.lines_csv && !lcsv) ||
        (o.strides_csv && !scsv) || (o.classes_csv && !ccsv)) {
        fprintf(stderr, "slice_capacity: %s\n", !buf || !found || !chain || !cls
                                                    ? "out of memory" : "cannot write a CSV");
        goto done;
    }
    if (gx_target_arena(t, o.pages * page, &msg) != GX_OK) {
        fprintf(stderr, "slice_capacity: %s\n", msg.text);
        goto done;
    }
    if (csv)
        fprintf(csv, "slice,target_offset,lines,chain,mean_cycles\n");
    if (lcsv)
        fprintf(lcsv, "slice,offset\n");
    if (scsv)
        fprintf(scsv, "slice,kind,stride,start,k,mean_cycles\n");
    if (ccsv)
        fprintf(ccsv, "slice,class,offset\n");
    sc_opts so = {(uint32_t)o.line, (uint32_t)o.sm, GX_CONTEND_MAX_WARPS, (uint32_t)o.reps};
    for (uint64_t k = 0; k < o.slices; k++) {
        uint64_t target = 0;
        for (size_t i = 0; i < nl; i++) { /* page 0's first line no earlier slice holds */
            int held = 0;
            for (uint64_t j = 0; j < k && !held; j++)
                held = in_list(mine[j], nmine[j], (uint64_t)i * o.line);
            if (!held) {
                target = (uint64_t)i * o.line;
                break;
            }
        }
        double t0 = gx_monotonic_seconds();
        size_t n = 0;
        if (slice_lines(t, &so, target, page, o.pages, buf, cls, found, &n, &msg) != GX_OK) {
            fprintf(stderr, "slice_capacity: slice %llu: %s\n", (unsigned long long)k, msg.text);
            goto done;
        }
        if (!(mine[k] = malloc((n ? n : 1) * sizeof *found))) {
            fprintf(stderr, "slice_capacity: out of memory\n");
            goto done;
        }
        memcpy(mine[k], found, n * sizeof *found);
        nmine[k] = n;
        double t1 = gx_monotonic_seconds();
        for (size_t i = 0; lcsv && i < n; i++)
            fprintf(lcsv, "%llu,%llu\n", (unsigned long long)k, (unsigned long long)found[i]);
        double first = 0, last = 0;
        for (size_t m = o.step; m <= n; m += o.step) {
            double mean = 0;
            if (chase_prefix(t, found, m, (uint32_t)o.sm, &r, chain, &mean, &msg) != GX_OK) {
                fprintf(stderr, "slice_capacity: chase: %s\n", msg.text);
                goto done;
            }
            if (m == o.step)
                first = mean;
            last = mean;
            if (csv)
                fprintf(csv, "%llu,%llu,%zu,%zu,%.2f\n", (unsigned long long)k,
                        (unsigned long long)target, n, m, mean);
        }
        printf("slice %llu (line 0x%llx): %zu lines in %llu pages (%.1f a page; %.1f s), chase "
               "%.1f cycles at %llu lines, %.1f at %zu (%.1f s)\n",
               (unsigned long long)k, (unsigned long long)target, n, (unsigned long long)o.pages,
               (double)n / (double)o.pages, t1 - t0, first, (unsigned long long)o.step, last,
               n - n % o.step, gx_monotonic_seconds() - t1);
        fflush(stdout);
        if (n == 0) {
            fprintf(stderr, "slice_capacity: slice %llu: no line slowed (no contention)\n",
                    (unsigned long long)k);
            goto done;
        }
        if (o.strides && stride_spectrum(t, &o, k, found, n, &r, chain, scsv, &msg) != GX_OK) {
            fprintf(stderr, "slice_capacity: strides: %s\n", msg.text);
            goto done;
        }
        if (scsv)
            fflush(scsv);
        if (o.classes && set_classes(t, &o, k, found, n, &r, ccsv, &msg) != GX_OK) {
            fprintf(stderr, "slice_capacity: classes: %s\n", msg.text);
            goto done;
        }
    }
    rc = 0;
done:
    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "slice_capacity: cannot write %s\n", o.csv);
        rc = 1;
    }
    if (ccsv && fclose(ccsv) != 0) {
        fprintf(stderr, "slice_capacity: cannot write %s\n", o.classes_csv);
        rc = 1;
    }
    if (scsv && fclose(scsv) != 0) {
        fprintf(stderr, "slice_capacity: cannot write %s\n", o.strides_csv);
        rc = 1;
    }
    if (lcsv && fclose(lcsv) != 0) {
        fprintf(stderr, "slice_capacity: cannot write %s\n", o.lines_csv);
        rc = 1;
    }
    for (uint64_t k = 0; k < MAX_SLICES; k++)
        free(mine[k]);
    free(buf);
    free(found);
    free(chain);
    free(cls);
    gx_target_close(t);
    return rc;
}
