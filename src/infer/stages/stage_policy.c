/* stage_policy.c - discovery stage 7: the replacement policy, by comparing
 * measured hits and misses on congruent lines with every candidate policy
 * of the model's registry simulated on the same access sequences
 * (nanoBench's method), with the unknown starting state handled by
 * particles and close candidates told apart by sequences chosen for it.
 *
 * Method:
 * - Lines: U = the ways stage's target + its minimal eviction set (W + 1
 *   congruent lines, "A") plus W more congruent lines ("B") found by probing
 *   the set's pool (the candidates it was reduced from: lines predicted in
 *   its target's slice class, or the same offset in every page) against the
 *   set: 2W + 1 lines of one cache set, ids 0..2W. A pool that runs dry
 *   grows by more pages of the target's slice class (gx_ways_grow_pool);
 *   the other kept sets and their pools come last.
 * - A program = a reset (B POL_RESET_ROUNDS times in a fixed order, then A
 *   in order: pushes out what was there and brings the set close to a known
 *   state) followed by timed accesses to U. Every program runs POL_RUNS
 *   times; every access after the reset is timed and classified hit/miss
 *   against the line's hit latency.
 * - Programs: (1) random segments over random subsets of W+1 .. 2W+1 lines
 *   (many misses, many decisions), (2) a cyclic walk over A (W + 1 lines),
 *   (3) a round-robin walk over exactly W lines (the seed article's figure),
 *   then up to POL_ACTIVE programs chosen among random ones to maximise the
 *   disagreement of the candidates still close to the best.
 * - Scoring: a set cannot be flushed, so the state before the first run is
 *   unknown. Each candidate is simulated from POL_PARTICLES random
 *   histories, through every run in the order they ran (a randomized policy
 *   with its own seed per particle too). Per timed access, p = fraction of
 *   particles predicting a hit; log-likelihood sum(log p or 1-p, clamped),
 *   and "agreement": over the accesses where all particles agree (the
 *   prediction does not depend on the unknown state), the share that
 *   matches the observation.
 * - Answer: the most likely candidate. A deterministic one must agree on at
 *   least 99% of its state-independent predictions; a randomized one must
 *   match the observed hit rates of every program. Otherwise "unknown" (left
 *   out of the profile). Confidence from the likelihood margin over the
 *   runner-up; candidates that predict every access identically (e.g. lru
 *   and plru for 2 ways) cannot be told apart: the first in registry order
 *   is reported with low confidence.
 * - plru-rand:P: P is also estimated on a grid (a report row).
 *
 * Notes: needs ctx->evsets (with their pools) from the ways stage in the
 * current arena; growing a pool needs the slices stage's predictor. All
 * simulation is host-side through policy.h (gx_policy_set_*). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../evset/evset.h"
#include "gpuxray/policy.h"
#include "gpuxray/stats.h"
#include "../infer_util.h"

#define POL_RUNS 3
#define POL_PARTICLES 16
#define POL_PARTICLES_DET 64
#define POL_PARTICLES_MORE 512
#define POL_PARTICLES_RND 32
#define POL_RESET_ROUNDS 6
#define POL_SEGMENTS 16
#define POL_CYCLIC_ROUNDS 24
#define POL_BASE_PROGS 3
#define POL_ACTIVE 4
#define POL_STAT_PROGS 8
#define POL_ACTIVE_TRIES 24
#define POL_MAX_PROGS (POL_BASE_PROGS + POL_ACTIVE + POL_STAT_PROGS)
#define POL_RUNS_STAT 6
#define POL_MAX_RUNS ((POL_BASE_PROGS + POL_ACTIVE) * POL_RUNS + POL_STAT_PROGS * POL_RUNS_STAT)
#define POL_MAX_U (2 * GX_EVX_MAX_WAYS + 1)
#define POL_AGREE 0.99
#define POL_AGREE_CLEAN 0.995 /* below: a randomized candidate that fits may be the truth */
#define POL_EPS 0.01
#define POL_CLOSE_LL 20.0
/* a log-likelihood (or chi2) margin to the runner-up below which the choice
 * is not made with confidence: e^-6, the runner-up is 400 times less likely */
#define POL_FAIR_LL 6.0
#define POL_STALE_ID 100000u
/* Finding B: a search whose B fails verification (a line probed congruent
 * that is not) continues further down the candidates, at most this often */
#define POL_B_ATTEMPTS 3
/* Growing a pool that ran dry: each round adds as many pages as it spans
 * (at least POL_GROW_MIN_PAGES, for a same-offset pool), so two rounds
 * make 4x the pages and about 4x the congruent lines the ways stage's pool
 * held (at least the W its reduction took): a dry pool is a matter of
 * chance (the W lines left are expected where the prefix used half the
 * pool), not of the chip, and doubling makes running dry again unlikely */
#define POL_GROW_ROUNDS 2
#define POL_GROW_MIN_PAGES 16u

typedef struct pol_prog {
    size_t n, cap;
    uint32_t *id;   /* index into U, or a stale id (never for measured programs) */
    uint8_t *timed;
    size_t n_timed;
    int runs; /* times it ran */
} pol_prog;

typedef struct pol_run {
    int prog;
    int8_t *obs; /* per timed step: 1 hit, 0 miss, -1 unsure */
} pol_run;

typedef struct pol_data {
    uint32_t w, nu;
    uint64_t u[POL_MAX_U];
    double ref[POL_MAX_U];
    uint32_t border[GX_EVX_MAX_WAYS];
    int n_progs, n_runs;
    pol_prog prog[POL_MAX_PROGS];
    pol_run run[POL_MAX_RUNS];
    size_t total_timed; /* over all runs */
} pol_data;

typedef struct pol_score {
    const char *spec;
    int randomized;
    double ll;        /* log-likelihood of every observed access */
    double agree;     /* on state-independent predictions */
    double coverage;  /* share of accesses with a state-independent prediction */
    double hr_obs[POL_MAX_PROGS], hr_sim[POL_MAX_PROGS], hr_sd[POL_MAX_PROGS];
    double chi2;       /* randomized: hit rates of the programs vs Monte Carlo */
    int best_particle; /* deterministic: the initial history that fits best */
    int particles;
} pol_score;

