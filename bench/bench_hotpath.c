/* bench_hotpath.c - the model's hot path on one core, for performance work
 * on src/model/: accesses per second of the trace-driven model (gx_tsim,
 * what `gpuxray sim` runs) with the trace already in memory, plus a digest
 * of every simulated outcome so a speed-up can be checked to change none.
 *
 * usage: bench_hotpath [--profile NAME] [--pattern random|stream]
 *                      [--count N] [--reps R] [--noise] [--digest]
 *                      [--prefetch -1|0|1] [--chase]
 *
 * Notes:
 * - Trace: the generator of `gpuxray trace gen PATTERN --footprint 64MiB
 *   --count N` (32-byte accesses, one SM, seed 1); N = 10M by default.
 *   Profile: profiles/NAME.json (default seed-ampere-6mb).
 * - --prefetch: gx_tsim_cfg.prefetch (-1 auto, the default; 0 off; 1 on).
 * - --chase: instead, the sim target's pointer chase over 64 MiB in
 *   128-byte steps (random cyclic order, SM 0), M steps/s of CPU time.
 * - Each repetition builds a fresh model and times gx_tsim_run only; the
 *   best and the median of R (default 5) are printed. On a shared machine
 *   count instructions instead (perf stat -e instructions, or callgrind with
 *   --count 1000000 --reps 1).
 * - --digest: no timing; prints an FNV-1a hash of the JSON stats of the run
 *   above, of a sweep over every policy candidate, several way counts,
 *   insert / invalidate / random-eviction calls straight on gx_cache, and
 *   of 40 generated hidden profiles (trace-driven model with and without
 *   noise, sim target chase / seq / prime+probe), so two builds that print
 *   the same digests simulated the same outcomes.
 *   With GX_BENCH_JSON set in the environment the run's JSON stats go to
 *   stderr (to see where two builds differ). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuxray/cache.h"
#include "gpuxray/generate.h"
#include "gpuxray/policy.h"
#include "gpuxray/profile.h"
#include "gpuxray/rng.h"
#include "gpuxray/stats.h"
#include "gpuxray/target.h"
#include "gpuxray/trace.h"

#ifndef GX_SOURCE_DIR
#define GX_SOURCE_DIR "."
#endif

/* CPU time of this thread: on a shared machine wall time also counts the
 * time other processes hold the core. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const gx_msg *m)
{
    fprintf(stderr, "bench_hotpath: %s: %s\n", what, m ? m->text : "failed");
    exit(1);
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    return fnv(h, &v, sizeof v);
}

/* The JSON stats of one run, hashed. */
static uint64_t tsim_digest(const gx_tsim *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        die("open_memstream", NULL);
    gx_tsim_write_json(s, f);
    fclose(f);
    uint64_t h = fnv(0xcbf29ce484222325ULL, buf, len);
    free(buf);
    return h;
}

/* Every candidate policy and family default through gx_cache with a mix of
 * accesses, inserts, invalidations and random evictions; hash of every
 * outcome and victim. */
static uint64_t cache_sweep_digest(void)
{
    static const uint32_t ways[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 24, 32, 33, 48, 64};
    static const char *const extra[] = {"plru-rand:0", "plru-rand:1", "plru-rand:0.5",
                                        "srrip-fp", "qlru:H21_M2_R0_U0_UMO",
                                        "qlru:H10_M3_R1_U3", "qlru:H20_M0_R2_U1"};
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t nc = gx_policy_candidate_count(), ne = sizeof extra / sizeof extra[0];
    for (size_t pi = 0; pi < nc + ne; pi++) {
        const char *spec = pi < nc ? gx_policy_candidate(pi) : extra[pi - nc];
        for (size_t wi = 0; wi < sizeof ways / sizeof ways[0]; wi++) {
            for (uint32_t sectors = 1; sectors <= 32; sectors *= 8) {
                gx_cache_cfg cfg = {128, 128 / sectors, ways[wi], 6, spec, 42 + wi, 0};
                gx_cache *c = NULL;
                gx_msg m;
                if (gx_cache_new(&cfg, &c, &m))
                    die(spec, &m);
                gx_rng r;
                gx_rng_seed(&r, 7 + pi * 131 + wi);
                uint64_t lines = (uint64_t)ways[wi] * 6 * 3 / 2 + 1;
                for (int i = 0; i < 20000; i++) {
                    uint64_t x = gx_rng_next(&r);
                    uint64_t line = (x >> 8) % lines, set = line % 6;
                    uint32_t sector = (uint32_t)(x >> 40) % sectors;
                    gx_cache_victim v;
                    uint32_t op = (uint32_t)(x & 0xff);
                    if (op < 200) {
                        h = fnv_u64(h, gx_cache_access(c, set, line, sector, op < 190, &v));
                    } else if (op < 225) {
                        gx_cache_insert(c, set, line, (uint32_t)(x >> 48) | 1u, &v);
                    } else if (op < 245) {
                        h = fnv_u64(h, gx_cache_invalidate(c, set, line));
                        v.valid = 0;
                    } else if (op < 250) {
                        gx_cache_evict_random(c, &r);
                        v.valid = 0;
                    } else {
                        h = fnv_u64(h, (uint64_t)gx_cache_contains(c, set, line, sector));
                        v.valid = 0;
                    }
                    if (v.valid)
                        h = fnv_u64(fnv_u64(h, v.line_addr), v.sector_mask);
                }
                gx_cache_stats st;
                gx_cache_get_stats(c, &st);
                h = fnv(h, &st, sizeof st);
                gx_cache_free(c);
            }
        }
    }
    return h;
}

