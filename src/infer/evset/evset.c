/* evset.c - eviction-set machinery (see evset.h): voted eviction tests,
 * pigeonhole overflow tests, ordered-prefix reduction of a pool to a
 * minimal eviction set, congruence probes.
 *
 * Notes:
 * - Eviction trials on large candidate sets go through prime_probe with
 *   rounds (parallel prime: a GPU runs them at launch cost); overflow tests
 *   and congruence probes, on small sets whose order matters, go through
 *   seq. Both retry GX_EUNSURE answers (infer_util.h).
 * - Randomized policies (random, plru-rand) make single eviction trials
 *   probabilistic near the boundary (exactly W congruent lines); the
 *   prefix search tolerates that (its result only needs to contain W
 *   congruent lines), the overflow test (exact by pigeonhole) then decides
 *   the minimal set, and a failed attempt restarts with more passes. */
#include "evset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "../infer_util.h"

#define EVX_MAX_WARM 64u
#define EVX_MAX_PASSES 256u
#define EVX_ATTEMPTS 4
#define EVX_GALLOP_START 16u
#define EVX_YES_VOTES 3

/* ---- buffers ----------------------------------------------------------- */

static int ensure_ops(gx_evx *ev, size_t n)
{
    if (n <= ev->ops_cap)
        return GX_OK;
    size_t cap = n + n / 2 + 64;
    gx_seq_op *o = realloc(ev->ops, cap * sizeof *o);
    if (!o)
        return gx_fail(ev->ctx->msg, GX_ENOMEM, "evset: out of memory (%zu ops)", cap);
    ev->ops = o;
    double *c = realloc(ev->cyc, cap * sizeof *c);
    if (!c)
        return gx_fail(ev->ctx->msg, GX_ENOMEM, "evset: out of memory (%zu timings)", cap);
    ev->cyc = c;
    ev->ops_cap = ev->cyc_cap = cap;
    return GX_OK;
}

/* Grow a line buffer of the evset state to hold n lines. */
static int grow_lines(gx_evx *ev, uint64_t **buf, size_t *cap, size_t n, const char *what)
{
    if (n <= *cap)
        return GX_OK;
    size_t c = n + n / 2 + 64;
    uint64_t *p = realloc(*buf, c * sizeof *p);
    if (!p)
        return gx_fail(ev->ctx->msg, GX_ENOMEM, "evset: out of memory (%zu %s)", c, what);
    *buf = p;
    *cap = c;
    return GX_OK;
}

static int ensure_scratch(gx_evx *ev, size_t n)
{
    return grow_lines(ev, &ev->scratch, &ev->scratch_cap, n, "lines");
}

static inline void put_op(gx_seq_op *o, uint64_t off, int timed)
{
    o->offset = off;
    o->kind = GX_OP_LOAD;
    o->timed = (uint8_t)(timed ? 1 : 0);
}

/* ---- set-up ------------------------------------------------------------ */

/* The timer noise is the jitter of ONE line's reloads; other lines (other
 * slices, other paths) jitter more: on an H200 it read 1.5 cycles in every
 * run of one call and 3.7-4.4 in the others, and "evicted" at 5 sigmas of
 * 1.5 (11.5 cycles) read hits as misses until no reduction was consistent.
 * A miss lies a whole gap above a hit, so delta never goes below this share
 * of the gap, whatever the one line said (the band scales with it). */
#define EVX_GAP_FLOOR 0.125

/* "Evicted" = slower than the line's own hit by more than delta: a few
 * noise sigmas (at least EVX_GAP_FLOOR of the gap), at most half the gap to the next level. Not the gap's
 * midpoint: a line pushed into a slower level that the levels stage did
 * not separate (a far partition) must count as evicted from the first. */
static void set_threshold(gx_evx *ev)
{
    const gx_infer *ctx = ev->ctx;
    double noise = ctx->timer.have && isfinite(ctx->timer.noise) ? ctx->timer.noise : 2.0;
    double delta = 5.0 * noise + 4.0;
    if (delta < 10.0)
        delta = 10.0;
    if (delta < EVX_GAP_FLOOR * ev->gap)
        delta = EVX_GAP_FLOOR * ev->gap;
    if (delta > 0.5 * ev->gap)
        delta = 0.5 * ev->gap;
    ev->delta = delta;
    double band = 1.5 * noise + 1.0;
    if (band < delta / 6.0)
        band = delta / 6.0;
    ev->band = band < delta / 3.0 ? band : delta / 3.0;
}