static void free_data(pol_data *d)
{
    for (int p = 0; p < POL_MAX_PROGS; p++) {
        free(d->prog[p].id);
        free(d->prog[p].timed);
    }
    for (int r = 0; r < d->n_runs; r++)
        free(d->run[r].obs);
}

/* ---- lines ---------------------------------------------------------------- */

/* Candidates for B: the set's pool (lines predicted in its target's slice
 * class) from index `from` on, or, for a same-offset pool (NULL), the
 * target's offset in every page; lines already in U left out, shuffled. */
static int candidates(gx_infer *ctx, const gx_evset *es, size_t from, const pol_data *d,
                      uint64_t **out, size_t *n_out)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t npages = page ? ctx->arena_work_bytes / page : 0;
    size_t cap = es->pool ? (es->n_pool > from ? es->n_pool - from : 0) : (size_t)npages;
    uint64_t *cand = malloc((cap ? cap : 1) * sizeof *cand);
    if (!cand)
        return gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
    size_t nc = 0;
    for (size_t p = 0; p < cap; p++) {
        uint64_t x = es->pool ? es->pool[from + p] : p * page + es->target % page;
        int used = 0;
        for (uint32_t i = 0; i <= d->w && !used; i++)
            used = d->u[i] == x;
        if (!used)
            cand[nc++] = x;
    }
    gx_rng_shuffle_u64(&ctx->rng, cand, (uint64_t)nc);
    *out = cand;
    *n_out = nc;
    return GX_OK;
}

/* B = W lines of cand congruent with A's target (probed against A), which
 * must form a minimal eviction set of the target too (a probe that
 * mistook a line would make every prediction wrong): verified, and searched
 * again further down the candidates when it fails. *ok = 1 when found. */
static int find_b(gx_evx *ev, const pol_data *d, const uint64_t *cand, size_t nc, uint64_t *b,
                  int *ok)
{
    uint32_t w = d->w;
    int rc = GX_OK;
    size_t from = 0;
    *ok = 0;
    for (int attempt = 0; rc == GX_OK && !*ok && attempt < POL_B_ATTEMPTS && from < nc;
         attempt++) {
        size_t got = 0;
        size_t before = from;
        rc = gx_evx_more_congruent(ev, d->u + 1, w, cand + from, nc - from, w, b, &got);
        if (rc != GX_OK || got < w)
            break;
        /* continue after the last line taken */
        for (size_t i = from; i < nc; i++)
            if (cand[i] == b[w - 1]) {
                from = i + 1;
                break;
            }
        if (from == before)
            from = nc;
        rc = gx_evx_verify(ev, d->u[0], b, w, ok, NULL);
    }
    return rc;
}

/* A = es's target + its minimal eviction set, B searched in the given
 * candidates; on success U = A + B. */
static int try_set(gx_infer *ctx, gx_evx *ev, const gx_evset *es, size_t from, pol_data *d,
                   int *ok)
{
    *ok = 0;
    d->w = es->n;
    d->u[0] = es->target;
    memcpy(d->u + 1, es->lines, es->n * sizeof *es->lines);
    uint64_t *cand = NULL;
    size_t nc = 0;
    int rc = candidates(ctx, es, from, d, &cand, &nc);
    if (rc == GX_OK)
        rc = find_b(ev, d, cand, nc, d->u + es->n + 1, ok);
    free(cand);
    return rc;
}

/* Pages a set's pool spans (0 for a same-offset pool: it holds none of
 * their class lines). */
static uint32_t pool_pages(const gx_infer *ctx, const gx_evset *es)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t npages = page ? ctx->arena_work_bytes / page : 0;
    uint8_t *seen = es->pool && npages ? calloc(npages, 1) : NULL;
    uint32_t n = 0;
    for (size_t i = 0; seen && i < es->n_pool; i++) {
        uint64_t p = es->pool[i] / page;
        if (p < npages && !seen[p]) {
            seen[p] = 1;
            n++;
        }
    }
    free(seen);
    return n;
}

/* U = target + eviction set + W more congruent lines (B). The ways stage's
 * pools hold only a few W congruent lines (their reduction took W of them),
 * so a pool can run dry: then the first set's pool grows by more pages of
 * its target's slice class (each round doubles its pages, POL_GROW_ROUNDS
 * rounds at most), and at last every other kept set is tried with its own
 * pool. *used = the set U was built on. */
static int gather_lines(gx_infer *ctx, gx_evx *ev, pol_data *d, int *used)
{
    gx_evset *es = &ctx->evsets[0];
    int ok = 0;
    int rc = try_set(ctx, ev, es, 0, d, &ok);
    for (int g = 0; rc == GX_OK && !ok && g < POL_GROW_ROUNDS; g++) {
        uint32_t pages = pool_pages(ctx, es);
        uint32_t more = pages > POL_GROW_MIN_PAGES ? pages : POL_GROW_MIN_PAGES;
        size_t from = es->pool ? es->n_pool : 0, added = 0;
        gx_msg keep = *ctx->msg;
        int grc = gx_ways_grow_pool(ctx, es, more, &added);
        if (grc == GX_EUNSURE) {
            *ctx->msg = keep;
            break;
        }
        if ((rc = grc) != GX_OK || added == 0)
            break;
        infer_progress(ctx, "policy: pool of set 1 grown by %zu lines (%u pages)", added, more);
        rc = try_set(ctx, ev, es, from, d, &ok);
    }
    *used = 0;
    for (int i = 1; rc == GX_OK && !ok && i < ctx->n_evsets && i < GX_INFER_MAX_EVSETS; i++) {
        if (ctx->evsets[i].n != ctx->evsets[0].n)
            continue;
        *used = i;
        rc = try_set(ctx, ev, &ctx->evsets[i], 0, d, &ok);
    }
    if (rc != GX_OK)
        return rc;
    if (!ok)
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "policy: no %u extra congruent lines forming a minimal eviction set "
                       "(%d sets tried, the first one's pool grown)",
                       d->w, ctx->n_evsets);
    d->nu = 2 * d->w + 1;
    return gx_evx_ref_latencies(ev, d->u, d->nu, d->ref);
}