static uint64_t fnv_double(uint64_t h, double v)
{
    return fnv(h, &v, sizeof v);
}

/* The sim target's primitives (chase, seq, prime+probe) on one profile. */
static uint64_t target_digest(const char *path, uint64_t seed, uint64_t h)
{
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", path);
    gx_target *t = NULL;
    gx_msg m;
    if (gx_target_open(spec, seed, &t, &m))
        die(spec, &m);
    const gx_target_info *in = gx_target_get_info(t);
    uint64_t bytes = 16ULL << 20;
    if (gx_target_arena(t, bytes, &m))
        die("arena", &m);
    gx_rng r;
    gx_rng_seed(&r, seed ^ 0xd16e57ULL);
    enum { N = 4096 };
    static uint64_t off[N];
    static gx_seq_op ops[N];
    static double cyc[N];
    for (int i = 0; i < N; i++) {
        off[i] = gx_rng_below(&r, bytes / 128) * 128;
        ops[i].offset = off[i] + 32 * gx_rng_below(&r, 4);
        ops[i].kind = (uint8_t)(gx_rng_below(&r, 8) == 0 ? GX_OP_STORE : GX_OP_LOAD);
        ops[i].timed = 1;
    }
    uint32_t sms = in->sm_count ? in->sm_count : 1;
    for (uint32_t rep = 0; rep < 3; rep++) {
        gx_chase_req q = {off, 512u << rep, 1, 2, 0, rep % sms};
        double mean = 0;
        if (gx_target_chase(t, &q, &mean, &m))
            die("chase", &m);
        h = fnv_double(h, mean);
        if (gx_target_seq(t, ops, N, (rep * 7) % sms, cyc, &m))
            die("seq", &m);
        for (int i = 0; i < N; i++)
            h = fnv_double(h, cyc[i]);
        if (gx_target_prime_probe(t, off, 2048, off + 1024, 256, (rep * 5) % sms, cyc, &m))
            die("prime_probe", &m);
        for (int i = 0; i < 256; i++)
            h = fnv_double(h, cyc[i]);
    }
    gx_target_close(t);
    return h;
}

/* Hidden profiles of the generator (every policy, topology, hash kind,
 * noise level): the trace-driven model with noise on and off, and the sim
 * target's primitives. */
static uint64_t generated_digest(int count)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    char path[] = "/tmp/gx-bench-hotpath-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        die("mkstemp", NULL);
    close(fd);
    gx_generate_opts o;
    gx_generate_opts_default(&o);
    gx_gen_cfg gc;
    gx_gen_defaults(&gc);
    gc.pattern = GX_GEN_RANDOM;
    gc.footprint_bytes = 16ULL << 20;
    gc.count = 200000;
    gc.sms = 8;
    gc.sm_assign = GX_SM_RANDOM;
    gc.write_ratio = 0.1;
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    if (gx_trace_generate(&gc, &t, &m))
        die("generate", &m);
    for (int i = 1; i <= count; i++) {
        gx_profile *p = NULL;
        if (gx_generate((uint64_t)i, &o, &p, &m))
            die("gx_generate", &m);
        if (gx_profile_save(p, path, &m))
            die(path, &m);
        for (int noise = 0; noise < 2; noise++) {
            gx_tsim_cfg cfg;
            gx_tsim_defaults(p, &cfg);
            cfg.noise = noise;
            gx_tsim *s = NULL;
            if (gx_tsim_new(p, &cfg, &s, &m))
                die("model", &m);
            gx_tsim_run(s, t.rec, t.n);
            h ^= tsim_digest(s);
            h *= 0x100000001b3ULL;
            gx_tsim_free(s);
        }
        h = target_digest(path, (uint64_t)i, h);
        gx_profile_free(p);
    }
    unlink(path);
    gx_trace_free(&t);
    return h;
}

/* The sim target's pointer chase (what discovery runs): one random cyclic
 * chain over a footprint in 128-byte steps, one round to place the pages,
 * then two timed rounds; returns M steps per second of CPU time. */