int gx_evx_init(gx_evx *ev, gx_infer *ctx, uint32_t sm)
{
    memset(ev, 0, sizeof *ev);
    ev->ctx = ctx;
    ev->sm = sm;
    ev->warm = 4;
    ev->passes = 24;

    double hit = ctx->levels.hit_latency, miss = ctx->levels.miss_latency;
    if (isfinite(hit) && isfinite(miss) && miss - hit > 8.0) {
        ev->gap = miss - hit;
        set_threshold(ev);
        return GX_OK;
    }
    /* No levels stage: measure a hit and a cold miss ourselves. */
    int rc = infer_arena_ensure(ctx, ctx->arena.work_bytes ? ctx->arena.work_bytes
                                                           : infer_default_work_bytes(ctx));
    if (rc != GX_OK)
        return rc;
    double h = 0, m = 0;
    if ((rc = gx_evx_hit_latency(ev, 0, 9, &h)) != GX_OK)
        return rc;
    if ((rc = infer_miss_latency(ctx, sm, 9, &m)) != GX_OK)
        return rc;
    if (!(m - h > 8.0))
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "evset: no gap between a hit (%.0f cycles) and a miss (%.0f cycles)", h, m);
    ev->gap = m - h;
    set_threshold(ev);
    return GX_OK;
}

void gx_evx_free(gx_evx *ev)
{
    free(ev->ops);
    free(ev->cyc);
    free(ev->scratch);
    free(ev->prime);
    ev->prime = NULL;
    ev->prime_cap = 0;
    ev->ops = NULL;
    ev->cyc = NULL;
    ev->scratch = NULL;
    ev->ops_cap = ev->cyc_cap = ev->scratch_cap = 0;
}

int gx_evx_hit_latency(gx_evx *ev, uint64_t line, int reps, double *hit)
{
    return infer_reload_latency(ev->ctx, line, ev->sm, reps, hit);
}

/* 1 hit (present), 0 evicted, -1 unsure: against the line's own hit
 * latency plus ev->delta (see gx_evx_init), with an unsure band. */
static int classify(const gx_evx *ev, double cycles, double hit)
{
    if (!isfinite(cycles) || !isfinite(hit))
        return -1;
    double d = cycles - hit;
    if (d < ev->delta - ev->band)
        return 1;
    if (d > ev->delta + ev->band)
        return 0;
    return -1;
}

/* ---- eviction test ------------------------------------------------------- */

/* One round over x in a fresh random order (no policy can lock into a
 * pattern that spares the target). */
static gx_seq_op *put_round(gx_evx *ev, gx_seq_op *o, const uint64_t *x, size_t n, uint64_t *perm)
{
    memcpy(perm, x, n * sizeof *perm);
    gx_rng_shuffle_u64(&ev->ctx->rng, perm, (uint64_t)n);
    for (size_t i = 0; i < n; i++)
        put_op(o++, perm[i], 0);
    return o;
}

/* One eviction trial, as two prime_probe calls (the prime runs in
 * parallel, so on a GPU a trial costs two launches whatever the pool, not
 * (warm + passes) x n dependent loads by one thread): warm rounds over the
 * target and the candidates (a set that fits settles with the target in
 * it), then `passes` rounds over the candidates alone (a set that
 * overflows pushes the target out), then the timed reload of the target.
 * Every round runs in a fresh order (no policy locks into a pattern that
 * spares the target). */
static int evict_trial(gx_evx *ev, uint64_t target, double hit, const uint64_t *x, size_t n,
                       int *cls)
{
    int rc = grow_lines(ev, &ev->prime, &ev->prime_cap, n + 1, "prime lines");
    if (rc != GX_OK)
        return rc;
    ev->prime[0] = target;
    memcpy(ev->prime + 1, x, n * sizeof *x);
    if ((rc = infer_prime_probe(ev->ctx, ev->prime, n + 1, ev->warm, NULL, 0, ev->sm, NULL)) !=
        GX_OK)
        return rc;
    /* the timed reload must not pay a page walk after a prime over many
     * pages: a random other line of the target's page goes first and
     * warms its translation (a fresh one each trial, so a line that
     * happens to share the target's set cannot bias every trial) */
    uint64_t page = ev->ctx->info->page_bytes, line = ev->ctx->line.line_bytes;
    if (!line)
        line = 128;
    uint64_t probe[2] = {target, target};
    size_t n_probe = 1;
    if (page > line) {
        n_probe = 2;
        uint64_t lines = page / line, base = target / page * page;
        uint64_t pick = gx_rng_below(&ev->ctx->rng, lines - 1);
        if (base + pick * line >= target / line * line)
            pick++; /* never the target's own line */
        probe[0] = base + pick * line;
    }
    double cyc[2] = {NAN, NAN};
    if ((rc = infer_prime_probe(ev->ctx, x, n, ev->passes, probe + 2 - n_probe, n_probe, ev->sm,
                                cyc)) != GX_OK)
        return rc;
    ev->trials++;
    *cls = classify(ev, cyc[n_probe - 1], hit);
    return GX_OK;
}