/* ---- programs ----------------------------------------------------------------- */

static int prog_put(pol_prog *p, uint32_t id, int timed)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        uint32_t *i2 = realloc(p->id, cap * sizeof *i2);
        if (!i2)
            return GX_ENOMEM;
        p->id = i2;
        uint8_t *t2 = realloc(p->timed, cap);
        if (!t2)
            return GX_ENOMEM;
        p->timed = t2;
        p->cap = cap;
    }
    p->id[p->n] = id;
    p->timed[p->n] = (uint8_t)timed;
    p->n_timed += (size_t)timed;
    p->n++;
    return GX_OK;
}

static void prog_clear(pol_prog *p)
{
    p->n = p->n_timed = 0;
}

/* B rounds, each in a fresh random order (drawn once: part of the program,
 * replayed identically by the simulation), then (fill_a) A in order, timed.
 * Shuffled rounds make the state after the reset depend far less on what
 * the set held before (measured: QLRU and bit-PLRU variants go from
 * hundreds of possible states to 1-3). */
static int prog_reset(pol_prog *p, const pol_data *d, gx_rng *r, int fill_a)
{
    int rc = GX_OK;
    uint64_t b[GX_EVX_MAX_WAYS];
    for (uint32_t i = 0; i < d->w; i++)
        b[i] = d->border[i];
    for (int k = 0; k < POL_RESET_ROUNDS; k++) {
        gx_rng_shuffle_u64(r, b, d->w);
        for (uint32_t i = 0; i < d->w && rc == GX_OK; i++)
            rc = prog_put(p, (uint32_t)b[i], 0);
    }
    for (uint32_t i = 0; fill_a && i <= d->w && rc == GX_OK; i++)
        rc = prog_put(p, i, 1);
    return rc;
}

/* Random segments: each over a random subset of m lines of U, m in
 * [mlo, mhi]; optionally "hot" re-accesses of the segment's first line. */
static int prog_segments(pol_prog *p, const pol_data *d, gx_rng *r, int segs, size_t seg_len,
                         uint32_t mlo, uint32_t mhi, double hot)
{
    uint64_t t[POL_MAX_U];
    int rc = GX_OK;
    for (int s = 0; s < segs && rc == GX_OK; s++) {
        uint32_t m = mlo + (uint32_t)gx_rng_below(r, mhi - mlo + 1);
        if (m > d->nu)
            m = d->nu;
        for (uint32_t i = 0; i < d->nu; i++)
            t[i] = i;
        gx_rng_shuffle_u64(r, t, d->nu);
        for (size_t k = 0; k < seg_len && rc == GX_OK; k++) {
            uint32_t id = (uint32_t)t[gx_rng_below(r, m)];
            if (hot > 0 && gx_rng_uniform(r) < hot)
                id = (uint32_t)t[0];
            rc = prog_put(p, id, 1);
        }
    }
    return rc;
}

static int base_programs(gx_infer *ctx, pol_data *d)
{
    uint32_t w = d->w;
    uint64_t tmp[GX_EVX_MAX_WAYS];
    for (uint32_t i = 0; i < w; i++)
        tmp[i] = w + 1 + i;
    gx_rng_shuffle_u64(&ctx->rng, tmp, w);
    for (uint32_t i = 0; i < w; i++)
        d->border[i] = (uint32_t)tmp[i];
    int rc = GX_OK;
    /* (1) random segments over W+1 .. 2W+1 lines */
    pol_prog *p = &d->prog[0];
    if (rc == GX_OK)
        rc = prog_reset(p, d, &ctx->rng, 1);
    if (rc == GX_OK)
        rc = prog_segments(p, d, &ctx->rng, POL_SEGMENTS, 3 * (size_t)(w + 1), w + 1, 2 * w + 1,
                           0);
    /* (2) cyclic over A */
    p = &d->prog[1];
    if (rc == GX_OK)
        rc = prog_reset(p, d, &ctx->rng, 1);
    for (int r = 0; rc == GX_OK && r < POL_CYCLIC_ROUNDS; r++)
        for (uint32_t i = 0; i <= w && rc == GX_OK; i++)
            rc = prog_put(p, i, 1);
    /* (3) round robin over exactly W lines */
    p = &d->prog[2];
    if (rc == GX_OK)
        rc = prog_reset(p, d, &ctx->rng, 0);
    for (int r = 0; rc == GX_OK && r < POL_CYCLIC_ROUNDS; r++)
        for (uint32_t i = 0; i < w && rc == GX_OK; i++)
            rc = prog_put(p, i, 1);
    d->n_progs = POL_BASE_PROGS;
    return rc == GX_OK ? GX_OK : gx_fail(ctx->msg, rc, "policy: out of memory");
}

/* A random program for the discrimination search. */
static int random_program(pol_prog *p, const pol_data *d, gx_rng *r)
{
    prog_clear(p);
    uint32_t w = d->w;
    int rc = prog_reset(p, d, r, 1);
    int kind = (int)gx_rng_below(r, 3);
    uint32_t mlo = w + 1, mhi = w + 1 + (uint32_t)gx_rng_below(r, w + 1);
    double hot = kind == 1 ? 0.2 + 0.4 * gx_rng_uniform(r) : 0;
    size_t seg = (size_t)(w + 1) * (1 + gx_rng_below(r, 4));
    int segs = (int)((size_t)(24 * (w + 1)) / seg) + 1;
    if (kind == 2) { /* cyclic walks over W+1 .. W+3 lines with random detours */
        for (int s = 0; s < 6 && rc == GX_OK; s++) {
            uint32_t m = w + 1 + (uint32_t)gx_rng_below(r, 3);
            if (m > d->nu)
                m = d->nu;
            uint64_t t[POL_MAX_U];
            for (uint32_t i = 0; i < d->nu; i++)
                t[i] = i;
            gx_rng_shuffle_u64(r, t, d->nu);
            for (int rr = 0; rr < 4 && rc == GX_OK; rr++)
                for (uint32_t i = 0; i < m && rc == GX_OK; i++) {
                    rc = prog_put(p, (uint32_t)t[i], 1);
                    if (rc == GX_OK && gx_rng_uniform(r) < 0.15)
                        rc = prog_put(p, (uint32_t)t[gx_rng_below(r, m)], 1);
                }
        }
        return rc;
    }
    if (rc == GX_OK)
        rc = prog_segments(p, d, r, segs, seg, mlo, mhi, hot);
    return rc;
}

