/* cuda_probe.c - checks the cuda target's primitives on a real GPU and
 * measures raw data for discovery (CSV), through the public target API
 * only. Used by tests/gpu_target.sh and scripts/h200_probe.sh.
 *
 *   cuda_probe info [--target T]
 *   cuda_probe check [--target T]                      validate primitives
 *   cuda_probe curve [--sm N] [--max-mib M] -o F.csv  latency vs footprint
 *   cuda_probe seq -o F.csv                            timer, miss/hit, sector, store
 *   cuda_probe fingerprint [--sms K] [--reps R] -o F.csv  per-line L2 hit latency x SM
 *   cuda_probe cross -o F.csv      lines loaded by SM 0 (and SM n/2), timed twice from every SM
 *   cuda_probe calls                wall time per primitive call (launch overheads)
 *
 * Exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 no usable device.
 *
 * Notes: every experiment draws its lines from a fixed seed; "fresh" lines
 * are lines of the arena not touched since the arena was allocated and
 * after a 256 MiB flush of other lines, so they miss in L2. Without a GPU
 * every subcommand exits 3 with the target's "no usable CUDA device" text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuxray/clock.h"
#include "gpuxray/error.h"
#include "gpuxray/rng.h"
#include "gpuxray/stats.h"
#include "gpuxray/target.h"
#include "target/cuda/cuda_debug.h"

#define LINE 128ULL
#define MIB (1ULL << 20)
#define PAGE (2ULL * MIB)

typedef struct opts {
    const char *target;
    const char *out;
    uint32_t sm;
    uint64_t max_mib;
    uint32_t sms;
    uint32_t reps;
    uint32_t pages;
} opts;

static int failures, passes;

static void check(int ok, const char *what, double value)
{
    printf("%s  %-58s %.1f\n", ok ? "PASS" : "FAIL", what, value);
    if (!ok)
        failures++;
    else
        passes++;
}

static int die(int rc, const gx_msg *m)
{
    fprintf(stderr, "cuda_probe: %s\n", m->text);
    return rc == GX_ENODEV ? 3 : 1;
}

static FILE *open_out(const char *path)
{
    if (!path)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "cuda_probe: cannot write %s\n", path);
    return f;
}

static void close_out(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}

/* Offsets of the n lines base, base+128, ... in a random cyclic order. */
static uint64_t *random_lines(uint64_t base, uint64_t n, uint64_t seed)
{
    uint64_t *v = malloc(n * sizeof *v);
    if (!v)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        v[i] = base + i * LINE;
    gx_rng r;
    gx_rng_seed(&r, seed);
    gx_rng_shuffle_u64(&r, v, n);
    return v;
}

static void print_info(const gx_target_info *in)
{
    printf("device: %s (%s)\nsm_count: %u\nsm_clock_mhz: %u\napi_l2_bytes: %llu\n"
           "page_bytes: %llu\nmax_arena_bytes: %llu\n",
           in->name, in->spec, in->sm_count, in->sm_clock_mhz,
           (unsigned long long)in->api_l2_bytes, (unsigned long long)in->page_bytes,
           (unsigned long long)in->max_arena_bytes);
}

/* Touch n_lines lines from `base` with many threads (flushes L2 of others). */
static int flush(gx_target *t, uint64_t base, uint64_t bytes, gx_msg *m)
{
    uint64_t n = bytes / LINE;
    uint64_t *p = malloc(n * sizeof *p);
    if (!p)
        return gx_fail(m, GX_ENOMEM, "no memory");
    for (uint64_t i = 0; i < n; i++)
        p[i] = base + i * LINE;
    double dummy;
    int rc = gx_target_prime_probe(t, p, n, p, 1, 0, &dummy, m);
    free(p);
    return rc;
}