/* More rounds per trial (soft boundary: randomized or pruned-tree policy). */
static void bump(gx_evx *ev)
{
    uint32_t w = ev->warm + ev->warm / 2 + 1, p = ev->passes + ev->passes / 4 + 1;
    ev->warm = w < EVX_MAX_WARM ? w : EVX_MAX_WARM;
    ev->passes = p < EVX_MAX_PASSES ? p : EVX_MAX_PASSES;
    ev->bumps++;
}

int gx_evx_evicts(gx_evx *ev, uint64_t target, double hit, const uint64_t *x, size_t n,
                  int *evicts)
{
    ev->tests++;
    /* Settle a fitting set at least as long as overflow tests saw fitting
     * sets need (slow for randomized policies). */
    uint32_t need = ev->max_clean_round + 2;
    if (need > EVX_MAX_WARM)
        need = EVX_MAX_WARM;
    if (ev->warm < need)
        ev->warm = need;
    /* "Evicted" must be seen EVX_YES_VOTES times in a row: one "present"
     * answer decides "not evicted". An outlier cannot fake an eviction, and
     * near the boundary (exactly W congruent lines, where randomized or
     * pruned-tree policies evict only sometimes) the decision leans to "not
     * evicted", which keeps the prefix search away from lines it is unsure
     * about. */
    int yes = 0;
    for (int attempt = 0; attempt < 12; attempt++) {
        int c = -1;
        int rc = evict_trial(ev, target, hit, x, n, &c);
        if (rc != GX_OK)
            return rc;
        if (c == 1) {
            if (yes > 0) /* mixed answers: a soft boundary, settle and evict longer */
                bump(ev);
            *evicts = 0;
            return GX_OK;
        }
        if (c == 0 && ++yes >= EVX_YES_VOTES) {
            *evicts = 1;
            return GX_OK;
        }
    }
    *evicts = yes > 0;
    return GX_OK;
}

/* ---- overflow test ----------------------------------------------------------- */

