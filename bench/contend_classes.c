/* contend_classes.c - the lines of pages grouped by L2 slice through
 * contention alone (gx_target_contend), on any target: the second signal for
 * the slices that the latency fingerprints cannot resolve (issue 12).
 *
 *   contend_classes [--target T] [--pages P] [--line B] [--reps R] [--sm S]
 *                   [--warps W] [--seed N] [-o CSV]
 *
 * Page 0 of the arena is grouped into classes by the method of
 * src/infer/slice/slice_contend.h (greedy partition, each class checked from
 * a second member); the lines of pages 1..P-1 are joined to page 0's classes
 * (lines no class slows: slices absent from page 0). CSV: page, line, class.
 * Exit codes: 0 ok (every check agrees, no line in two classes), 1 a check
 * failed or no contention showed, 2 bad usage, 3 the target could not be
 * opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/clock.h"
#include "gpuxray/error.h"
#include "gpuxray/target.h"
#include "infer/slice/slice_contend.h"
#include "target/cuda/cuda_debug.h"

/* What one run holds: the target and its message, and the page's lines. */
typedef struct run {
    gx_target *t;
    gx_msg msg;
    size_t n; /* lines a page */
} run;

int main(int argc, char **argv)
{
    const char *spec = "cuda", *out = NULL;
    uint32_t pages = 1, sm = 0, warps = 8, reps = 4;
    uint64_t line = 128, seed = 1;
    for (int i = 1; i < argc; i += 2) { /* every option takes one value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "contend_classes: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--target"))
            spec = v;
        else if (!strcmp(a, "--pages"))
            pages = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--line"))
            line = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--reps"))
            reps = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--sm"))
            sm = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--warps"))
            warps = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-o"))
            out = v;
        else {
            fprintf(stderr, "contend_classes: unknown option %s\n", a);
            return 2;
        }
    }
    if (pages == 0 || pages > 64 || line < 32 || (line & (line - 1)) || reps == 0 || warps == 0) {
        fprintf(stderr, "contend_classes: --pages 1..64, --line a power of two >= 32, "
                        "--reps and --warps >= 1\n");
        return 2;
    }
    run r = {0};
    if (gx_target_open(spec, seed, &r.t, &r.msg) != GX_OK) {
        fprintf(stderr, "contend_classes: %s\n", r.msg.text);
        return 3;
    }
    const gx_target_info *info = gx_target_get_info(r.t);
    const uint64_t page = info->page_bytes ? info->page_bytes : (2ULL << 20);
    r.n = (size_t)(page / line);
    int rc = 1, ok = 1;
    int *cls = malloc(r.n * sizeof *cls);
    uint64_t *lines = malloc(r.n * sizeof *lines);
    sc_partition *part = malloc(sizeof *part);
    FILE *f = out ? fopen(out, "w") : NULL;
    if (!cls || !lines || !part || (out && !f)) {
        fprintf(stderr, "contend_classes: %s\n", out && !f ? "cannot write the CSV" : "out of memory");
        goto done;
    }
    if (gx_target_arena(r.t, (uint64_t)pages * page, &r.msg) != GX_OK) {
        fprintf(stderr, "contend_classes: %s\n", r.msg.text);
        goto done;
    }
    double t0 = gx_monotonic_seconds();
    sc_opts so = {(uint32_t)line, sm, warps, reps};
    sc_page_lines(0, (uint32_t)line, r.n, lines);
    int prc = sc_partition_lines(r.t, &so, lines, r.n, cls, part, &r.msg);
    uint64_t loads = 0;
    if (gx_cuda_target_hammer_loads(r.t, &loads) == GX_OK)
        fprintf(stderr, "the last launch's hammers made %llu loads\n", (unsigned long long)loads);
    if (prc != GX_OK && part->classes == 0) {
        fprintf(stderr, "contend_classes: %s\n", r.msg.text);
        goto done;
    }
    if (prc != GX_OK) {
        fprintf(stderr, "contend_classes: %s\n", r.msg.text);
        ok = 0;
    }
    printf("page 0: %u classes of %zu..%zu lines, members slowed by %.0f cycles at least, other "
           "lines by %.0f at most; %u of %u classes come back exactly from a second member "
           "(%.1f s)\n",
           part->classes, part->smallest, part->largest, part->slowdown_min, part->other_max,
           part->agreed, part->checked, gx_monotonic_seconds() - t0);
    if (f)
        for (size_t i = 0; i < r.n; i++)
            fprintf(f, "0,%zu,%d\n", i, cls[i]);
    for (uint32_t p = 1; p < pages; p++) {
        size_t none = 0, twice = 0;
        sc_page_lines((uint64_t)p * page, (uint32_t)line, r.n, lines);
        if (sc_join_lines(r.t, &so, part, lines, r.n, cls, &none, &twice, &r.msg) != GX_OK) {
            fprintf(stderr, "contend_classes: %s\n", r.msg.text);
            goto done;
        }
        printf("page %u: %zu lines in none of page 0's classes, %zu in two\n", p, none, twice);
        ok = ok && twice == 0;
        if (f)
            for (size_t i = 0; i < r.n; i++)
                fprintf(f, "%u,%zu,%d\n", p, i, cls[i]);
    }
    rc = ok ? 0 : 1;
done:
    if (f && fclose(f) != 0) {
        fprintf(stderr, "contend_classes: cannot write the CSV\n");
        rc = 1;
    }
    free(cls);
    free(lines);
    free(part);
    gx_target_close(r.t);
    return rc;
}
