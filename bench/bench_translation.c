/* bench_translation.c - throughput of the trace-driven model with address
 * translation on (the gem5 Vega defaults of profiles/gem5-vega.json, built
 * here on the seed card) against the same model without translation:
 * random 64 MiB traces over 4 KiB and over 2 MiB pages.
 *
 * usage: bench_translation [--count N] [--reps R] [--markdown] [--only off|4k|2m]
 *                          [--profile SEED.json]
 *   --only: run one configuration (e.g. under `perf stat` to count
 *   instructions per access on a loaded machine)
 *
 * Notes:
 * - Trace: `gpuxray trace gen random --footprint 64MiB --count N` (32-byte
 *   accesses, one SM, seed 1; N = 2M by default), one instruction each.
 * - The page size is the page table's default_page_bytes (no MAP records).
 * - A fresh model each repetition, only gx_tsim_run + gx_tsim_flush timed;
 *   the fastest of R repetitions (default 3) is reported.
 * - The bar (issue 9): translation on at least half the L2-only rate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/clock.h"
#include "gpuxray/profile.h"
#include "gpuxray/trace.h"

#ifndef GX_SOURCE_DIR
#define GX_SOURCE_DIR "."
#endif

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define BAR 0.5 /* translation on / off: the bar */

static void die(const char *what, const gx_msg *m)
{
    fprintf(stderr, "bench_translation: %s: %s\n", what, m->text);
    exit(1);
}

static void level(gx_tlb_level_cfg *l, const char *name, uint32_t entries, double lat,
                  gx_sharing sharing)
{
    gx_tlb_level_init(l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->entries = entries;
    l->ways = 32;
    l->entry_bytes = 4 * KiB;
    l->sharing = sharing;
    l->hit_latency_cycles = lat;
    l->outstanding_misses = 64;
    snprintf(l->policy, sizeof l->policy, "lru");
}

static void pwc(gx_small_cache_cfg *c, uint32_t entries, uint32_t ways)
{
    gx_small_cache_init(c);
    c->present = 1;
    c->entries = entries;
    c->ways = ways;
    c->hit_latency_cycles = 1;
    snprintf(c->policy, sizeof c->policy, "lru");
}

/* gem5's Vega defaults (docs/translation.md) with pages of page_bytes. */
static void gem5_vega(gx_tlb_cfg *t, uint64_t page_bytes)
{
    gx_tlb_cfg_init(t);
    t->present = 1;
    t->n_page_sizes = 2;
    t->page_sizes[0] = 4 * KiB;
    t->page_sizes[1] = 2 * MiB;
    t->default_page_bytes = page_bytes;
    t->n_level_bits = 4;
    for (int i = 0; i < 4; i++)
        t->level_bits[i] = 9;
    t->n_levels = 3;
    level(&t->levels[0], "L1", 32, 1, GX_SHARE_SM);
    level(&t->levels[1], "L2", 4096, 69, GX_SHARE_GPU);
    level(&t->levels[2], "L3", 8192, 150, GX_SHARE_GPU);
    t->walker.fetch_bytes = 128;
    t->walker.walkers = 64;
    t->walker.fixed_read_cycles = NAN;
    pwc(&t->walker.pwc, 64, 64);
    pwc(&t->walker.neighbour_pwc, 256, 256); /* fully associative, as gem5 */
    t->coalescer.window_cycles = 1;
    t->coalescer.max_granule_bytes = 2 * MiB;
}

static double run(const gx_profile *p, const gx_trace *t)
{
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    gx_msg m;
    if (gx_tsim_new(p, &cfg, &s, &m))
        die("model", &m);
    double t0 = gx_monotonic_seconds();
    gx_tsim_run(s, t->rec, t->n);
    gx_tsim_flush(s);
    double dt = gx_monotonic_seconds() - t0;
    gx_tsim_free(s);
    return dt;
}

static double best_rate(const gx_profile *p, const gx_trace *t, int reps)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double dt = run(p, t);
        best = dt < best ? dt : best;
    }
    return (double)t->n / best / 1e6;
}

int main(int argc, char **argv)
{
    uint64_t count = 2000000;
    int reps = 3, md = 0;
    const char *only = NULL, *path = GX_SOURCE_DIR "/profiles/seed-ampere-6mb.json";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--markdown"))
            md = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
            path = argv[++i];
        else {
            fprintf(stderr, "usage: bench_translation [--count N] [--reps R] [--markdown]\n");
            return 2;
        }
    }
    if (!count || reps < 1) {
        fprintf(stderr, "bench_translation: --count and --reps must be positive\n");
        return 2;
    }
    gx_msg m;
    gx_profile *p = NULL;
    if (gx_profile_load(path, &p, &m))
        die("profile", &m);
    gx_gen_cfg g;
    gx_gen_defaults(&g);
    g.pattern = GX_GEN_RANDOM;
    g.count = count;
    gx_trace t;
    gx_trace_init(&t);
    if (gx_trace_generate(&g, &t, &m))
        die("trace", &m);
    const uint64_t pages[2] = {4 * KiB, 2 * MiB};
    if (only) {
        int k = !strcmp(only, "4k") ? 0 : !strcmp(only, "2m") ? 1 : -1;
        if (k >= 0)
            gem5_vega(&p->tlb, pages[k]);
        printf("%s %.2f M accesses/s\n", only, best_rate(p, &t, reps));
        gx_trace_free(&t);
        gx_profile_free(p);
        return 0;
    }
    double off = best_rate(p, &t, reps);
    double on[2];
    for (int k = 0; k < 2; k++) {
        gem5_vega(&p->tlb, pages[k]);
        on[k] = best_rate(p, &t, reps);
    }
    if (md) {
        printf("| profile | trace | translation | M accesses/s | vs off |\n|---|---|---|---|---|\n");
        printf("| seed-ampere-6mb | random 64 MiB | off | %.2f | 1.00 |\n", off);
        for (int k = 0; k < 2; k++)
            printf("| seed-ampere-6mb + gem5 Vega TLBs | random 64 MiB | %s pages | %.2f | %.2f |\n",
                   k ? "2 MiB" : "4 KiB", on[k], on[k] / off);
    } else {
        printf("off %.2f, 4 KiB pages %.2f (%.2f), 2 MiB pages %.2f (%.2f) M accesses/s\n", off,
               on[0], on[0] / off, on[1], on[1] / off);
    }
    int met = on[0] >= BAR * off && on[1] >= BAR * off;
    fprintf(stderr, "bench_translation: the bar (>= %.0f%% of the L2-only rate) is %s\n",
            100 * BAR, met ? "met" : "NOT met");
    gx_trace_free(&t);
    gx_profile_free(p);
    return 0;
}