int gx_evx_ref_latencies(gx_evx *ev, const uint64_t *lines, size_t n, double *ref)
{
    int rc = ensure_ops(ev, 4 * n + 1);
    if (rc != GX_OK)
        return rc;
    gx_seq_op *o = ev->ops;
    for (size_t i = 0; i < n; i++) {
        put_op(o++, lines[i], 0);
        for (int k = 0; k < 3; k++)
            put_op(o++, lines[i], 1);
    }
    rc = infer_seq_timed(ev->ctx, ev->ops, 4 * n, ev->sm, ev->cyc);
    if (rc != GX_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        ref[i] = gx_median(ev->cyc + 3 * i, 3);
    return GX_OK;
}

int gx_evx_overflows(gx_evx *ev, uint64_t target, double target_hit, const uint64_t *g,
                     const double *ref, size_t n, uint32_t max_rounds, int *overflows,
                     int *clean_round)
{
    gx_infer *ctx = ev->ctx;
    size_t m = n + 1;
    double *refs = malloc(m * sizeof *refs);
    uint64_t *lines = malloc(m * sizeof *lines);
    int rc = refs && lines ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "evset: out of memory");
    if (rc == GX_OK) {
        lines[0] = target;
        refs[0] = target_hit;
        memcpy(lines + 1, g, n * sizeof *g);
        if (ref)
            memcpy(refs + 1, ref, n * sizeof *ref);
        else
            rc = gx_evx_ref_latencies(ev, g, n, refs + 1);
    }
    if (max_rounds == 0)
        max_rounds = 6u * (uint32_t)m + 16u;
    ev->tests++;
    *overflows = 1;
    if (clean_round)
        *clean_round = -1;
    uint32_t done = 0, chunk = 2;
    uint64_t *idx = NULL;
    size_t n_idx = 0;
    while (rc == GX_OK && done < max_rounds) {
        if (chunk > max_rounds - done)
            chunk = max_rounds - done;
        size_t len = (size_t)chunk * m;
        if ((rc = ensure_ops(ev, len)) != GX_OK)
            break;
        /* every round in a fresh random order: a fixed cyclic order can
         * lock some policies (a pruned PLRU tree) into a pattern that never
         * settles although the lines fit */
        if (n_idx < len) {
            free(idx);
            idx = malloc(len * sizeof *idx);
            n_idx = idx ? len : 0;
            if (!idx) {
                rc = gx_fail(ctx->msg, GX_ENOMEM, "evset: out of memory");
                break;
            }
        }
        for (uint32_t r = 0; r < chunk; r++) {
            uint64_t *ix = idx + (size_t)r * m;
            for (size_t i = 0; i < m; i++)
                ix[i] = i;
            gx_rng_shuffle_u64(&ctx->rng, ix, (uint64_t)m);
            for (size_t i = 0; i < m; i++)
                put_op(&ev->ops[(size_t)r * m + i], lines[ix[i]], 1);
        }
        if ((rc = infer_seq_timed(ctx, ev->ops, len, ev->sm, ev->cyc)) != GX_OK)
            break;
        ev->trials++;
        for (uint32_t r = 0; r < chunk; r++) {
            int clean = 1;
            const uint64_t *ix = idx + (size_t)r * m;
            for (size_t i = 0; i < m && clean; i++)
                clean = classify(ev, ev->cyc[(size_t)r * m + i], refs[ix[i]]) == 1;
            if (clean) {
                *overflows = 0;
                uint32_t at = done + r;
                if (clean_round)
                    *clean_round = (int)at;
                if (at > ev->max_clean_round)
                    ev->max_clean_round = at;
                free(refs);
                free(lines);
                free(idx);
                return GX_OK;
            }
        }
        done += chunk;
        if (chunk < 32)
            chunk *= 2;
    }
    free(refs);
    free(lines);
    free(idx);
    return rc;
}

/* ---- probe ---------------------------------------------------------------------- */

int gx_evx_probe(gx_evx *ev, const uint64_t *evset, size_t n_evset, uint32_t passes,
                 const uint64_t *probe, size_t n_probe, int *evicted)
{
    /* each probe line: load, one timed reload (its hit latency; one access
     * more would promote it further under frequency-aware policies); walk
     * the set; reload every line timed; one more timed reload (a second hit
     * sample, unless the probe lines crowd a set: the smaller one counts) */
    size_t len = 2 * n_probe + (size_t)passes * n_evset + 2 * n_probe;
    int rc = ensure_ops(ev, len);
    if (rc != GX_OK)
        return rc;
    gx_seq_op *o = ev->ops;
    for (size_t i = 0; i < n_probe; i++) {
        put_op(o++, probe[i], 0);
        put_op(o++, probe[i], 1);
    }
    uint64_t *perm = malloc((n_evset ? n_evset : 1) * sizeof *perm);
    if (!perm)
        return gx_fail(ev->ctx->msg, GX_ENOMEM, "evset: out of memory");
    for (uint32_t r = 0; r < passes; r++) /* fresh order each pass (see put_round) */
        o = put_round(ev, o, evset, n_evset, perm);
    free(perm);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n_probe; i++)
            put_op(o++, probe[i], 1);
    rc = infer_seq_timed(ev->ctx, ev->ops, len, ev->sm, ev->cyc);
    if (rc != GX_OK)
        return rc;
    ev->trials++;
    for (size_t i = 0; i < n_probe; i++) {
        double a = ev->cyc[i], b = ev->cyc[2 * n_probe + i];
        double ref = a < b ? a : b; /* an outlier or a crowded set is only ever slower */
        evicted[i] = classify(ev, ev->cyc[n_probe + i], ref);
        if (evicted[i] >= 0)
            evicted[i] = !evicted[i];
    }
    return GX_OK;
}

/* ---- reduction ------------------------------------------------------------------- */

enum { FIND_OK = 0, FIND_NO_POOL = 1, FIND_RETRY = 2 };