static int chase_mean(gx_target *t, uint64_t base, uint64_t bytes, uint32_t sm, uint64_t seed,
                      double *mean, uint64_t *warm_r, uint64_t *timed_steps, gx_msg *m)
{
    uint64_t n = bytes / LINE;
    uint64_t *off = random_lines(base, n, seed);
    if (!off)
        return gx_fail(m, GX_ENOMEM, "no memory");
    gx_chase_req q = {.offsets = off, .n = n, .sm = sm};
    q.warm_rounds = n >= 100000 ? 1u : (uint32_t)((100000 + n - 1) / n);
    if (n >= 200000) {
        q.timed_rounds = 1;
    } else {
        q.timed_rounds = (uint32_t)((200000 + n - 1) / n);
        q.max_timed_steps = 200000;
    }
    int rc = gx_target_chase(t, &q, mean, m);
    *warm_r = q.warm_rounds;
    *timed_steps = q.max_timed_steps ? q.max_timed_steps : (uint64_t)q.timed_rounds * n;
    free(off);
    return rc;
}

/* Run a 1 MiB chase a few times so the SM clock has ramped up before the
 * measurements (cycle counts of memory latencies depend on the SM clock);
 * the means go to stderr for the log. */
static int warm_clock(gx_target *t, uint32_t sm, gx_msg *m)
{
    double mean = 0;
    uint64_t w, s;
    fprintf(stderr, "warm-up (1 MiB chase):");
    for (int i = 0; i < 10; i++) {
        int rc = chase_mean(t, 0, 1 * MIB, sm, 7, &mean, &w, &s, m);
        if (rc != GX_OK)
            return rc;
        fprintf(stderr, " %.1f", mean);
    }
    fprintf(stderr, "\n");
    return GX_OK;
}

/* ---- check -------------------------------------------------------------- */

static double median_of(const double *v, size_t n)
{
    return gx_median(v, n);
}

static int check_timeout(const char *spec)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    setenv("GX_CUDA_BUDGET_CYCLES", "300000", 1);
    int rc = gx_target_open(spec, 1, &t, &m);
    unsetenv("GX_CUDA_BUDGET_CYCLES");
    if (rc != GX_OK)
        return die(rc, &m);
    rc = gx_target_arena(t, 512 * MIB, &m);
    double mean = 0;
    uint64_t w, s;
    if (rc == GX_OK)
        rc = chase_mean(t, 0, 512 * MIB, 0, 5, &mean, &w, &s, &m);
    check(rc == GX_ETIMEOUT, "in-kernel cycle budget stops a long chase (GX_ETIMEOUT)", rc);
    if (rc != GX_ETIMEOUT)
        fprintf(stderr, "  got %s: %s\n", gx_errname(rc), m.text);
    else
        printf("      %s\n", m.text);
    /* the target still works afterwards */
    double ov[8];
    gx_seq_op ops[8];
    for (int i = 0; i < 8; i++)
        ops[i] = (gx_seq_op){.offset = 0, .kind = GX_OP_NONE, .timed = 1};
    rc = gx_target_seq(t, ops, 8, 0, ov, &m);
    check(rc == GX_OK, "target usable after an in-kernel timeout", rc);
    gx_target_close(t);
    return 0;
}