/* Programs for telling randomized policies apart by their hit rates: cyclic
 * walks over W+2 and W+3 lines, random accesses over W+2 .. W+4, cyclic
 * over W+1 again (more samples). */
static int stat_program(pol_prog *p, const pol_data *d, gx_rng *r, int kind)
{
    prog_clear(p);
    uint32_t w = d->w;
    int rc = prog_reset(p, d, r, 1);
    uint32_t m = kind == 0 ? w + 2 : kind == 1 ? w + 3 : kind == 2 ? w + 4 : w + 1;
    if (m > d->nu)
        m = d->nu;
    if (kind == 2)
        return rc == GX_OK ? prog_segments(p, d, r, 16, 4 * (size_t)(w + 1), w + 2, m, 0) : rc;
    for (int k = 0; rc == GX_OK && k < 2 * POL_CYCLIC_ROUNDS; k++)
        for (uint32_t i = 0; i < m && rc == GX_OK; i++)
            rc = prog_put(p, i, 1);
    return rc;
}

/* ---- measurement ---------------------------------------------------------------- */

static int run_program(gx_infer *ctx, gx_evx *ev, pol_data *d, int prog, int runs)
{
    pol_prog *pg = &d->prog[prog];
    gx_seq_op *ops = calloc(pg->n, sizeof *ops);
    double *cyc = calloc(pg->n_timed ? pg->n_timed : 1, sizeof *cyc);
    int rc = ops && cyc ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
    for (size_t i = 0; rc == GX_OK && i < pg->n; i++) {
        ops[i].offset = d->u[pg->id[i]];
        ops[i].kind = GX_OP_LOAD;
        ops[i].timed = pg->timed[i];
    }
    for (int r = 0; rc == GX_OK && r < runs && d->n_runs < POL_MAX_RUNS; r++) {
        pol_run *run = &d->run[d->n_runs];
        run->prog = prog;
        run->obs = calloc(pg->n_timed ? pg->n_timed : 1, sizeof *run->obs);
        if (!run->obs) {
            rc = gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
            break;
        }
        d->n_runs++;
        pg->runs++;
        if ((rc = infer_seq_timed(ctx, ops, pg->n, ev->sm, cyc)) != GX_OK)
            break;
        size_t t = 0;
        for (size_t i = 0; i < pg->n; i++)
            if (pg->timed[i]) {
                run->obs[t] = (int8_t)gx_evx_classify(ev, cyc[t], d->ref[pg->id[i]]);
                t++;
            }
        d->total_timed += pg->n_timed;
    }
    free(ops);
    free(cyc);
    return rc;
}

/* ---- simulation ------------------------------------------------------------------ */

/* A particle: a fresh simulated set after a random history over U and
 * stale lines (particle 0 of a deterministic candidate: empty). */
static int particle_new(const char *spec, const pol_data *d, int k, int randomized,
                        gx_policy_set **out, gx_msg *msg)
{
    uint64_t seed = randomized ? 7919u * (uint64_t)k + 1 : 1;
    int rc = gx_policy_set_new(spec, d->w, seed, out, msg);
    if (rc != GX_OK || k == 0)
        return rc;
    gx_rng r;
    gx_rng_seed(&r, gx_mix64(0x5eedu + (uint64_t)k));
    if (k % 4 == 3) {
        /* what the earlier stages leave: the eviction set and its target
         * walked in shuffled rounds, some B lines (probing) in between */
        uint64_t a[GX_EVX_MAX_WAYS + 1];
        uint32_t rounds = 4u + (uint32_t)gx_rng_below(&r, 24);
        for (uint32_t q = 0; q < rounds; q++) {
            for (uint32_t i = 0; i <= d->w; i++)
                a[i] = i;
            gx_rng_shuffle_u64(&r, a, d->w + 1);
            for (uint32_t i = 0; i <= d->w; i++) {
                gx_policy_set_access(*out, a[i]);
                if (gx_rng_uniform(&r) < 0.1)
                    gx_policy_set_access(*out, d->w + 1 + gx_rng_below(&r, d->w));
            }
        }
        return GX_OK;
    }
    /* histories of 10W .. 60W accesses: short ones alone miss some states */
    uint32_t len = (10u + 10u * (uint32_t)(k % 6)) * d->w;
    for (uint32_t i = 0; i < len; i++) {
        uint64_t x = gx_rng_below(&r, 2 * (uint64_t)d->nu);
        gx_policy_set_access(*out, x < d->nu ? x : POL_STALE_ID + x);
    }
    return GX_OK;
}

/* Run a program on a simulated set; hits (optional) per timed step. */
static void sim_prog(gx_policy_set *s, const pol_prog *pg, uint8_t *hits)
{
    size_t t = 0;
    for (size_t i = 0; i < pg->n; i++) {
        int h = gx_policy_set_access(s, pg->id[i]);
        if (pg->timed[i] && hits)
            hits[t++] = (uint8_t)h;
    }
}

static double clamp_p(double p)
{
    return p < POL_EPS ? POL_EPS : p > 1 - POL_EPS ? 1 - POL_EPS : p;
}

/* Deterministic candidate: the particle (initial history) that agrees with
 * the most observed accesses; LL of a noisy observation of its prediction. */
static int score_det(const pol_data *d, pol_score *sc, int particles, uint8_t *hits, gx_msg *msg)
{
    size_t best = 0, n = 0;
    int best_k = 0;
    for (int k = 0; k < particles; k++) {
        gx_policy_set *s = NULL;
        int rc = particle_new(sc->spec, d, k, 0, &s, msg);
        if (rc != GX_OK)
            return rc;
        size_t a = 0, m = 0;
        for (int r = 0; r < d->n_runs; r++) {
            const pol_prog *pg = &d->prog[d->run[r].prog];
            sim_prog(s, pg, hits);
            for (size_t t = 0; t < pg->n_timed; t++) {
                int o = d->run[r].obs[t];
                if (o < 0)
                    continue;
                m++;
                a += o == hits[t];
            }
        }
        gx_policy_set_free(s);
        if (k == 0 || a > best) {
            best = a;
            best_k = k;
        }
        n = m;
    }
    sc->best_particle = best_k;
    sc->particles = particles;
    sc->agree = n ? (double)best / (double)n : 0;
    sc->coverage = 1;
    sc->ll = (double)best * log(1 - POL_EPS) + (double)(n - best) * log(POL_EPS);
    return GX_OK;
}