typedef struct find_state {
    gx_evx *ev;
    uint64_t target;
    double hit;
    const uint64_t *pool;
    size_t n_pool;
    uint64_t f[GX_EVX_MAX_WAYS + 1]; /* congruent lines found (F) */
    double fref[GX_EVX_MAX_WAYS + 1]; /* their hit latencies */
    size_t nf;
    uint64_t accesses0; /* the target's access count when the reduction began */
} find_state;

static uint64_t target_accesses(const gx_evx *ev)
{
    gx_target_stats st;
    gx_target_get_stats(ev->ctx->t, &st);
    return st.accesses;
}

/* The reduction has cost its budget (ev->budget_accesses). */
static int over_budget(const find_state *s)
{
    return s->ev->budget_accesses &&
           target_accesses(s->ev) - s->accesses0 >= s->ev->budget_accesses;
}

/* Does F + pool[0..k) evict the target? */
static int test_prefix(find_state *s, size_t k, int *evicts)
{
    gx_evx *ev = s->ev;
    int rc = ensure_scratch(ev, s->nf + k);
    if (rc != GX_OK)
        return rc;
    memcpy(ev->scratch, s->f, s->nf * sizeof *s->f);
    memcpy(ev->scratch + s->nf, s->pool, k * sizeof *s->pool);
    return gx_evx_evicts(ev, s->target, s->hit, ev->scratch, s->nf + k, evicts);
}

/* Smallest k in (lo, hi] with F + prefix(k) evicting, given that hi does.
 * *seen = 1 when some test in (lo, hi) answered "evicts" (else the answer
 * hi rests on the assumption alone). */
static int bsearch_prefix(find_state *s, size_t lo, size_t hi, size_t *out, int *seen)
{
    *seen = 0;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        int e = 0;
        int rc = test_prefix(s, mid, &e);
        if (rc != GX_OK)
            return rc;
        if (e) {
            hi = mid;
            *seen = 1;
        } else {
            lo = mid;
        }
    }
    *out = hi;
    return GX_OK;
}

/* Phase 2 on F: minimise with the overflow test. *status FIND_OK (res
 * filled), FIND_RETRY (F + target does not overflow: F lacks lines). */
static int minimise(find_state *s, gx_evx_result *res, int *status)
{
    gx_evx *ev = s->ev;
    size_t n = s->nf;
    uint64_t cur[GX_EVX_MAX_WAYS + 1], g[GX_EVX_MAX_WAYS + 1];
    double ref[GX_EVX_MAX_WAYS + 1], gref[GX_EVX_MAX_WAYS + 1];
    memcpy(cur, s->f, n * sizeof *cur);
    memcpy(ref, s->fref, n * sizeof *ref);
    int rc, ovf = 0;
    uint32_t rounds = 6u * (uint32_t)(n + 1) + 16u;
    for (int round = 0; round < 2; round++) {
        size_t m = n;
        uint64_t kept[GX_EVX_MAX_WAYS + 1];
        double kref[GX_EVX_MAX_WAYS + 1];
        memcpy(kept, cur, m * sizeof *kept);
        memcpy(kref, ref, m * sizeof *kref);
        for (size_t i = 0; i < m;) {
            size_t k = 0;
            for (size_t j = 0; j < m; j++)
                if (j != i) {
                    g[k] = kept[j];
                    gref[k++] = kref[j];
                }
            if ((rc = gx_evx_overflows(ev, s->target, s->hit, g, gref, k, rounds, &ovf, NULL)) !=
                GX_OK)
                return rc;
            if (ovf) { /* not needed: drop it */
                memmove(kept + i, kept + i + 1, (m - i - 1) * sizeof *kept);
                memmove(kref + i, kref + i + 1, (m - i - 1) * sizeof *kref);
                m--;
            } else {
                i++;
            }
        }
        /* Verify: the minimal set must still overflow (a false "overflows"
         * would have dropped a needed line). */
        if ((rc = gx_evx_overflows(ev, s->target, s->hit, kept, kref, m, 3 * rounds, &ovf, NULL)) !=
            GX_OK)
            return rc;
        if (ovf && m > 0) {
            res->n = (uint32_t)m;
            memcpy(res->lines, kept, m * sizeof *kept);
            res->verified = 1;
            *status = FIND_OK;
            return GX_OK;
        }
        rounds *= 4; /* slow convergence (randomized policy): again, longer */
    }
    *status = FIND_RETRY;
    return GX_OK;
}

