/* bench_model.c - model throughput on one core: accesses per second of the
 * trace-driven L2 model (gx_tsim, what `gpuxray sim` runs) for a random
 * 64 MiB-footprint trace and a streaming trace on the reference profiles,
 * with the trace already in memory and with trace parsing included (binary
 * and text file -> stats).
 *
 * usage: bench_model [--count N] [--reps R] [--tmp DIR] [--markdown]
 *
 * Notes:
 * - Traces: `gpuxray trace gen random|stream --footprint 64MiB --count N`
 *   (32-byte accesses, one SM, seed 1); N = 10M by default.
 * - "in memory": a fresh model each repetition, only gx_tsim_run timed.
 * - "binary file" / "text file": gx_trace_read + model creation + run +
 *   stats written (to /dev/null), timed together.
 * - The fastest of R repetitions (default 3) is reported: other load on
 *   the machine only ever slows a run down.
 * - Single-threaded (scripts/bench.sh pins it to a core with GX_BENCH_CPU=N). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/clock.h"
#include "gpuxray/profile.h"
#include "gpuxray/trace.h"

#ifndef GX_SOURCE_DIR
#define GX_SOURCE_DIR "."
#endif

static void die(const char *what, const gx_msg *m)
{
    fprintf(stderr, "bench_model: %s: %s\n", what, m->text);
    exit(1);
}

typedef struct result {
    double mem, bin, txt; /* M accesses / s */
    double l2_hit_rate;
} result;

/* One in-memory run; returns seconds. */
static double run_memory(const gx_profile *p, const gx_trace *t, double *hit_rate)
{
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    gx_msg m;
    if (gx_tsim_new(p, &cfg, &s, &m))
        die("model", &m);
    double t0 = gx_monotonic_seconds();
    gx_tsim_run(s, t->rec, t->n);
    double dt = gx_monotonic_seconds() - t0;
    gx_tsim_stats st;
    gx_tsim_get_stats(s, &st);
    *hit_rate = st.level_accesses[0] ? (double)st.level_hits[0] / (double)st.level_accesses[0] : 0;
    gx_tsim_free(s);
    return dt;
}

/* File -> stats; returns seconds. */
static double run_file(const gx_profile *p, const char *path, uint64_t expect_n)
{
    gx_msg m;
    double t0 = gx_monotonic_seconds();
    gx_trace t;
    gx_trace_init(&t);
    if (gx_trace_read(path, p->device.sm_count, &t, &m))
        die(path, &m);
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    if (gx_tsim_new(p, &cfg, &s, &m))
        die("model", &m);
    gx_tsim_run(s, t.rec, t.n);
    FILE *null = fopen("/dev/null", "w");
    gx_tsim_write_json(s, null);
    fclose(null);
    double dt = gx_monotonic_seconds() - t0;
    if (t.n != expect_n) {
        fprintf(stderr, "bench_model: %s: %llu records, %llu expected\n", path,
                (unsigned long long)t.n, (unsigned long long)expect_n);
        exit(1);
    }
    gx_tsim_free(s);
    gx_trace_free(&t);
    return dt;
}

static double best_rate(const double *secs, int reps, uint64_t n)
{
    double best = secs[0];
    for (int i = 1; i < reps; i++)
        best = secs[i] < best ? secs[i] : best;
    return (double)n / best / 1e6;
}

int main(int argc, char **argv)
{
    unsigned long long count = 10000000ULL;
    int reps = 3, markdown = 0;
    const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tmp") && i + 1 < argc)
            tmpdir = argv[++i];
        else if (!strcmp(argv[i], "--markdown"))
            markdown = 1;
        else {
            fprintf(stderr, "usage: bench_model [--count N] [--reps R] [--tmp DIR] [--markdown]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 16 || count < 1) {
        fprintf(stderr, "bench_model: --reps 1..16, --count >= 1\n");
        return 2;
    }
    static const char *const profiles[] = {"seed-ampere-6mb", "hopper-like"};
    static const gx_gen_pattern patterns[] = {GX_GEN_RANDOM, GX_GEN_STREAM};
    if (markdown) {
        printf("| profile | trace (%llu accesses) | L2 hit rate | in memory (M acc/s) | "
               "binary file -> stats (M acc/s) | text file -> stats (M acc/s) |\n",
               count);
        printf("|---|---|---:|---:|---:|---:|\n");
    } else {
        printf("%-16s %-8s %8s %12s %12s %12s   (M accesses/s, %llu accesses, best of %d)\n",
               "profile", "trace", "L2 hits", "in memory", "binary file", "text file", count,
               reps);
    }
    for (int pi = 0; pi < 2; pi++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/profiles/%s.json", GX_SOURCE_DIR, profiles[pi]);
        gx_profile *p = NULL;
        gx_msg m;
        if (gx_profile_load(path, &p, &m)) {
            fprintf(stderr, "bench_model: skipping %s: %s\n", profiles[pi], m.text);
            continue;
        }
        for (int k = 0; k < 2; k++) {
            gx_gen_cfg c;
            gx_gen_defaults(&c);
            c.pattern = patterns[k];
            c.footprint_bytes = 64ULL << 20;
            c.count = count;
            gx_trace t;
            gx_trace_init(&t);
            if (gx_trace_generate(&c, &t, &m))
                die("generate", &m);
            char bin[4096], txt[4096];
            snprintf(bin, sizeof bin, "%s/gx-bench-%ld-%d.bin", tmpdir, (long)getpid(), k);
            snprintf(txt, sizeof txt, "%s/gx-bench-%ld-%d.txt", tmpdir, (long)getpid(), k);
            if (gx_trace_save(&t, bin, GX_TRACE_BINARY, &m) ||
                gx_trace_save(&t, txt, GX_TRACE_TEXT, &m))
                die("save", &m);
            double sm[16], sb[16], st[16], hit = 0;
            for (int r = 0; r < reps; r++) {
                sm[r] = run_memory(p, &t, &hit);
                sb[r] = run_file(p, bin, t.n);
                st[r] = run_file(p, txt, t.n);
            }
            unlink(bin);
            unlink(txt);
            result res = {best_rate(sm, reps, t.n), best_rate(sb, reps, t.n),
                          best_rate(st, reps, t.n), hit};
            const char *name = gx_gen_pattern_name(c.pattern);
            if (markdown)
                printf("| %s | %s, 64 MiB footprint | %.1f%% | %.1f | %.1f | %.1f |\n",
                       profiles[pi], name, 100 * res.l2_hit_rate, res.mem, res.bin, res.txt);
            else
                printf("%-16s %-8s %7.1f%% %12.1f %12.1f %12.1f\n", profiles[pi], name,
                       100 * res.l2_hit_rate, res.mem, res.bin, res.txt);
            fflush(stdout);
            gx_trace_free(&t);
        }
        gx_profile_free(p);
    }
    return 0;
}