/* Randomized candidate: Monte Carlo hit probability per access (for the
 * likelihood) and per-particle hit rate of every program (the statistic
 * that decides: it does not depend on the unknown starting state). */
static int score_rnd(const pol_data *d, pol_score *sc, uint16_t *cnt, uint8_t *hits,
                     gx_msg *msg)
{
    const int particles = POL_PARTICLES_RND;
    double phr[POL_PARTICLES_RND][POL_MAX_PROGS];
    memset(cnt, 0, d->total_timed * sizeof *cnt);
    memset(phr, 0, sizeof phr);
    for (int k = 0; k < particles; k++) {
        gx_policy_set *s = NULL;
        int rc = particle_new(sc->spec, d, k, 1, &s, msg);
        if (rc != GX_OK)
            return rc;
        size_t base = 0;
        for (int r = 0; r < d->n_runs; r++) {
            int p = d->run[r].prog;
            const pol_prog *pg = &d->prog[p];
            sim_prog(s, pg, hits);
            size_t h = 0;
            for (size_t t = 0; t < pg->n_timed; t++) {
                cnt[base + t] = (uint16_t)(cnt[base + t] + hits[t]);
                h += hits[t];
            }
            phr[k][p] += pg->n_timed && pg->runs ? (double)h / (double)pg->n_timed / pg->runs : 0;
            base += pg->n_timed;
        }
        gx_policy_set_free(s);
    }
    double ll = 0, ea = 0;
    size_t nobs = 0;
    double ho[POL_MAX_PROGS] = {0}, hn[POL_MAX_PROGS] = {0};
    size_t base = 0;
    for (int r = 0; r < d->n_runs; r++) {
        int p = d->run[r].prog;
        const pol_prog *pg = &d->prog[p];
        for (size_t t = 0; t < pg->n_timed; t++) {
            int o = d->run[r].obs[t];
            double q = (double)cnt[base + t] / particles;
            if (o < 0)
                continue;
            nobs++;
            ho[p] += o;
            hn[p] += 1;
            double c = clamp_p(q);
            ll += log(o ? c : 1 - c);
            ea += o ? q : 1 - q;
        }
        base += pg->n_timed;
    }
    sc->ll = ll;
    sc->agree = nobs ? ea / (double)nobs : 0;
    sc->particles = particles;
    sc->chi2 = 0;
    for (int p = 0; p < d->n_progs; p++) {
        double v[POL_PARTICLES_RND];
        for (int k = 0; k < particles; k++)
            v[k] = phr[k][p];
        sc->hr_obs[p] = hn[p] > 0 ? ho[p] / hn[p] : NAN;
        sc->hr_sim[p] = gx_mean(v, (size_t)particles);
        sc->hr_sd[p] = gx_stddev(v, (size_t)particles);
        if (isfinite(sc->hr_obs[p])) {
            double z = (sc->hr_obs[p] - sc->hr_sim[p]) / (sc->hr_sd[p] + 0.005);
            sc->chi2 += z * z;
        }
    }
    return GX_OK;
}

static int score(const pol_data *d, pol_score *sc, uint16_t *cnt, uint8_t *det, uint8_t *hits,
                 gx_msg *msg)
{
    (void)det;
    if (sc->randomized)
        return score_rnd(d, sc, cnt, hits, msg);
    return score_det(d, sc, POL_PARTICLES_DET, hits, msg);
}

/* ---- discrimination ---------------------------------------------------------------- */

/* Predicted hit probability per timed step of program `cand`, run after
 * everything measured so far: the best particle of a deterministic
 * candidate, Monte Carlo for a randomized one. */
static int predict(const pol_data *d, const pol_prog *cand, const pol_score *sc, uint16_t *cnt,
                   int *parts, uint8_t *hits, gx_msg *msg)
{
    *parts = sc->randomized ? 2 * POL_PARTICLES : 1;
    memset(cnt, 0, cand->n_timed * sizeof *cnt);
    for (int j = 0; j < *parts; j++) {
        int k = sc->randomized ? j : sc->best_particle;
        gx_policy_set *s = NULL;
        int rc = particle_new(sc->spec, d, k, sc->randomized, &s, msg);
        if (rc != GX_OK)
            return rc;
        for (int r = 0; r < d->n_runs; r++)
            sim_prog(s, &d->prog[d->run[r].prog], hits);
        sim_prog(s, cand, hits);
        for (size_t t = 0; t < cand->n_timed; t++)
            cnt[t] = (uint16_t)(cnt[t] + hits[t]);
        gx_policy_set_free(s);
    }
    return GX_OK;
}

/* How well program `cand` separates candidates a and b: expected number of
 * accesses where both predict confidently and differently. */
static int discrimination(const pol_data *d, const pol_prog *cand, const pol_score *a,
                          const pol_score *b, uint8_t *hits, size_t *out, gx_msg *msg)
{
    size_t n = cand->n_timed;
    uint16_t *ca = calloc(n ? n : 1, sizeof *ca), *cb = calloc(n ? n : 1, sizeof *cb);
    int pa = 1, pb = 1;
    int rc = ca && cb ? GX_OK : gx_fail(msg, GX_ENOMEM, "policy: out of memory");
    if (rc == GX_OK)
        rc = predict(d, cand, a, ca, &pa, hits, msg);
    if (rc == GX_OK)
        rc = predict(d, cand, b, cb, &pb, hits, msg);
    double sum = 0;
    for (size_t t = 0; rc == GX_OK && t < n; t++) {
        double qa = (double)ca[t] / pa, qb = (double)cb[t] / pb;
        if ((qa < 0.2 || qa > 0.8) && (qb < 0.2 || qb > 0.8))
            sum += fabs(qa - qb);
    }
    free(ca);
    free(cb);
    *out = (size_t)sum;
    return rc;
}