#define EVX_MAX_CONTRADICTIONS 6

static int find_once(find_state *s, gx_evx_result *res, int *status)
{
    int rc, e = 0, seen = 0;
    size_t lo = 0, k = s->n_pool < EVX_GALLOP_START ? s->n_pool : EVX_GALLOP_START;
    s->nf = 0;
    for (;;) { /* gallop: the smallest power-of-two prefix that evicts */
        if ((rc = test_prefix(s, k, &e)) != GX_OK)
            return rc;
        if (e)
            break;
        if (k == s->n_pool) {
            *status = FIND_NO_POOL;
            return GX_OK;
        }
        lo = k;
        k = 2 * k < s->n_pool ? 2 * k : s->n_pool;
    }
    size_t hi = 0;
    if ((rc = bsearch_prefix(s, lo, k, &hi, &seen)) != GX_OK)
        return rc;
    res->pool_used = (uint32_t)hi;
    /* his[i]: the prefix length before f[i] was taken from it (backtracking) */
    size_t his[GX_EVX_MAX_WAYS + 1];
    int contradictions = 0;
    for (;;) {
        if (s->nf >= GX_EVX_MAX_WAYS || over_budget(s)) {
            *status = FIND_RETRY;
            return GX_OK;
        }
        his[s->nf] = hi;
        s->f[s->nf] = s->pool[hi - 1];
        if ((rc = gx_evx_ref_latencies(s->ev, &s->f[s->nf], 1, &s->fref[s->nf])) != GX_OK)
            return rc;
        s->nf++;
        hi--;
        /* F alone: the exact (pigeonhole) test, on a small clean set */
        int alone = 0;
        uint32_t rounds = 6u * (uint32_t)(s->nf + 1) + 16u;
        if ((rc = gx_evx_overflows(s->ev, s->target, s->hit, s->f, s->fref, s->nf, rounds, &alone,
                                   NULL)) != GX_OK)
            return rc;
        if (alone) {
            int st = FIND_RETRY;
            if ((rc = minimise(s, res, &st)) != GX_OK)
                return rc;
            if (st == FIND_OK) {
                *status = st;
                return GX_OK;
            }
            if (hi == 0) {
                *status = FIND_RETRY;
                return GX_OK;
            }
        }
        for (;;) {
            size_t k2 = hi;
            if (hi > 0 && (rc = bsearch_prefix(s, 0, hi, &k2, &seen)) != GX_OK)
                return rc;
            if (hi > 0 && seen) {
                hi = k2;
                break;
            }
            /* Nothing below hi evicted: is F + prefix(hi) really evicting? */
            int ok = 0;
            if (hi > 0 && (rc = test_prefix(s, hi, &ok)) != GX_OK)
                return rc;
            if (ok)
                break;
            /* Contradiction: the last line taken was not needed (a wrong
             * answer put it there). Put it back and search again. */
            if (++contradictions > EVX_MAX_CONTRADICTIONS || s->nf == 0) {
                *status = FIND_RETRY;
                return GX_OK;
            }
            s->nf--;
            hi = his[s->nf];
            bump(s->ev); /* answers near the boundary are unreliable */
        }
    }
}

