/* infer_util.c - measurement helpers shared by the discovery stages (see
 * infer_util.h): pointer chains, retried primitives, reload and cold-miss
 * latencies, hit/miss decisions with an unsure band, arena management.
 *
 * Notes:
 * - A chase walks its offsets in the order given, so a random cyclic chain
 *   is simply a random permutation (Fisher-Yates through gx_rng).
 * - Cold misses come from a reserve of never-touched blocks after the work
 *   area, not from flushing: flushing a cache with an unknown policy needs
 *   several times its capacity in accesses and is never certain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "../infer_util.h"
#include "gpuxray/bits.h"

/* ---- pointer chains ------------------------------------------------------ */

void infer_chain_shuffle(gx_rng *r, const uint64_t *offs, size_t n, uint64_t *out)
{
    if (out != offs)
        memmove(out, offs, n * sizeof *out);
    gx_rng_shuffle_u64(r, out, (uint64_t)n);
}

void infer_chain_strided(gx_rng *r, uint64_t base, uint64_t stride_bytes, size_t n,
                         uint64_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = base + (uint64_t)i * stride_bytes;
    gx_rng_shuffle_u64(r, out, (uint64_t)n);
}

void infer_chain_jittered(gx_rng *r, uint64_t base, uint64_t block_bytes, uint64_t align_bytes,
                          size_t n, uint64_t *out)
{
    uint64_t slots = align_bytes ? block_bytes / align_bytes : 1;
    if (slots == 0)
        slots = 1;
    for (size_t i = 0; i < n; i++)
        out[i] = base + (uint64_t)i * block_bytes + gx_rng_below(r, slots) * align_bytes;
    gx_rng_shuffle_u64(r, out, (uint64_t)n);
}

int infer_chain_is_cycle(const uint64_t *offs, const uint64_t *chain, size_t n)
{
    if (n == 0)
        return 1;
    uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    int ok = a && b;
    if (ok) {
        memcpy(a, offs, n * sizeof *a);
        memcpy(b, chain, n * sizeof *b);
        qsort(a, n, sizeof *a, gx_cmp_u64);
        qsort(b, n, sizeof *b, gx_cmp_u64);
        for (size_t i = 0; ok && i < n; i++)
            ok = a[i] == b[i] && (i == 0 || a[i] != a[i - 1]);
    }
    free(a);
    free(b);
    return ok;
}

/* ---- retried primitives ---------------------------------------------------- */

int infer_seq_timed(gx_infer *ctx, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles)
{
    int rc = GX_EUNSURE;
    for (int i = 0; i < INFER_RETRIES && rc == GX_EUNSURE; i++)
        rc = gx_target_seq(ctx->t, ops, n, sm, cycles, ctx->msg);
    return rc;
}

int infer_chase(gx_infer *ctx, const uint64_t *chain, size_t n, uint32_t warm_rounds,
                uint32_t timed_rounds, uint64_t max_timed_steps, uint32_t sm, double *mean_cycles)
{
    gx_chase_req req = {.offsets = chain,
                        .n = n,
                        .warm_rounds = warm_rounds,
                        .timed_rounds = timed_rounds ? timed_rounds : 1,
                        .max_timed_steps = max_timed_steps,
                        .sm = sm};
    int rc = GX_EUNSURE;
    for (int i = 0; i < INFER_RETRIES && rc == GX_EUNSURE; i++)
        rc = gx_target_chase(ctx->t, &req, mean_cycles, ctx->msg);
    return rc;
}

int infer_prime_probe(gx_infer *ctx, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                      const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles)
{
    int rc = GX_EUNSURE;
    for (int i = 0; i < INFER_RETRIES && rc == GX_EUNSURE; i++)
        rc = gx_target_prime_probe_rounds(ctx->t, prime, n_prime, rounds, probe, n_probe, sm,
                                          cycles, ctx->msg);
    return rc;
}

/* ---- latencies ------------------------------------------------------------- */

int infer_reload_latency(gx_infer *ctx, uint64_t off, uint32_t sm, int reps, double *median)
{
    if (reps < 1)
        reps = 1;
    size_t n = (size_t)reps + 1;
    gx_seq_op *ops = calloc(n, sizeof *ops);
    double *cyc = calloc(n, sizeof *cyc);
    int rc = GX_ENOMEM;
    if (ops && cyc) {
        for (size_t i = 0; i < n; i++) {
            ops[i].offset = off;
            ops[i].kind = GX_OP_LOAD;
            ops[i].timed = i > 0;
        }
        rc = infer_seq_timed(ctx, ops, n, sm, cyc);
        if (rc == GX_OK)
            *median = gx_median(cyc, (size_t)reps);
    } else {
        gx_fail(ctx->msg, rc, "out of memory timing reloads");
    }
    free(ops);
    free(cyc);
    return rc;
}