/* ---- decision --------------------------------------------------------------------- */

/* Best two deterministic candidates (by likelihood; ties keep registry
 * order) and best two randomized ones (by hit-rate chi-square). */
static void rank(const pol_score *sc, size_t n, int *best, int *second, int *rbest, int *rsecond)
{
    *best = *second = *rbest = *rsecond = -1;
    for (size_t i = 0; i < n; i++) {
        int k = (int)i;
        if (!sc[i].randomized) {
            if (*best < 0 || sc[i].ll > sc[*best].ll) {
                *second = *best;
                *best = k;
            } else if (*second < 0 || sc[i].ll > sc[*second].ll) {
                *second = k;
            }
        } else {
            if (*rbest < 0 || sc[i].chi2 < sc[*rbest].chi2) {
                *rsecond = *rbest;
                *rbest = k;
            } else if (*rsecond < 0 || sc[i].chi2 < sc[*rsecond].chi2) {
                *rsecond = k;
            }
        }
    }
}

/* Hit rates within reach of the Monte Carlo spread on every program. */
static int plausible_random(const pol_data *d, const pol_score *sc)
{
    return sc->chi2 <= 9.0 * d->n_progs;
}

/* Observed hit rate of program p (after its first round for program 3). */
static double observed_hr(const pol_data *d, int p, size_t skip)
{
    size_t h = 0, n = 0;
    for (int r = 0; r < d->n_runs; r++) {
        if (d->run[r].prog != p)
            continue;
        for (size_t t = skip; t < d->prog[p].n_timed; t++)
            if (d->run[r].obs[t] >= 0) {
                n++;
                h += d->run[r].obs[t] == 1;
            }
    }
    return n ? (double)h / (double)n : NAN;
}

/* P of plru-rand:P: the grid point whose hit rates fit best. */
static int estimate_p(const pol_data *d, uint16_t *cnt, uint8_t *det, uint8_t *hits,
                      double *best_p, double *best_chi2, gx_msg *msg)
{
    static const double grid[] = {0.01, 0.02, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0};
    double best = INFINITY;
    *best_p = NAN;
    for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++) {
        char spec[48];
        snprintf(spec, sizeof spec, "plru-rand:%g", grid[g]);
        pol_score sc = {.spec = spec, .randomized = 1};
        int rc = score(d, &sc, cnt, det, hits, msg);
        if (rc != GX_OK)
            return rc;
        if (sc.chi2 < best) {
            best = sc.chi2;
            *best_p = grid[g];
        }
    }
    *best_chi2 = best;
    return GX_OK;
}

static void report_policy(gx_infer *ctx, const pol_data *d, const pol_score *sc, int best,
                          int second, int chosen, double conf, double margin, double p_est,
                          int active)
{
    char v[128], m[128];
    snprintf(v, sizeof v, "%s", chosen >= 0 ? sc[chosen].spec : "unknown");
    if (best >= 0 && sc[best].randomized)
        snprintf(m, sizeof m, "%s: hit rates chi2 %.1f, runner-up %s (+%.0f), %d+%d sequences",
                 sc[best].spec, sc[best].chi2, second >= 0 ? sc[second].spec : "-", margin,
                 POL_BASE_PROGS, active);
    else
        snprintf(m, sizeof m, "%s agrees %.2f%%, runner-up %s (dLL %.0f), %d+%d sequences",
                 best >= 0 ? sc[best].spec : "-", best >= 0 ? 100 * sc[best].agree : 0,
                 second >= 0 ? sc[second].spec : "-", margin, POL_BASE_PROGS, active);
    infer_report_row(ctx, "l2.policy", v, m, conf, chosen >= 0 && conf >= 0.9);
    if (isfinite(p_est)) {
        snprintf(v, sizeof v, "%g", p_est);
        snprintf(m, sizeof m, "plru-rand:P, best hit-rate fit on a grid");
        infer_report_row(ctx, "policy random share P", v, m, NAN, 0);
    }
    double rr = observed_hr(d, 2, d->w), cyc = observed_hr(d, 1, d->w + 1);
    snprintf(v, sizeof v, "%.1f%% (W+1 lines: %.1f%%)", 100 * rr, 100 * cyc);
    snprintf(m, sizeof m, "round-robin walk over exactly W=%u congruent lines, after round 1",
             d->w);
    infer_report_row(ctx, "round-robin hit rate", v, m, NAN, 0);
}

typedef struct pol_work {
    uint16_t *cnt;
    uint8_t *det;
    uint8_t *hits;
    size_t cap;
} pol_work;

static int work_fit(pol_work *w, size_t n, gx_msg *msg)
{
    if (n <= w->cap)
        return GX_OK;
    free(w->cnt);
    free(w->det);
    free(w->hits);
    w->cnt = malloc(n * sizeof *w->cnt);
    w->det = malloc(n);
    w->hits = malloc(n);
    w->cap = w->cnt && w->det && w->hits ? n : 0;
    return w->cap ? GX_OK : gx_fail(msg, GX_ENOMEM, "policy: out of memory");
}

static int score_all(const pol_data *d, pol_score *sc, size_t nc, pol_work *w, gx_msg *msg)
{
    size_t maxprog = 0;
    for (int p = 0; p < d->n_progs; p++)
        if (d->prog[p].n_timed > maxprog)
            maxprog = d->prog[p].n_timed;
    int rc = work_fit(w, d->total_timed > maxprog ? d->total_timed : maxprog, msg);
    for (size_t i = 0; rc == GX_OK && i < nc; i++)
        rc = score(d, &sc[i], w->cnt, w->det, w->hits, msg);
    /* A deterministic leader that does not quite fit may only lack the right
     * starting state (a pruned PLRU tree has ~100 after the reset): search
     * many more initial histories for the best two. */
    for (int round = 0; rc == GX_OK && round < 3; round++) {
        int b = -1;
        int want = round < 2 ? POL_PARTICLES_MORE : 4 * POL_PARTICLES_MORE;
        for (size_t i = 0; i < nc; i++)
            if (!sc[i].randomized && sc[i].particles < want && (b < 0 || sc[i].ll > sc[b].ll))
                b = (int)i;
        if (b < 0 || sc[b].agree >= 0.995 || (round == 2 && sc[b].agree < 0.9))
            break;
        rc = score_det(d, &sc[b], want, w->hits, msg);
    }
    return rc;
}