static int cmd_check(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    const gx_target_info *in = gx_target_get_info(t);
    print_info(in);
    check(in->sm_count > 0 && in->page_bytes >= 4096 && in->max_arena_bytes >= 1024 * MIB,
          "info: SMs, page size, arena limit >= 1 GiB", (double)in->sm_count);
    if ((rc = gx_target_arena(t, 1024 * MIB, &m)) != GX_OK)
        return die(rc, &m);
    if ((rc = warm_clock(t, 0, &m)) != GX_OK)
        return die(rc, &m);

    /* timer overhead: empty intervals */
    enum { NOV = 64 };
    gx_seq_op ops[NOV * 3];
    double cyc[NOV * 3];
    for (int i = 0; i < NOV; i++)
        ops[i] = (gx_seq_op){.offset = 0, .kind = GX_OP_NONE, .timed = 1};
    if ((rc = gx_target_seq(t, ops, NOV, 0, cyc, &m)) != GX_OK)
        return die(rc, &m);
    double ov = median_of(cyc, NOV);
    check(ov > 0 && ov < 200, "seq: timer overhead (empty interval) in (0, 200)", ov);

    /* seq: miss then hit on fresh lines (region 512..1024 MiB, untouched) */
    if ((rc = flush(t, 256 * MIB, 256 * MIB, &m)) != GX_OK)
        return die(rc, &m);
    enum { NL = 32 };
    for (int i = 0; i < NL; i++) {
        uint64_t a = 512 * MIB + (uint64_t)i * 64 * 1024;
        ops[3 * i] = (gx_seq_op){.offset = a + 32 * 1024, .kind = GX_OP_LOAD, .timed = 0};
        ops[3 * i + 1] = (gx_seq_op){.offset = a, .kind = GX_OP_LOAD, .timed = 1};
        ops[3 * i + 2] = (gx_seq_op){.offset = a, .kind = GX_OP_LOAD, .timed = 1};
    }
    if ((rc = gx_target_seq(t, ops, 3 * NL, 0, cyc, &m)) != GX_OK)
        return die(rc, &m);
    double miss[NL], hit[NL];
    for (int i = 0; i < NL; i++) {
        miss[i] = cyc[2 * i];
        hit[i] = cyc[2 * i + 1];
    }
    double mmiss = median_of(miss, NL), mhit = median_of(hit, NL);
    check(mhit > ov && mhit < 1000, "seq: L2 hit (second load of a line) in (overhead, 1000)", mhit);
    check(mmiss > mhit + 50, "seq: first load of a fresh line slower than the hit", mmiss);

    /* chase: 1 MiB footprint (L2 hits) */
    double small = 0, large = 0;
    uint64_t w, s;
    if ((rc = chase_mean(t, 0, 1 * MIB, 0, 1, &small, &w, &s, &m)) != GX_OK)
        return die(rc, &m);
    check(small > 100 && small < 800, "chase 1 MiB: L2-hit latency in (100, 800)", small);
    /* same chain again: cached, same answer within 10% */
    double again = 0;
    if ((rc = chase_mean(t, 0, 1 * MIB, 0, 1, &again, &w, &s, &m)) != GX_OK)
        return die(rc, &m);
    check(fabs(again - small) < 0.1 * small, "chase 1 MiB repeated: within 10%", again);

    /* prime_probe: prime 2048 lines, probe 64 of them and 64 fresh ones */
    enum { NP = 2048, NQ = 128 };
    uint64_t *prime = malloc(NP * sizeof *prime), probe[NQ];
    double pc[NQ];
    if (!prime)
        return 1;
    for (uint64_t i = 0; i < NP; i++)
        prime[i] = 128 * MIB + i * LINE;
    for (uint64_t i = 0; i < NQ / 2; i++) {
        probe[2 * i] = 128 * MIB + (i * 31 % NP) * LINE;
        probe[2 * i + 1] = 600 * MIB + i * 4096; /* fresh, same pages as each other */
    }
    rc = gx_target_prime_probe(t, prime, NP, probe, NQ, 0, pc, &m);
    free(prime);
    if (rc != GX_OK)
        return die(rc, &m);
    double ph[NQ / 2], pm[NQ / 2];
    for (int i = 0; i < NQ / 2; i++) {
        ph[i] = pc[2 * i];
        pm[i] = pc[2 * i + 1];
    }
    double mph = median_of(ph, NQ / 2), mpm = median_of(pm, NQ / 2);
    check(mph < 1000 && mph > ov, "prime_probe: primed lines hit", mph);
    check(mpm > mph + 50, "prime_probe: unprimed fresh lines miss", mpm);

    /* chase far beyond L2 */
    if ((rc = chase_mean(t, 0, 512 * MIB, 0, 2, &large, &w, &s, &m)) != GX_OK)
        return die(rc, &m);
    check(large > 1.3 * small, "chase 512 MiB: slower than 1 MiB by > 30%", large);

    /* every SM reachable: an L2 hit from each */
    uint32_t bad = 0;
    double worst = 0;
    for (uint32_t sm = 0; sm < in->sm_count; sm++) {
        gx_seq_op two[2] = {{.offset = 0, .kind = GX_OP_LOAD, .timed = 0},
                            {.offset = 0, .kind = GX_OP_LOAD, .timed = 1}};
        double c1 = 0;
        if (gx_target_seq(t, two, 2, sm, &c1, &m) != GX_OK) {
            fprintf(stderr, "  SM %u: %s\n", sm, m.text);
            bad++;
        }
        if (c1 > worst)
            worst = c1;
    }
    check(bad == 0, "seq runs on every SM (worst L2 hit shown)", worst);

    /* duplicates are refused */
    uint64_t dup[4] = {0, 128, 0, 256};
    gx_chase_req q = {.offsets = dup, .n = 4, .warm_rounds = 1, .timed_rounds = 1, .sm = 0};
    double dm = 0;
    rc = gx_target_chase(t, &q, &dm, &m);
    check(rc == GX_EINVAL, "chase with a duplicated offset: GX_EINVAL", rc);
    /* and the target still works */
    rc = chase_mean(t, 0, 1 * MIB, 0, 1, &again, &w, &s, &m);
    check(rc == GX_OK && fabs(again - small) < 0.1 * small, "chase after a refused chain", again);

    gx_target_stats st;
    gx_target_get_stats(t, &st);
    printf("stats: %llu calls, %llu accesses, %.3f s in primitives\n",
           (unsigned long long)st.calls, (unsigned long long)st.accesses, st.seconds);
    gx_target_close(t);
    check_timeout(o->target);
    printf("check: %d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}

/* ---- curve -------------------------------------------------------------- */

static size_t footprints(uint64_t max_bytes, uint64_t *fp, size_t cap)
{
    size_t k = 0;
    for (uint64_t b = 256 * 1024; b < 8 * MIB && k < cap; b *= 2)
        fp[k++] = b;
    for (int e = 0; e < 32 && k < cap; e++) /* 8..128 MiB, 8 per octave */
        fp[k++] = (uint64_t)(8.0 * (double)MIB * pow(2.0, e / 8.0)) / LINE * LINE;
    const uint64_t big[] = {128, 160, 192, 256, 384, 512, 768, 1024};
    for (size_t i = 0; i < sizeof big / sizeof big[0] && k < cap; i++)
        fp[k++] = big[i] * MIB;
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (fp[i] <= max_bytes)
            fp[n++] = fp[i];
    return n;
}

static int cmd_curve(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    uint64_t fp[64];
    size_t nf = footprints(o->max_mib * MIB, fp, 64);
    if ((rc = gx_target_arena(t, fp[nf - 1], &m)) != GX_OK)
        return die(rc, &m);
    FILE *f = open_out(o->out);
    if (!f)
        return 2;
    if ((rc = warm_clock(t, o->sm, &m)) != GX_OK)
        return die(rc, &m);
    fprintf(f, "sm,footprint_bytes,lines,warm_rounds,timed_steps,mean_cycles,seconds\n");
    for (size_t i = 0; i < nf; i++) {
        double mean = 0, t0 = gx_monotonic_seconds();
        uint64_t w = 0, s = 0;
        if ((rc = chase_mean(t, 0, fp[i], o->sm, 100 + i, &mean, &w, &s, &m)) != GX_OK) {
            close_out(f);
            return die(rc, &m);
        }
        double dt = gx_monotonic_seconds() - t0;
        fprintf(f, "%u,%llu,%llu,%llu,%llu,%.3f,%.3f\n", o->sm, (unsigned long long)fp[i],
                (unsigned long long)(fp[i] / LINE), (unsigned long long)w,
                (unsigned long long)s, mean, dt);
        fflush(f);
        fprintf(stderr, "curve sm %u: %8.3f MiB  %8.1f cycles  (%.2f s)\n", o->sm,
                (double)fp[i] / (double)MIB, mean, dt);
    }
    close_out(f);
    gx_target_close(t);
    return 0;
}

/* ---- seq experiments ------------------------------------------------------ */

typedef struct seqbuf {
    gx_seq_op *ops;
    size_t n, cap;
} seqbuf;

static void push(seqbuf *b, uint64_t off, uint8_t kind, uint8_t timed)
{
    if (b->n < b->cap)
        b->ops[b->n++] = (gx_seq_op){.offset = off, .kind = kind, .timed = timed};
}

static int cmd_seq(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    if ((rc = gx_target_arena(t, 1024 * MIB, &m)) != GX_OK)
        return die(rc, &m);
    if ((rc = warm_clock(t, o->sm, &m)) != GX_OK)
        return die(rc, &m);
    FILE *f = open_out(o->out);
    if (!f)
        return 2;
    seqbuf b = {.cap = 65536};
    b.ops = malloc(b.cap * sizeof *b.ops);
    double *cyc = malloc(b.cap * sizeof *cyc);
    if (!b.ops || !cyc)
        return 1;
    fprintf(f, "experiment,param,rep,cycles_first,cycles_second\n");

    /* timer overhead: 1000 empty intervals (pairs) */
    for (int i = 0; i < 2000; i++)
        push(&b, 0, GX_OP_NONE, 1);
    if ((rc = gx_target_seq(t, b.ops, b.n, o->sm, cyc, &m)) != GX_OK)
        return die(rc, &m);
    for (int i = 0; i < 1000; i++)
        fprintf(f, "none,0,%d,%.0f,%.0f\n", i, cyc[2 * i], cyc[2 * i + 1]);

    /* fresh lines: region from 512 MiB on, after flushing with 0..256 MiB */
    if ((rc = flush(t, 0, 256 * MIB, &m)) != GX_OK)
        return die(rc, &m);
    uint64_t region = 512 * MIB;
    const uint64_t slot = 64 * 1024; /* one experiment per 64 KiB slot */
    /* miss then hit; P (same 2 MiB page, 32 KiB away) warms the TLB first */
    b.n = 0;
    for (int i = 0; i < 64; i++, region += slot) {
        push(&b, region + 32 * 1024, GX_OP_LOAD, 0);
        push(&b, region, GX_OP_LOAD, 1);
        push(&b, region, GX_OP_LOAD, 1);
    }
    /* sector / line: A then A + d (A fresh, 512-byte aligned) */
    int nd = 0;
    for (uint64_t d = 16; d <= 512; d += 16, nd++)
        for (int r = 0; r < 24; r++, region += slot) {
            push(&b, region + 32 * 1024, GX_OP_LOAD, 0);
            push(&b, region, GX_OP_LOAD, 1);
            push(&b, region + d, GX_OP_LOAD, 1);
        }
    /* store then load on a fresh line */
    for (int i = 0; i < 64; i++, region += slot) {
        push(&b, region + 32 * 1024, GX_OP_LOAD, 0);
        push(&b, region, GX_OP_STORE, 1);
        push(&b, region, GX_OP_LOAD, 1);
    }
    /* first touch of a fresh page: the TLB-miss cost (A in a new page, then A+128) */
    uint64_t page = 900 * MIB;
    for (int i = 0; i < 32; i++, page += PAGE) {
        push(&b, page, GX_OP_LOAD, 1);
        push(&b, page + LINE, GX_OP_LOAD, 1);
    }
    if ((rc = gx_target_seq(t, b.ops, b.n, o->sm, cyc, &m)) != GX_OK)
        return die(rc, &m);
    size_t k = 0;
    for (int i = 0; i < 64; i++, k += 2)
        fprintf(f, "missthenhit,0,%d,%.0f,%.0f\n", i, cyc[k], cyc[k + 1]);
    for (int di = 0; di < nd; di++)
        for (int r = 0; r < 24; r++, k += 2)
            fprintf(f, "sector,%d,%d,%.0f,%.0f\n", 16 * (di + 1), r, cyc[k], cyc[k + 1]);
    for (int i = 0; i < 64; i++, k += 2)
        fprintf(f, "storethenload,0,%d,%.0f,%.0f\n", i, cyc[k], cyc[k + 1]);
    for (int i = 0; i < 32; i++, k += 2)
        fprintf(f, "newpage,%d,%d,%.0f,%.0f\n", 900 + 2 * i, i, cyc[k], cyc[k + 1]);
    close_out(f);
    free(b.ops);
    free(cyc);
    gx_target_close(t);
    return 0;
}

/* ---- per-SM fingerprints ------------------------------------------------ */

static int cmd_fingerprint(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    const gx_target_info *in = gx_target_get_info(t);
    /* pages: 0..3 (adjacent), then pairs further out */
    const uint64_t page_ids[] = {0, 1, 2, 3, 64, 65, 256, 257};
    uint32_t np = o->pages < 8 ? o->pages : 8;
    if ((rc = gx_target_arena(t, 260 * PAGE, &m)) != GX_OK)
        return die(rc, &m);
    if ((rc = warm_clock(t, 0, &m)) != GX_OK)
        return die(rc, &m);
    /* o->sms SMs spread over the chip, then the first one again (noise) */
    uint32_t nsm_spread = o->sms < in->sm_count ? o->sms : in->sm_count, nsm = nsm_spread + 1;
    const uint64_t lines_pp = PAGE / LINE, nl = lines_pp * np;
    const uint32_t reps = o->reps;
    double *med = malloc(nl * nsm * sizeof *med);
    gx_seq_op *ops = malloc(nl * (1 + reps) * sizeof *ops);
    double *cyc = malloc(nl * reps * sizeof *cyc);
    if (!med || !ops || !cyc)
        return 1;
    size_t n = 0;
    for (uint64_t l = 0; l < nl; l++) {
        uint64_t off = page_ids[l / lines_pp] * PAGE + (l % lines_pp) * LINE;
        ops[n++] = (gx_seq_op){.offset = off, .kind = GX_OP_LOAD, .timed = 0};
        for (uint32_t r = 0; r < reps; r++)
            ops[n++] = (gx_seq_op){.offset = off, .kind = GX_OP_LOAD, .timed = 1};
    }
    uint32_t *sm_ids = malloc(nsm * sizeof *sm_ids);
    if (!sm_ids)
        return 1;
    for (uint32_t j = 0; j < nsm; j++) {
        sm_ids[j] = (uint32_t)((uint64_t)(j % nsm_spread) * in->sm_count / nsm_spread);
        double t0 = gx_monotonic_seconds();
        if ((rc = gx_target_seq(t, ops, n, sm_ids[j], cyc, &m)) != GX_OK)
            return die(rc, &m);
        for (uint64_t l = 0; l < nl; l++)
            med[l * nsm + j] = gx_median(cyc + l * reps, reps);
        fprintf(stderr, "fingerprint sm %u: %llu lines in %.2f s\n", sm_ids[j],
                (unsigned long long)nl, gx_monotonic_seconds() - t0);
    }
    FILE *f = open_out(o->out);
    if (!f)
        return 2;
    fprintf(f, "offset,page");
    for (uint32_t j = 0; j < nsm; j++)
        fprintf(f, j + 1 == nsm ? ",sm%u_again" : ",sm%u", sm_ids[j]);
    fprintf(f, "\n");
    for (uint64_t l = 0; l < nl; l++) {
        fprintf(f, "%llu,%llu", (unsigned long long)(page_ids[l / lines_pp] * PAGE + (l % lines_pp) * LINE),
                (unsigned long long)page_ids[l / lines_pp]);
        for (uint32_t j = 0; j < nsm; j++)
            fprintf(f, ",%.0f", med[l * nsm + j]);
        fprintf(f, "\n");
    }
    close_out(f);
    free(med);
    free(ops);
    free(cyc);
    free(sm_ids);
    gx_target_close(t);
    return 0;
}

/* ---- cross-SM: lines loaded by SM a, then timed twice from SM b ---------- */

static int cmd_cross(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    const gx_target_info *in = gx_target_get_info(t);
    const uint32_t nsm = in->sm_count, srcs[2] = {0, in->sm_count / 2};
    enum { NLINE = 64 };
    const uint64_t region = 256 * 1024; /* 64 lines 4 KiB apart, inside one page */
    if ((rc = gx_target_arena(t, 512 * MIB, &m)) != GX_OK)
        return die(rc, &m);
    if ((rc = warm_clock(t, 0, &m)) != GX_OK)
        return die(rc, &m);
    if ((rc = flush(t, 256 * MIB, 256 * MIB, &m)) != GX_OK)
        return die(rc, &m);
    FILE *f = open_out(o->out);
    if (!f)
        return 2;
    fprintf(f, "sm_a,sm_b,offset,cycles_first,cycles_second\n");
    gx_seq_op load_a[NLINE], time_b[2 * NLINE];
    double cyc[2 * NLINE], dummy;
    uint64_t base = 2 * MIB;
    for (int s = 0; s < 2; s++)
        for (uint32_t b = 0; b < nsm; b++, base += region) {
            for (uint64_t i = 0; i < NLINE; i++) {
                load_a[i] = (gx_seq_op){.offset = base + i * 4096, .kind = GX_OP_LOAD, .timed = 0};
                time_b[2 * i] = (gx_seq_op){.offset = base + i * 4096, .kind = GX_OP_LOAD, .timed = 1};
                time_b[2 * i + 1] = time_b[2 * i];
            }
            if ((rc = gx_target_seq(t, load_a, NLINE, srcs[s], &dummy, &m)) != GX_OK ||
                (rc = gx_target_seq(t, time_b, 2 * NLINE, b, cyc, &m)) != GX_OK) {
                close_out(f);
                return die(rc, &m);
            }
            for (uint64_t i = 0; i < NLINE; i++)
                fprintf(f, "%u,%u,%llu,%.0f,%.0f\n", srcs[s], b,
                        (unsigned long long)(base + i * 4096), cyc[2 * i], cyc[2 * i + 1]);
        }
    close_out(f);
    gx_target_close(t);
    return 0;
}

/* ---- per-call cost of the primitives ------------------------------------ */

typedef struct call_case {
    const char *name;
    int kind; /* 0 seq, 1 chase (same chain), 2 chase (alternating chains), 3 prime_probe */
    size_t n; /* ops / chain lines / probes */
    int calls;
} call_case;

static int run_case(gx_target *t, const call_case *k, double *per_call_us, gx_msg *m)
{
    gx_seq_op *ops = malloc(k->n * sizeof *ops);
    uint64_t *a = malloc(k->n * sizeof *a), *b = malloc(k->n * sizeof *b);
    uint64_t *prime = malloc(256 * sizeof *prime);
    double *cyc = malloc(k->n * sizeof *cyc);
    int rc = GX_OK;
    if (!ops || !a || !b || !prime || !cyc)
        rc = gx_fail(m, GX_ENOMEM, "no memory");
    for (size_t i = 0; rc == GX_OK && i < k->n; i++) {
        ops[i] = (gx_seq_op){.offset = (i % 64) * LINE, .kind = GX_OP_LOAD, .timed = (uint8_t)(i & 1)};
        a[i] = i * LINE;
        b[i] = MIB + i * LINE;
    }
    for (size_t i = 0; i < 256 && prime; i++)
        prime[i] = 2 * MIB + i * LINE;
    double t0 = gx_monotonic_seconds(), mean;
    for (int c = 0; rc == GX_OK && c < k->calls; c++) {
        gx_chase_req q = {.offsets = (k->kind == 2 && (c & 1)) ? b : a, .n = k->n,
                          .warm_rounds = 1, .timed_rounds = 1, .sm = (uint32_t)c % 8};
        if (k->kind == 0)
            rc = gx_target_seq(t, ops, k->n, (uint32_t)c % 8, cyc, m);
        else if (k->kind == 3)
            rc = gx_target_prime_probe(t, prime, 256, a, k->n, (uint32_t)c % 8, cyc, m);
        else
            rc = gx_target_chase(t, &q, &mean, m);
    }
    *per_call_us = 1e6 * (gx_monotonic_seconds() - t0) / k->calls;
    free(ops);
    free(a);
    free(b);
    free(prime);
    free(cyc);
    return rc;
}

static int cmd_calls(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    if ((rc = gx_target_arena(t, 64 * MIB, &m)) != GX_OK || (rc = warm_clock(t, 0, &m)) != GX_OK)
        return die(rc, &m);
    const call_case cases[] = {
        {"seq 2 ops", 0, 2, 2000},          {"seq 64 ops", 0, 64, 1000},
        {"seq 8192 ops", 0, 8192, 50},      {"chase 64 lines, same chain", 1, 64, 1000},
        {"chase 64 lines, new chain", 2, 64, 500}, {"prime 256 + probe 16", 3, 16, 1000},
    };
    printf("%-30s %8s %12s %12s\n", "case", "calls", "us/call", "relaunches");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t l0 = 0, r0 = 0, l1 = 0, r1 = 0;
        double us = 0;
        gx_cuda_target_counters(t, &l0, &r0);
        if ((rc = run_case(t, &cases[i], &us, &m)) != GX_OK)
            return die(rc, &m);
        gx_cuda_target_counters(t, &l1, &r1);
        printf("%-30s %8d %12.1f %7llu/%llu\n", cases[i].name, cases[i].calls, us,
               (unsigned long long)(r1 - r0), (unsigned long long)(l1 - l0));
    }
    gx_target_close(t);
    return 0;
}

static int cmd_info(const opts *o)
{
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(o->target, 1, &t, &m);
    if (rc != GX_OK)
        return die(rc, &m);
    print_info(gx_target_get_info(t));
    gx_target_close(t);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: cuda_probe info|check|curve|seq|fingerprint|cross|calls [--target T] [--sm N] "
                    "[--max-mib M] [--sms K] [--reps R] [--pages P] [-o FILE.csv]\n");
}