static double chase_rate(const char *profile, uint64_t footprint)
{
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s/profiles/%s.json", GX_SOURCE_DIR, profile);
    gx_target *t = NULL;
    gx_msg m;
    if (gx_target_open(spec, 1, &t, &m) || gx_target_arena(t, footprint, &m))
        die(spec, &m);
    size_t n = (size_t)(footprint / 128);
    uint64_t *off = malloc(n * sizeof *off);
    if (!off)
        die("out of memory", NULL);
    for (size_t i = 0; i < n; i++)
        off[i] = (uint64_t)i * 128;
    gx_rng r;
    gx_rng_seed(&r, 5);
    gx_rng_shuffle_u64(&r, off, n);
    gx_chase_req q = {off, n, 0, 1, 0, 0};
    double mean = 0;
    if (gx_target_chase(t, &q, &mean, &m)) /* warm-up: places the pages */
        die("chase", &m);
    q.timed_rounds = 2;
    double t0 = now_s();
    if (gx_target_chase(t, &q, &mean, &m))
        die("chase", &m);
    double dt = now_s() - t0;
    free(off);
    gx_target_close(t);
    return 2.0 * (double)n / dt / 1e6;
}

int main(int argc, char **argv)
{
    const char *profile = "seed-ampere-6mb";
    gx_gen_pattern pattern = GX_GEN_RANDOM;
    unsigned long long count = 10000000ULL;
    int reps = 5, noise = 0, digest = 0, prefetch = -1, chase = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--profile") && i + 1 < argc)
            profile = argv[++i];
        else if (!strcmp(argv[i], "--pattern") && i + 1 < argc) {
            if (gx_gen_pattern_parse(argv[++i], &pattern) != GX_OK)
                die("--pattern", NULL);
        } else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--noise"))
            noise = 1;
        else if (!strcmp(argv[i], "--digest"))
            digest = 1;
        else if (!strcmp(argv[i], "--chase"))
            chase = 1;
        else if (!strcmp(argv[i], "--prefetch") && i + 1 < argc)
            prefetch = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_hotpath [--profile NAME] [--pattern random|stream] "
                            "[--count N] [--reps R] [--noise] [--digest] [--prefetch -1|0|1] "
                            "[--chase]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 64 || count < 1) {
        fprintf(stderr, "bench_hotpath: --reps 1..64, --count >= 1\n");
        return 2;
    }
    if (chase) {
        double best = 0;
        for (int r = 0; r < reps; r++) {
            double v = chase_rate(profile, 64ULL << 20);
            best = v > best ? v : best;
        }
        printf("%s sim target chase, 64 MiB in 128-byte steps: best %.1f M steps/s (%d reps)\n",
               profile, best, reps);
        return 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/profiles/%s.json", GX_SOURCE_DIR, profile);
    gx_profile *p = NULL;
    gx_msg m;
    if (gx_profile_load(path, &p, &m))
        die(path, &m);
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = pattern;
    c.footprint_bytes = 64ULL << 20;
    c.count = count;
    gx_trace t;
    gx_trace_init(&t);
    if (gx_trace_generate(&c, &t, &m))
        die("generate", &m);
    double secs[64];
    uint64_t dig = 0;
    for (int r = 0; r < reps; r++) {
        gx_tsim_cfg cfg;
        gx_tsim_defaults(p, &cfg);
        cfg.noise = noise;
        cfg.prefetch = prefetch;
        gx_tsim *s = NULL;
        if (gx_tsim_new(p, &cfg, &s, &m))
            die("model", &m);
        double t0 = now_s();
        gx_tsim_run(s, t.rec, t.n);
        secs[r] = now_s() - t0;
        if (digest && r == 0) {
            dig = tsim_digest(s);
            if (getenv("GX_BENCH_JSON"))
                gx_tsim_write_json(s, stderr);
        }
        gx_tsim_free(s);
    }
    if (digest) {
        printf("tsim digest %s %s noise=%d n=%llu: %016llx\n", profile,
               gx_gen_pattern_name(pattern), noise, count, (unsigned long long)dig);
        printf("cache sweep digest: %016llx\n", (unsigned long long)cache_sweep_digest());
        printf("generated profiles digest: %016llx\n",
               (unsigned long long)generated_digest(40));
    } else {
        double best = secs[0];
        for (int r = 1; r < reps; r++)
            best = secs[r] < best ? secs[r] : best;
        double med = gx_median(secs, (size_t)reps);
        printf("%s %s%s: %llu accesses, best %.1f M/s, median %.1f M/s (%d reps)\n", profile,
               gx_gen_pattern_name(pattern), noise ? " noise" : "", count,
               (double)t.n / best / 1e6, (double)t.n / med / 1e6, reps);
    }
    gx_trace_free(&t);
    gx_profile_free(p);
    return 0;
}