/* Choose and run programs that split the best two while they are close. */
static int discriminate(gx_infer *ctx, gx_evx *ev, pol_data *d, pol_score *sc, size_t nc,
                        pol_work *w, int *active)
{
    pol_prog cand;
    memset(&cand, 0, sizeof cand);
    int rc = GX_OK;
    *active = 0;
    while (rc == GX_OK && *active < POL_ACTIVE && d->n_progs < POL_MAX_PROGS) {
        int best, second, rb, rs;
        rank(sc, nc, &best, &second, &rb, &rs);
        /* only close deterministic leaders that both nearly fit */
        if (best < 0 || second < 0 || sc[best].ll - sc[second].ll >= POL_CLOSE_LL ||
            sc[second].agree < 0.97)
            break;
        size_t best_disc = 0;
        gx_rng keep = ctx->rng;
        gx_rng pick = ctx->rng;
        for (int tr = 0; rc == GX_OK && tr < POL_ACTIVE_TRIES; tr++) {
            gx_rng before = ctx->rng;
            if ((rc = random_program(&cand, d, &ctx->rng)) != GX_OK)
                break;
            if ((rc = work_fit(w, cand.n_timed, ctx->msg)) != GX_OK)
                break;
            size_t disc = 0;
            rc = discrimination(d, &cand, &sc[best], &sc[second], w->hits, &disc, ctx->msg);
            if (rc == GX_OK && disc > best_disc) {
                best_disc = disc;
                pick = before;
            }
        }
        if (rc != GX_OK || best_disc < 2)
            break; /* nothing tells them apart: equivalent here */
        keep = ctx->rng;
        ctx->rng = pick; /* rebuild the chosen program */
        pol_prog *np = &d->prog[d->n_progs];
        rc = random_program(np, d, &ctx->rng);
        ctx->rng = keep;
        if (rc != GX_OK)
            break;
        d->n_progs++;
        (*active)++;
        if ((rc = run_program(ctx, ev, d, d->n_progs - 1, POL_RUNS)) == GX_OK)
            rc = score_all(d, sc, nc, w, ctx->msg);
    }
    free(cand.id);
    free(cand.timed);
    if (rc == GX_ENOMEM)
        rc = gx_fail(ctx->msg, rc, "policy: out of memory");
    return rc;
}

/* A randomized leader with a close runner-up: more hit-rate samples. */
static int refine_random(gx_infer *ctx, gx_evx *ev, pol_data *d, pol_score *sc, size_t nc,
                         pol_work *w, int *active)
{
    int rc = GX_OK;
    for (int i = 0; rc == GX_OK && i < POL_STAT_PROGS && d->n_progs < POL_MAX_PROGS; i++) {
        int kind = i % 4;
        int best, second, rb, rs;
        rank(sc, nc, &best, &second, &rb, &rs);
        if ((best >= 0 && sc[best].agree >= POL_AGREE) || rb < 0 || rs < 0 ||
            sc[rs].chi2 - sc[rb].chi2 >= POL_CLOSE_LL)
            break;
        if ((rc = stat_program(&d->prog[d->n_progs], d, &ctx->rng, kind)) != GX_OK) {
            rc = gx_fail(ctx->msg, rc, "policy: out of memory");
            break;
        }
        d->n_progs++;
        (*active)++;
        if ((rc = run_program(ctx, ev, d, d->n_progs - 1, POL_RUNS_STAT)) == GX_OK)
            rc = score_all(d, sc, nc, w, ctx->msg);
    }
    return rc;
}

/* Report data (series "policy"): every candidate's fit. Copies only. */
static void record_policy(gx_infer *ctx, const pol_data *d, const pol_score *sc, size_t nc,
                          int chosen)
{
    if (!infer_recording(ctx))
        return;
    infer_data_set(ctx, "policy", "method",
                   json_string("replay of measured hit/miss sequences over W+k congruent lines: "
                               "deterministic candidates by agreement on state-independent "
                               "predictions and log-likelihood, randomized ones by hit-rate "
                               "chi-square against Monte Carlo"));
    infer_data_set(ctx, "policy", "timed_accesses", json_integer((json_int_t)d->total_timed));
    infer_data_set(ctx, "policy", "runs", json_integer(d->n_runs));
    infer_data_set(ctx, "policy", "chosen", json_string(chosen >= 0 ? sc[chosen].spec : ""));
    for (size_t i = 0; i < nc; i++) {
        json_t *hr = json_array();
        for (int p = 0; p < d->n_progs && hr; p++)
            json_array_append_new(hr, json_pack("{s:o,s:o}", "observed",
                                                infer_json_num(sc[i].hr_obs[p]), "model",
                                                infer_json_num(sc[i].hr_sim[p])));
        infer_data_append(ctx, "policy", "candidates",
                          json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o*}", "spec", sc[i].spec,
                                    "randomized", sc[i].randomized, "agree",
                                    infer_json_num(sc[i].agree), "coverage",
                                    infer_json_num(sc[i].coverage), "log_likelihood",
                                    infer_json_num(sc[i].ll), "chi2", infer_json_num(sc[i].chi2),
                                    "hit_rates", hr));
    }
}