int main(int argc, char **argv)
{
    opts o = {.target = "cuda:0", .max_mib = 512, .sms = 8, .reps = 5, .pages = 8};
    if (argc < 2) {
        usage();
        return 2;
    }
    for (int i = 2; i < argc; i += 2) { /* OPTION VALUE pairs */
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        if (!strcmp(a, "--target"))
            o.target = v;
        else if (!strcmp(a, "-o"))
            o.out = v;
        else if (!strcmp(a, "--sm"))
            o.sm = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--max-mib"))
            o.max_mib = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--sms"))
            o.sms = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--reps"))
            o.reps = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--pages"))
            o.pages = (uint32_t)strtoul(v, NULL, 0);
        else {
            usage();
            return 2;
        }
    }
    if (o.reps == 0 || o.sms == 0 || o.pages == 0 || o.max_mib == 0) {
        usage();
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info"))
        return cmd_info(&o);
    if (!strcmp(cmd, "check"))
        return cmd_check(&o);
    if (!strcmp(cmd, "curve"))
        return cmd_curve(&o);
    if (!strcmp(cmd, "seq"))
        return cmd_seq(&o);
    if (!strcmp(cmd, "fingerprint"))
        return cmd_fingerprint(&o);
    if (!strcmp(cmd, "cross"))
        return cmd_cross(&o);
    if (!strcmp(cmd, "calls"))
        return cmd_calls(&o);
    usage();
    return 2;
}