int infer_miss_latency(gx_infer *ctx, uint32_t sm, int reps, double *median)
{
    if (reps < 1)
        reps = 1;
    size_t n = (size_t)reps;
    gx_seq_op *ops = calloc(n, sizeof *ops);
    double *cyc = calloc(n, sizeof *cyc);
    int rc = ops && cyc ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "out of memory timing misses");
    for (size_t i = 0; rc == GX_OK && i < n; i++) {
        rc = infer_fresh_block(ctx, sm, &ops[i].offset);
        ops[i].kind = GX_OP_LOAD;
        ops[i].timed = 1;
    }
    if (rc == GX_OK)
        rc = infer_seq_timed(ctx, ops, n, sm, cyc);
    if (rc == GX_OK)
        *median = gx_median(cyc, n);
    free(ops);
    free(cyc);
    return rc;
}

int infer_probe_pairs(gx_infer *ctx, const uint64_t *offs, size_t n, uint32_t sm, double *first,
                      double *delta)
{
    if (n == 0)
        return GX_OK;
    gx_seq_op *ops = calloc(3 * n, sizeof *ops);
    double *cyc = calloc(3 * n, sizeof *cyc);
    int rc = GX_OK;
    if (!ops || !cyc) {
        rc = gx_fail(ctx->msg, GX_ENOMEM, "out of memory for %zu probe pairs", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            ops[3 * i + (size_t)j] = (gx_seq_op){.offset = offs[i], .kind = GX_OP_LOAD, .timed = 1};
    if ((rc = infer_seq_timed(ctx, ops, 3 * n, sm, cyc)) != GX_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        double a = cyc[3 * i], b = cyc[3 * i + 1], c = cyc[3 * i + 2];
        /* a reload outlier (rare, huge) must not fake a hit: use the smaller
         * reload when they disagree by far */
        double ref = fabs(b - c) > 100 ? fmin(b, c) : 0.5 * (b + c);
        if (first)
            first[i] = a;
        if (delta)
            delta[i] = a - ref;
    }
out:
    free(ops);
    free(cyc);
    return rc;
}

void infer_pick_distinct(gx_rng *r, const uint64_t *v, size_t n, size_t k, uint64_t *out)
{
    if (k > n)
        k = n;
    if (k * 4 > n) { /* dense: partial Fisher-Yates over indices */
        size_t *idx = malloc(n * sizeof *idx);
        if (idx) {
            for (size_t i = 0; i < n; i++)
                idx[i] = i;
            for (size_t i = 0; i < k; i++) {
                size_t j = i + (size_t)gx_rng_below(r, n - i);
                size_t t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
                out[i] = v[idx[i]];
            }
            free(idx);
            return;
        }
    }
    size_t *taken = malloc((k ? k : 1) * sizeof *taken);
    for (size_t i = 0; i < k; i++) {
        size_t j;
        int dup;
        do { /* sparse: rejection (k << n) */
            j = (size_t)gx_rng_below(r, n);
            dup = 0;
            for (size_t q = 0; taken && q < i; q++)
                dup |= taken[q] == j;
        } while (dup);
        if (taken)
            taken[i] = j;
        out[i] = v[j];
    }
    free(taken);
}

/* ---- decisions --------------------------------------------------------------- */

double infer_unsure_band(const gx_infer *ctx, double lo, double hi)
{
    double noise = ctx->timer.have && isfinite(ctx->timer.noise) ? ctx->timer.noise : 2.0;
    double band = 3.0 * noise + 1.0;
    double gap = fabs(hi - lo);
    if (band > 0.25 * gap)
        band = 0.25 * gap;
    return band;
}

int infer_classify(const gx_infer *ctx, double cycles, double lo, double hi)
{
    if (!isfinite(cycles))
        return -1;
    double mid = 0.5 * (lo + hi);
    double band = infer_unsure_band(ctx, lo, hi);
    if (fabs(cycles - mid) < band)
        return -1;
    return (cycles < mid) == (lo < hi) ? 1 : 0;
}

int infer_is_hit(const gx_infer *ctx, double cycles)
{
    if (!isfinite(cycles) || !(ctx->levels.hit_miss_threshold > 0))
        return -1;
    double lo = ctx->levels.hit_latency, hi = ctx->levels.miss_latency;
    double band;
    if (isfinite(lo) && isfinite(hi) && hi > lo)
        band = infer_unsure_band(ctx, lo, hi);
    else
        band = 3.0 * (ctx->timer.have ? ctx->timer.noise : 2.0) + 1.0;
    if (fabs(cycles - ctx->levels.hit_miss_threshold) < band)
        return -1;
    return cycles < ctx->levels.hit_miss_threshold ? 1 : 0;
}

int infer_delta_is_hit(const gx_infer *ctx, double delta)
{
    if (!isfinite(delta) || !(ctx->levels.miss_delta > 0))
        return -1;
    double mid = 0.5 * ctx->levels.miss_delta;
    double band = 2.0 * (ctx->levels.pair_noise > 0 ? ctx->levels.pair_noise : 2.0);
    if (band > 0.25 * ctx->levels.miss_delta)
        band = 0.25 * ctx->levels.miss_delta;
    if (fabs(delta - mid) < band)
        return -1;
    return delta < mid ? 1 : 0;
}

int infer_vote(const int *votes, int n, int need)
{
    int yes = 0, no = 0, unsure = 0;
    for (int i = 0; i < n; i++) {
        if (votes[i] == 1)
            yes++;
        else if (votes[i] == 0)
            no++;
        else
            unsure++;
    }
    if (yes >= need && yes > no + unsure)
        return 1;
    if (no >= need && no > yes + unsure)
        return 0;
    return -1;
}

/* ---- arena ----------------------------------------------------------------------- */

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return to ? (v + to - 1) / to * to : v;
}

int infer_arena_ensure(gx_infer *ctx, uint64_t work_bytes)
{
    uint64_t page = ctx->info->page_bytes ? ctx->info->page_bytes : 4096;
    uint64_t work = round_up(work_bytes ? work_bytes : page, page);
    if (gx_target_arena_bytes(ctx->t) && ctx->arena.work_bytes >= work)
        return GX_OK;
    uint64_t reserve = round_up(INFER_FRESH_RESERVE_BYTES, page);
    uint64_t max = ctx->info->max_arena_bytes;
    if (max && work + reserve > max) {
        if (work + 2 * page > max)
            return gx_fail(ctx->msg, GX_ERANGE,
                           "need an arena of %llu bytes, the target allows %llu",
                           (unsigned long long)(work + 2 * page), (unsigned long long)max);
        reserve = (max - work) / page * page;
    }
    int rc = gx_target_arena(ctx->t, work + reserve, ctx->msg);
    if (rc != GX_OK) {
        ctx->arena.work_bytes = 0;
        ctx->arena.fresh_next = ctx->arena.fresh_end = 0;
        return rc;
    }
    ctx->arena.work_bytes = work;
    ctx->arena.generation++;
    ctx->arena.fresh_next = work;
    ctx->arena.fresh_end = gx_target_arena_bytes(ctx->t);
    return GX_OK;
}

uint64_t infer_default_work_bytes(const gx_infer *ctx)
{
    uint64_t want = INFER_LEVELS_HINT_FACTOR * ctx->info->api_l2_bytes;
    if (want < (64ull << 20))
        want = 64ull << 20;
    uint64_t max = ctx->info->max_arena_bytes;
    uint64_t reserve = INFER_FRESH_RESERVE_BYTES;
    if (max && want + reserve > max)
        want = max > 2 * reserve ? max - reserve : max / 2;
    return want;
}

int infer_arena_default(gx_infer *ctx)
{
    return infer_arena_ensure(ctx, infer_default_work_bytes(ctx));
}

int infer_fresh_block(gx_infer *ctx, uint32_t sm, uint64_t *off)
{
    const uint64_t blk = INFER_FRESH_BLOCK_BYTES;
    uint64_t page = ctx->info->page_bytes;
    int sentinel = page >= 4 * blk;
    if (ctx->arena.fresh_next == 0 || ctx->arena.fresh_next + blk > ctx->arena.fresh_end)
        return gx_fail(ctx->msg, GX_ERANGE, "the reserve of never-touched lines is exhausted");
    if (sentinel && ctx->arena.fresh_next % page == 0) {
        /* New page: touch its last block once (TLB warm-up), never hand it out. */
        gx_seq_op op = {
            .offset = ctx->arena.fresh_next + page - blk, .kind = GX_OP_LOAD, .timed = 0};
        double dummy = 0;
        int rc = infer_seq_timed(ctx, &op, 1, sm, &dummy);
        if (rc != GX_OK)
            return rc;
    }
    *off = ctx->arena.fresh_next;
    ctx->arena.fresh_next += blk;
    if (sentinel && ctx->arena.fresh_next % page == page - blk)
        ctx->arena.fresh_next += blk; /* skip the sentinel block */
    return GX_OK;
}

/* ---- misc -------------------------------------------------------------------------- */

double infer_level_seq_latency(const gx_infer *ctx, int i)
{
    if (!ctx->levels.have || i < 0 || i >= ctx->levels.n)
        return NAN;
    double skew0 = ctx->levels.chase_hit_latency - ctx->levels.level[0].latency_cycles;
    return ctx->levels.level[i].latency_cycles + skew0 + ctx->timer.overhead;
}

uint32_t infer_line_bytes(const gx_infer *ctx)
{
    return ctx->line.line_bytes ? ctx->line.line_bytes : INFER_DEFAULT_LINE_BYTES;
}

uint64_t infer_first_capacity(const gx_infer *ctx)
{
    if (ctx->levels.n > 0)
        return ctx->levels.level[0].capacity_bytes;
    return ctx->levels.l2_capacity;
}

const char *infer_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
    else if (bytes >= (1ull << 20))
        snprintf(buf, len, "%.2f MiB", (double)bytes / (double)(1ull << 20));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
    else
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    return buf;
}