static int decide(gx_infer *ctx, const pol_data *d, pol_score *sc, size_t nc, pol_work *w,
                  int active)
{
    int best, second, rb, rs;
    rank(sc, nc, &best, &second, &rb, &rs);
    int chosen = -1, runner = -1;
    double conf = 0, p_est = NAN, margin = 0;
    if (best >= 0 && sc[best].agree >= POL_AGREE) {
        /* deterministic: agrees with (nearly) every access. Candidates that
         * no timing can tell apart from the best (gx_policy_equivalent: R0/R2
         * mirror images, lru/plru/mru at 2 ways) do not count as runners-up:
         * the margin is to the best candidate that IS distinguishable. */
        chosen = best;
        runner = -1;
        for (size_t i = 0; i < nc; i++) {
            int k = (int)i;
            if (k == best || sc[i].randomized ||
                gx_policy_equivalent(sc[best].spec, sc[i].spec, ctx->ways))
                continue;
            if (runner < 0 || sc[i].ll > sc[runner].ll)
                runner = k;
        }
        margin = runner >= 0 ? sc[best].ll - sc[runner].ll : 100;
        conf = margin >= POL_CLOSE_LL ? 0.99 : margin >= POL_FAIR_LL ? 0.9 : 0.5;
        /* a slightly random policy (plru-rand:P at few ways) looks like its
         * deterministic base with a few disagreements: when a randomized
         * candidate fits the hit rates too, do not claim the base, if the
         * base leaves a few disagreements, and a randomized candidate that
         * fits is a runner-up like the others: the confidence follows its
         * likelihood margin too (at 2 ways plru-rand:P differs from lru
         * only on the P/2 of misses whose random victim is the recent line:
         * a run may show almost none of them, and the base's agreement
         * alone cannot tell) */
        if (rb >= 0 && plausible_random(d, &sc[rb])) {
            double mr = sc[best].ll - sc[rb].ll;
            if (sc[best].agree < POL_AGREE_CLEAN || mr < POL_FAIR_LL)
                conf = fmin(conf, 0.5);
            else if (mr < POL_CLOSE_LL)
                conf = fmin(conf, 0.9);
        }
    } else if (rb >= 0 && plausible_random(d, &sc[rb])) {
        /* randomized: runs disagree with each other, hit rates decide */
        chosen = rb;
        runner = rs;
        margin = rs >= 0 ? sc[rs].chi2 - sc[rb].chi2 : 100;
        conf = margin >= POL_CLOSE_LL ? 0.95 : margin >= POL_FAIR_LL ? 0.9 : 0.5;
    } else {
        runner = second;
    }
    if (chosen >= 0 && sc[chosen].randomized && strncmp(sc[chosen].spec, "plru-rand", 9) == 0) {
        double chi2_est = NAN, p_chosen = NAN;
        int rc = estimate_p(d, w->cnt, w->det, w->hits, &p_est, &chi2_est, ctx->msg);
        if (rc != GX_OK)
            return rc;
        /* the registry lists a few values of P; when another P fits the hit
         * rates clearly better, the policy is plru-rand with a P the
         * registry does not hold: not the chosen candidate */
        if (sscanf(sc[chosen].spec + 9, ":%lf", &p_chosen) == 1 && isfinite(chi2_est) &&
            fabs(p_est - p_chosen) > 1e-9 && sc[chosen].chi2 - chi2_est >= POL_CLOSE_LL)
            conf = fmin(conf, 0.5);
    }
    report_policy(ctx, d, sc, chosen >= 0 ? chosen : best, runner, chosen, conf, margin, p_est,
                  active);
    record_policy(ctx, d, sc, nc, chosen);
    if (chosen >= 0) {
        snprintf(ctx->policy, sizeof ctx->policy, "%s", sc[chosen].spec);
        if (conf >= 0.9) {
            snprintf(ctx->out->l2.policy, sizeof ctx->out->l2.policy, "%s", sc[chosen].spec);
            gx_profile_set_confidence(ctx->out, "l2.policy", conf);
        }
        infer_progress(ctx, "policy: %s (confidence %.2f)", sc[chosen].spec, conf);
    } else {
        snprintf(ctx->policy, sizeof ctx->policy, "unknown");
        infer_progress(ctx, "policy: unknown (best %s at %.2f%%)", best >= 0 ? sc[best].spec : "-",
                       best >= 0 ? 100 * sc[best].agree : 0);
    }
    return GX_OK;
}

int gx_stage_policy(gx_infer *ctx)
{
    if (!ctx->ways || ctx->n_evsets < 1)
        return gx_fail(ctx->msg, GX_EUNSURE, "policy: needs the ways stage's eviction sets");
    if (ctx->evsets_generation != ctx->arena_generation)
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "policy: the arena was replaced after the ways stage (eviction sets lost)");
    const gx_evset *es = &ctx->evsets[0];
    if (es->n != ctx->ways || es->n > GX_EVX_MAX_WAYS)
        return gx_fail(ctx->msg, GX_EUNSURE, "policy: eviction set of %u lines for %u ways", es->n,
                       ctx->ways);
    gx_evx ev;
    int rc = gx_evx_init(&ev, ctx, 0);
    if (rc != GX_OK)
        return rc;
    pol_data *d = calloc(1, sizeof *d);
    size_t nc = gx_policy_candidate_count();
    pol_score *sc = calloc(nc ? nc : 1, sizeof *sc);
    pol_work w;
    memset(&w, 0, sizeof w);
    int active = 0;
    if (!d || !sc) {
        rc = gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nc; i++) {
        gx_policy pol;
        sc[i].spec = gx_policy_candidate(i);
        if ((rc = gx_policy_from_spec(sc[i].spec, &pol, ctx->msg)) != GX_OK)
            goto out;
        sc[i].randomized = pol.ops->randomized;
    }
    int used = 0;
    if ((rc = gather_lines(ctx, &ev, d, &used)) != GX_OK || (rc = base_programs(ctx, d)) != GX_OK)
        goto out;
    if (used > 0)
        infer_progress(ctx, "policy: lines congruent with set %d (set 1's pool ran dry)",
                       used + 1);
    for (int p = 0; p < POL_BASE_PROGS && rc == GX_OK; p++)
        rc = run_program(ctx, &ev, d, p, POL_RUNS);
    if (rc == GX_OK)
        rc = score_all(d, sc, nc, &w, ctx->msg);
    if (rc == GX_OK)
        rc = discriminate(ctx, &ev, d, sc, nc, &w, &active);
    if (rc == GX_OK)
        rc = refine_random(ctx, &ev, d, sc, nc, &w, &active);
    if (rc == GX_OK)
        rc = decide(ctx, d, sc, nc, &w, active);
out:
    free(w.cnt);
    free(w.det);
    free(w.hits);
    if (d)
        free_data(d);
    free(d);
    free(sc);
    gx_evx_free(&ev);
    return rc;
}