int gx_evx_find(gx_evx *ev, uint64_t target, const uint64_t *pool, size_t n_pool,
                gx_evx_result *res)
{
    memset(res, 0, sizeof *res);
    res->target = target;
    if (n_pool == 0)
        return gx_fail(ev->ctx->msg, GX_EINVAL, "evset: empty candidate pool");
    uint64_t t0 = ev->tests, r0 = ev->trials;
    find_state *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(ev->ctx->msg, GX_ENOMEM, "evset: out of memory");
    s->ev = ev;
    s->target = target;
    s->pool = pool;
    s->n_pool = n_pool;
    s->accesses0 = target_accesses(ev);
    int rc = gx_evx_hit_latency(ev, target, 5, &s->hit);
    res->target_hit = s->hit;
    int status = FIND_RETRY;
    for (int a = 0; rc == GX_OK && a < EVX_ATTEMPTS; a++) {
        rc = find_once(s, res, &status);
        if (rc != GX_OK || status == FIND_OK)
            break;
        res->over_budget = over_budget(s);
        if ((status == FIND_NO_POOL && a > 0) || res->over_budget)
            break;
        /* Escalate: more rounds per trial (randomized policies). */
        res->restarts++;
        ev->warm = ev->warm * 2 < EVX_MAX_WARM ? ev->warm * 2 : EVX_MAX_WARM;
        ev->passes = ev->passes + ev->passes / 2 < EVX_MAX_PASSES ? ev->passes + ev->passes / 2
                                                                  : EVX_MAX_PASSES;
    }
    res->tests = ev->tests - t0;
    res->trials = ev->trials - r0;
    res->accesses = target_accesses(ev) - s->accesses0;
    free(s);
    if (rc != GX_OK)
        return rc;
    res->no_pool = status == FIND_NO_POOL;
    if (status != FIND_OK && res->over_budget)
        return gx_fail(ev->ctx->msg, GX_EUNSURE,
                       "evset: no minimal eviction set for line 0x%llx within its budget of %llu "
                       "accesses",
                       (unsigned long long)target, (unsigned long long)ev->budget_accesses);
    if (status == FIND_NO_POOL)
        return gx_fail(ev->ctx->msg, GX_EUNSURE,
                       "evset: %zu candidate lines do not evict line 0x%llx", n_pool,
                       (unsigned long long)target);
    if (status != FIND_OK)
        return gx_fail(ev->ctx->msg, GX_EUNSURE,
                       "evset: no consistent minimal eviction set for line 0x%llx after %d "
                       "attempts",
                       (unsigned long long)target, EVX_ATTEMPTS);
    return GX_OK;
}

int gx_evx_verify(gx_evx *ev, uint64_t target, const uint64_t *lines, size_t n, int *ok,
                  double *target_hit)
{
    *ok = 0;
    if (n == 0 || n > GX_EVX_MAX_WAYS)
        return GX_OK;
    double ref[GX_EVX_MAX_WAYS], gref[GX_EVX_MAX_WAYS], hit = 0;
    uint64_t g[GX_EVX_MAX_WAYS];
    int rc = gx_evx_hit_latency(ev, target, 5, &hit);
    if (rc == GX_OK)
        rc = gx_evx_ref_latencies(ev, lines, n, ref);
    if (rc != GX_OK)
        return rc;
    if (target_hit)
        *target_hit = hit;
    uint32_t rounds = 6u * (uint32_t)(n + 1) + 16u;
    int ovf = 0;
    if ((rc = gx_evx_overflows(ev, target, hit, lines, ref, n, rounds, &ovf, NULL)) != GX_OK ||
        !ovf)
        return rc;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i) {
                g[k] = lines[j];
                gref[k++] = ref[j];
            }
        if ((rc = gx_evx_overflows(ev, target, hit, g, gref, k, rounds, &ovf, NULL)) != GX_OK ||
            ovf)
            return rc;
    }
    *ok = 1;
    return GX_OK;
}

int gx_evx_classify(const gx_evx *ev, double cycles, double hit)
{
    return classify(ev, cycles, hit);
}

int gx_evx_more_congruent(gx_evx *ev, const uint64_t *evset, size_t n_evset,
                          const uint64_t *cand, size_t n_cand, size_t want, uint64_t *out,
                          size_t *n_out)
{
    *n_out = 0;
    size_t batch = n_evset / 2;
    if (batch < 1)
        batch = 1;
    if (batch > 32)
        batch = 32;
    uint32_t passes = 2u * (uint32_t)n_evset + 4u;
    int ev1[32], ev2[32];
    uint64_t pos[32];
    for (size_t i = 0; i < n_cand && *n_out < want; i += batch) {
        size_t nb = n_cand - i < batch ? n_cand - i : batch;
        int rc = gx_evx_probe(ev, evset, n_evset, passes, cand + i, nb, ev1);
        if (rc != GX_OK)
            return rc;
        size_t np = 0;
        for (size_t j = 0; j < nb; j++)
            if (ev1[j] == 1)
                pos[np++] = cand[i + j];
        if (np == 0)
            continue;
        /* confirm (an outlier on the reload looks like an eviction) */
        if ((rc = gx_evx_probe(ev, evset, n_evset, passes, pos, np, ev2)) != GX_OK)
            return rc;
        for (size_t j = 0; j < np && *n_out < want; j++)
            if (ev2[j] == 1)
                out[(*n_out)++] = pos[j];
    }
    return GX_OK;
}
