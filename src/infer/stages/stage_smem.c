/* stage_smem.c - discovery stage `smem`: the shared memory's banks, bank
 * width, conflict cost, broadcast, latency and transfer width, from the
 * timed accesses of one warp (gx_target_smem_probe), plus the shared memory
 * a block may use (from the API, as information).
 *
 * Method (nanoBench's habits: warm up, repeat, median, differences):
 * - warm up: SMEM_WARM_CALLS untimed calls (the clock ramps, code loads).
 * - a measurement = the median of SMEM_REPEATS calls of SMEM_REPS timed
 *   accesses; the clock pair's overhead is divided by the reps.
 * - latency: one lane, one word; the per-access difference between 4R and
 *   R reps (cancels the clock pair's overhead).
 * - conflict cost: k lanes (k = 1..32) on words SMEM_SAME_BANK_STRIDE apart
 *   (the same bank under every candidate geometry: a k-way conflict); the
 *   slope of cost over k - 1 (least squares, one refit without outliers)
 *   is the cost of each transfer after the first; a point still off the
 *   line (1 cycle or 10%) after being measured again means the linear
 *   model does not fit: the cost stays out of the profile.
 * - transfers of any pattern = 1 + (cost - cost of one lane of the same
 *   width) / slope. Patterns: 32-bit accesses at every stride 4..256 B and
 *   powers of two to 2 KiB (the cost-versus-stride curve), broadcast (all
 *   lanes on one word, pairs on one word), 64- and 128-bit accesses at
 *   power-of-two strides, and seeded random lane addresses and lane masks.
 *   A pattern whose transfer count is not near an integer (the unsure band)
 *   is measured again with more reps and repeats; still unsure, it is left
 *   out.
 * - geometry: every candidate (banks 8..256, bank bytes 4/8/16, banks x
 *   bank bytes <= 2 KiB, transfer bytes 16 .. 512 (the whole warp), broadcast
 *   on/off) predicts each pattern's transfers through the bank model
 *   (smem.h, a hypothesis evaluator like hash.h for the L2 stages); the
 *   candidates that fit every sure pattern remain. Patterns the best
 *   candidate misses are measured again (an interruption may have hit
 *   their median) before anything is rejected. A field goes into the
 *   profile only when every remaining candidate agrees on it; otherwise it
 *   stays unknown.
 *
 * Notes: needs no other stage (it touches neither the arena nor L2). When
 * discovery records, the measured 32-bit cost-versus-stride curve and the
 * k-way sweep go into the data series "smem" (the report draws the curve). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/smem.h"
#include "gpuxray/stats.h"
#include "../infer.h"
#include "../infer_util.h"

#define SMEM_REPS 64u             /* timed accesses per call: the clock pair /64 */
#define SMEM_REPEATS 7            /* calls per measurement (median) */
#define SMEM_WARM_CALLS 16
#define SMEM_SAME_BANK_STRIDE 2048u /* a multiple of every candidate bank row */
#define SMEM_MIN_CONFLICT_CYCLES 0.2 /* below: conflicts cannot be told from noise */
#define SMEM_SURE_DIST 0.25       /* |transfers - nearest integer| within this (+2%) is sure */
#define SMEM_SURE_REL 0.02        /* relative part of the band: the slope's own error */
#define SMEM_RETRIES 2            /* more reps x4 and repeats each time */
#define SMEM_RANDOM_PATTERNS 12   /* per access width */
#define SMEM_RANDOM_SPAN 2048u    /* random lane addresses within this many bytes */
#define SMEM_REMEASURE_ROUNDS 2   /* re-measure the best candidate's misses */
#define SMEM_MIN_BANKS 8u
#define SMEM_MAX_BANKS 256u
#define SMEM_LINEAR_TOL 0.10      /* k-way costs within 10% of the line: the model fits */
#define SMEM_LAT_RETRIES 3
#define SMEM_LAT_ABS_TOL 0.3      /* cycles: two latency estimates agree within this ... */
#define SMEM_LAT_REL_TOL 0.01     /* ... or 1% */
#define SMEM_SWEEP_RETRIES 2      /* re-measure k-way points off the line */
#define SMEM_EXPLAIN_MAX 6        /* missed patterns shown on the progress stream */

typedef struct pattern {
    uint32_t off[GX_SMEM_LANES];
    uint32_t active, width;
    uint32_t stride;   /* 32-bit stride patterns: the stride; else 0 */
    double cost;       /* median cycles per access */
    double transfers;  /* measured */
    int sure;
} pattern;

typedef struct cand {
    gx_smem_cfg cfg;
    int misses;
} cand;

typedef struct smem_state {
    gx_infer *ctx;
    double base[GX_SMEM_MAX_WIDTH + 1]; /* cost of one lane, per width */
    double slope;                       /* cycles per extra transfer */
    double degree_cost[GX_SMEM_LANES + 1];
    pattern *pats;
    int n_pats, cap_pats;
    cand *cands;
    int n_cands;
    int n_unsure;
} smem_state;

static int probe_median(smem_state *st, const pattern *p, uint32_t reps, int repeats,
                        double *median)
{
    gx_smem_probe_req req;
    memcpy(req.lane_offsets, p->off, sizeof req.lane_offsets);
    req.active = p->active;
    req.width_bytes = p->width;
    req.reps = reps;
    req.sm = 0;
    double v[4 * SMEM_REPEATS];
    if (repeats > 4 * SMEM_REPEATS)
        repeats = 4 * SMEM_REPEATS;
    for (int i = 0; i < repeats; i++) {
        int rc = gx_target_smem_probe(st->ctx->t, &req, &v[i], st->ctx->msg);
        if (rc != GX_OK)
            return rc;
    }
    *median = gx_median(v, (size_t)repeats);
    return GX_OK;
}

static void single_lane(pattern *p, uint32_t width)
{
    memset(p, 0, sizeof *p);
    p->active = 1;
    p->width = width;
}

static double band(double t)
{
    return SMEM_SURE_DIST + SMEM_SURE_REL * fabs(t);
}

/* Measure p: cost, transfers; retry with more reps while unsure. */
static int measure(smem_state *st, pattern *p)
{
    uint32_t reps = SMEM_REPS;
    int repeats = SMEM_REPEATS;
    for (int attempt = 0; attempt <= SMEM_RETRIES; attempt++) {
        int rc = probe_median(st, p, reps, repeats, &p->cost);
        if (rc != GX_OK)
            return rc;
        p->transfers = 1 + (p->cost - st->base[p->width]) / st->slope;
        p->sure = fabs(p->transfers - round(p->transfers)) <= band(p->transfers);
        if (p->sure)
            return GX_OK;
        reps *= 4;
        repeats = repeats * 3 / 2;
    }
    st->n_unsure++;
    return GX_OK;
}

static pattern *new_pattern(smem_state *st)
{
    if (st->n_pats == st->cap_pats) {
        int cap = st->cap_pats ? 2 * st->cap_pats : 128;
        pattern *q = realloc(st->pats, (size_t)cap * sizeof *q);
        if (!q)
            return NULL;
        st->pats = q;
        st->cap_pats = cap;
    }
    pattern *p = &st->pats[st->n_pats++];
    memset(p, 0, sizeof *p);
    return p;
}

static int add_strided(smem_state *st, uint32_t width, uint32_t stride, uint32_t active)
{
    pattern *p = new_pattern(st);
    if (!p)
        return gx_fail(st->ctx->msg, GX_ENOMEM, "smem: out of memory");
    p->width = width;
    p->active = active;
    p->stride = width == 4 && active == UINT32_MAX ? stride : 0;
    for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
        p->off[i] = i * stride;
    return GX_OK;
}

/* The patterns: strides, broadcast, wide accesses, random lanes. */
static int build_patterns(smem_state *st)
{
    int rc = GX_OK;
    for (uint32_t s = 4; s <= 256 && rc == GX_OK; s += 4)
        rc = add_strided(st, 4, s, UINT32_MAX);
    for (uint32_t s = 512; s <= SMEM_SAME_BANK_STRIDE && rc == GX_OK; s *= 2)
        rc = add_strided(st, 4, s, UINT32_MAX);
    for (uint32_t w = 8; w <= 16 && rc == GX_OK; w *= 2)
        for (uint32_t s = w; s <= SMEM_SAME_BANK_STRIDE && rc == GX_OK; s *= 2)
            rc = add_strided(st, w, s, UINT32_MAX);
    if (rc == GX_OK)
        rc = add_strided(st, 4, 0, UINT32_MAX); /* every lane on one word */
    for (uint32_t w = 4; w <= 16 && rc == GX_OK; w *= 2) {
        pattern *p = new_pattern(st); /* pairs of lanes on one word / element */
        if (!p)
            return gx_fail(st->ctx->msg, GX_ENOMEM, "smem: out of memory");
        p->width = w;
        p->active = UINT32_MAX;
        for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
            p->off[i] = (i / 2) * w;
    }
    for (uint32_t w = 4; w <= 16 && rc == GX_OK; w *= 2)
        for (int k = 0; k < SMEM_RANDOM_PATTERNS; k++) {
            pattern *p = new_pattern(st);
            if (!p)
                return gx_fail(st->ctx->msg, GX_ENOMEM, "smem: out of memory");
            p->width = w;
            p->active = k < SMEM_RANDOM_PATTERNS / 2 ? UINT32_MAX
                                                     : (uint32_t)gx_rng_next(&st->ctx->rng) | 1u;
            for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
                p->off[i] = (uint32_t)gx_rng_below(&st->ctx->rng, SMEM_RANDOM_SPAN / w) * w;
        }
    return rc;
}

static int kway_cost(smem_state *st, uint32_t k, int repeats, double *cost)
{
    pattern p;
    single_lane(&p, 4);
    p.active = k == 32 ? UINT32_MAX : (1u << k) - 1u;
    for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
        p.off[i] = i * SMEM_SAME_BANK_STRIDE; /* 31 x 2 KiB < the 64 KiB window */
    return probe_median(st, &p, SMEM_REPS, repeats, cost);
}

/* Least-squares slope of d[k] over k - 1 through the points in use. */
static double fit_slope(const double *d, const int *use)
{
    double sxy = 0, sxx = 0;
    for (uint32_t k = 2; k <= GX_SMEM_LANES; k++)
        if (use[k]) {
            sxy += (k - 1.0) * d[k];
            sxx += (k - 1.0) * (k - 1.0);
        }
    return sxx > 0 ? sxy / sxx : 0;
}

static int off_line(double dk, uint32_t k, double slope)
{
    return fabs(dk - (k - 1.0) * slope) > fmax(1.0, SMEM_LINEAR_TOL * fabs(dk));
}

/* The k-way sweep: slope (cycles per extra transfer) and the per-degree
 * costs; points off the line are measured again (more repeats) before the
 * final fit. *n_off = points still off it, *max_dev = the largest
 * deviation from it in cycles. */
static int conflict_sweep(smem_state *st, int *n_off, double *max_dev)
{
    double d[GX_SMEM_LANES + 1];
    int use[GX_SMEM_LANES + 1], rc;
    double *c = st->degree_cost;
    for (uint32_t k = 1; k <= GX_SMEM_LANES; k++)
        if ((rc = kway_cost(st, k, SMEM_REPEATS, &c[k])) != GX_OK)
            return rc;
    double slope = 0;
    for (int round = 0; round <= SMEM_SWEEP_RETRIES; round++) {
        for (uint32_t k = 0; k <= GX_SMEM_LANES; k++) {
            d[k] = c[k] - c[1];
            use[k] = k >= 2;
        }
        slope = fit_slope(d, use);
        for (uint32_t k = 2; k <= GX_SMEM_LANES; k++)
            use[k] = !off_line(d[k], k, slope);
        slope = fit_slope(d, use);
        int again = 0;
        for (uint32_t k = 2; k <= GX_SMEM_LANES && round < SMEM_SWEEP_RETRIES; k++)
            if (off_line(d[k], k, slope)) {
                again = 1;
                if ((rc = kway_cost(st, k, 3 * SMEM_REPEATS, &c[k])) != GX_OK)
                    return rc;
            }
        if (!again)
            break;
    }
    *max_dev = 0;
    *n_off = 0;
    for (uint32_t k = 2; k <= GX_SMEM_LANES; k++) {
        double dev = fabs(d[k] - (k - 1.0) * slope);
        *max_dev = fmax(*max_dev, dev);
        *n_off += off_line(d[k], k, slope);
    }
    st->slope = slope;
    return GX_OK;
}

/* ---- candidates ---------------------------------------------------------- */

/* Transfers beyond 32 lanes x 16 B behave alike (a group holds at most the
 * warp): candidates stop at that size. */
#define SMEM_MAX_TRANSFER GX_SMEM_MAX_TRANSFER

static int build_cands(smem_state *st)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t banks = SMEM_MIN_BANKS; banks <= SMEM_MAX_BANKS; banks *= 2)
            for (uint32_t bb = 4; bb <= GX_SMEM_MAX_BANK_BYTES; bb *= 2) {
                const uint32_t row = banks * bb;
                if (row > SMEM_SAME_BANK_STRIDE)
                    continue;
                for (uint32_t tb = GX_SMEM_MAX_WIDTH; tb <= SMEM_MAX_TRANSFER; tb *= 2)
                    for (int bc = 0; bc <= 1; bc++) {
                        if (pass == 1) {
                            gx_smem_cfg *c = &st->cands[n].cfg;
                            gx_smem_cfg_clear(c);
                            c->present = 1;
                            c->banks = banks;
                            c->bank_bytes = bb;
                            c->transfer_bytes = tb;
                            c->broadcast = bc;
                            c->latency_cycles = 0;
                            c->conflict_cycles = 1;
                        }
                        n++;
                    }
            }
        if (pass == 0 && !(st->cands = calloc((size_t)n, sizeof *st->cands)))
            return gx_fail(st->ctx->msg, GX_ENOMEM, "smem: out of memory");
        if (pass == 0)
            n = 0;
    }
    st->n_cands = n;
    return GX_OK;
}

static uint32_t predict(const gx_smem_cfg *c, const pattern *p)
{
    gx_smem_cost k;
    if (gx_smem_warp_cost(c, p->off, p->active, p->width, &k, NULL) != GX_OK)
        return 0;
    return k.transfers;
}

static int fits(const gx_smem_cfg *c, const pattern *p)
{
    double pred = predict(c, p);
    return fabs(p->transfers - pred) <= band(pred);
}

/* Misses of every candidate over the sure patterns; returns the fewest. */
static int score(smem_state *st)
{
    int best = INT32_MAX;
    for (int i = 0; i < st->n_cands; i++) {
        cand *c = &st->cands[i];
        c->misses = 0;
        for (int j = 0; j < st->n_pats; j++)
            if (st->pats[j].sure && !fits(&c->cfg, &st->pats[j]))
                c->misses++;
        if (c->misses < best)
            best = c->misses;
    }
    return best;
}

/* Measure again the patterns that the best candidates miss. */
static int remeasure_misses(smem_state *st, int best)
{
    for (int j = 0; j < st->n_pats; j++) {
        int again = 0;
        for (int i = 0; i < st->n_cands && !again; i++)
            again = st->cands[i].misses == best && st->pats[j].sure &&
                    !fits(&st->cands[i].cfg, &st->pats[j]);
        if (again) {
            int rc = measure(st, &st->pats[j]);
            if (rc != GX_OK)
                return rc;
        }
    }
    return GX_OK;
}

/* ---- decision and report -------------------------------------------------- */

typedef struct agreed {
    uint32_t banks, bank_bytes, transfer_bytes;
    int broadcast;
    int n_fit;
} agreed;

static void agree(const smem_state *st, agreed *a)
{
    memset(a, 0, sizeof *a);
    a->broadcast = -2;
    for (int i = 0; i < st->n_cands; i++) {
        const gx_smem_cfg *c = &st->cands[i].cfg;
        if (st->cands[i].misses)
            continue;
        if (a->n_fit++ == 0) {
            a->banks = c->banks;
            a->bank_bytes = c->bank_bytes;
            a->transfer_bytes = c->transfer_bytes;
            a->broadcast = c->broadcast;
            continue;
        }
        if (a->banks != c->banks)
            a->banks = 0;
        if (a->bank_bytes != c->bank_bytes)
            a->bank_bytes = 0;
        if (a->transfer_bytes != c->transfer_bytes)
            a->transfer_bytes = 0;
        if (a->broadcast != c->broadcast)
            a->broadcast = -1;
    }
    if (!a->n_fit)
        a->broadcast = -1;
}

static void row_u(gx_infer *ctx, const char *key, uint32_t v, const char *method, double conf)
{
    char b[32];
    if (v)
        snprintf(b, sizeof b, "%u", v);
    else
        snprintf(b, sizeof b, "?");
    if (v)
        gx_profile_set_confidence(ctx->out, key, conf);
    infer_report_row(ctx, key, b, method, v ? conf : 0, v != 0);
}

/* Transfers of a conflict-free, contiguous access of each width ("1/2/4"). */
static void transfers_text(const gx_smem_cfg *c, char *b, size_t n)
{
    uint32_t t[3];
    for (int k = 0; k < 3; k++) {
        pattern p;
        single_lane(&p, 4u << k);
        p.active = UINT32_MAX;
        for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
            p.off[i] = i * p.width;
        t[k] = predict(c, &p);
    }
    snprintf(b, n, "32/64/128-bit contiguous: %u/%u/%u transfers", t[0], t[1], t[2]);
}

static void report_geometry(smem_state *st, const agreed *a, gx_smem_cfg *out)
{
    gx_infer *ctx = st->ctx;
    char m[128];
    int sure = 0;
    for (int j = 0; j < st->n_pats; j++)
        sure += st->pats[j].sure;
    double conf = a->n_fit == 0 ? 0 : st->n_unsure == 0 ? 0.99 : 0.95;
    if (a->n_fit > 1)
        conf = fmin(conf, 0.9);
    snprintf(m, sizeof m, "%d of %d candidates fit %d patterns (%d unsure)", a->n_fit,
             st->n_cands, sure, st->n_unsure);
    out->banks = a->banks;
    out->bank_bytes = a->bank_bytes;
    out->transfer_bytes = a->transfer_bytes;
    out->broadcast = a->broadcast;
    row_u(ctx, "smem.banks", a->banks, m, conf);
    row_u(ctx, "smem.bank_bytes", a->bank_bytes, m, conf);
    if (a->transfer_bytes) {
        gx_smem_cfg c = *out;
        c.present = 1;
        c.latency_cycles = 0;
        c.conflict_cycles = 1;
        transfers_text(&c, m, sizeof m);
    }
    row_u(ctx, "smem.transfer_bytes", a->transfer_bytes, m, conf);
    const pattern *bp = NULL;
    for (int j = 0; j < st->n_pats; j++)
        if (st->pats[j].width == 4 && st->pats[j].active == UINT32_MAX && st->pats[j].off[1] == 0)
            bp = &st->pats[j];
    snprintf(m, sizeof m, "32 lanes on one word: %.1f transfers", bp ? bp->transfers : NAN);
    if (a->broadcast >= 0)
        gx_profile_set_confidence(ctx->out, "smem.broadcast", conf);
    infer_report_row(ctx, "smem.broadcast", a->broadcast < 0 ? "?" : a->broadcast ? "yes" : "no",
                     m, a->broadcast < 0 ? 0 : conf, a->broadcast >= 0);
}

static void report_costs(smem_state *st, double latency, int n_off, double max_dev,
                         gx_smem_cfg *out)
{
    gx_infer *ctx = st->ctx;
    char v[32], m[128];
    out->latency_cycles = round(latency * 10) / 10; /* 0.1 cycle: far below any tolerance */
    snprintf(v, sizeof v, isfinite(latency) ? "%.1f" : "?", latency);
    snprintf(m, sizeof m, "one lane; differences of %u, %u and %u reps (medians)", SMEM_REPS,
             2 * SMEM_REPS, 4 * SMEM_REPS);
    double lconf = isfinite(latency) ? 0.99 : 0;
    if (isfinite(latency))
        gx_profile_set_confidence(ctx->out, "smem.latency_cycles", lconf);
    infer_report_row(ctx, "smem.latency_cycles", v, m, lconf, isfinite(latency));
    const double *d = st->degree_cost;
    snprintf(m, sizeof m,
             "k-way slope; 2/4/8/16/32-way +%.1f/+%.1f/+%.1f/+%.1f/+%.1f (%d off the line, max %.1f)",
             d[2] - d[1], d[4] - d[1], d[8] - d[1], d[16] - d[1], d[32] - d[1], n_off, max_dev);
    int ok = st->slope >= SMEM_MIN_CONFLICT_CYCLES;
    double conf = !ok ? 0 : n_off == 0 ? 0.99 : 0.8; /* not linear: the model does not fit */
    snprintf(v, sizeof v, ok ? "%.2f" : "?", st->slope);
    out->conflict_cycles = conf >= 0.9 ? round(st->slope * 100) / 100 : NAN;
    if (conf >= 0.9)
        gx_profile_set_confidence(ctx->out, "smem.conflict_cycles", conf);
    infer_report_row(ctx, "smem.conflict_cycles", v, m, conf, conf >= 0.9);
}

static void report_api(gx_infer *ctx, gx_smem_cfg *out)
{
    char v[32];
    out->block_bytes = ctx->info->smem_block_bytes;
    out->sm_bytes = ctx->info->smem_sm_bytes;
    snprintf(v, sizeof v, "%llu", (unsigned long long)out->block_bytes);
    infer_report_row(ctx, "smem.block_bytes", out->block_bytes ? v : "?",
                     "from the API (opt-in maximum per block)", NAN, out->block_bytes != 0);
    snprintf(v, sizeof v, "%llu", (unsigned long long)out->sm_bytes);
    infer_report_row(ctx, "smem.sm_bytes", out->sm_bytes ? v : "?", "from the API (per SM)", NAN,
                     out->sm_bytes != 0);
}

/* ---- raw data for the report (discover --data / --report: smem.json) ---- */

/* Series "smem": points = the 32-bit cost-versus-stride curve (all 32
 * lanes, lane i at i x stride; cycles per access at SMEM_REPS reps, the
 * measured transfers), kway = the k-way sweep, and the fitted costs. */
static void record_data(smem_state *st, double latency)
{
    gx_infer *ctx = st->ctx;
    if (!infer_recording(ctx))
        return;
    for (int j = 0; j < st->n_pats; j++) {
        const pattern *p = &st->pats[j];
        if (!p->stride)
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "stride_bytes", json_integer(p->stride));
        json_object_set_new(o, "cycles", infer_json_num(p->cost));
        json_object_set_new(o, "transfers", infer_json_num(p->transfers));
        infer_data_append(ctx, "smem", "points", o);
    }
    for (uint32_t k = 1; k <= GX_SMEM_LANES; k++) {
        json_t *o = json_object();
        json_object_set_new(o, "lanes", json_integer(k));
        json_object_set_new(o, "cycles", infer_json_num(st->degree_cost[k]));
        infer_data_append(ctx, "smem", "kway", o);
    }
    infer_data_set(ctx, "smem", "latency_cycles", infer_json_num(latency));
    infer_data_set(ctx, "smem", "conflict_cycles", infer_json_num(st->slope));
    infer_data_set(ctx, "smem", "reps", json_integer(SMEM_REPS));
}

/* ---- the stage ------------------------------------------------------------ */

/* Latency by differences of R, 2R and 4R reps (the clock pair's overhead
 * cancels): two estimates that must agree, else measured again. */
static int latency(smem_state *st, double *lat)
{
    pattern p;
    single_lane(&p, 4);
    *lat = NAN;
    for (int attempt = 0; attempt <= SMEM_LAT_RETRIES; attempt++) {
        double m1 = 0, m2 = 0, m4 = 0;
        int reps = SMEM_REPEATS + 2 * attempt * SMEM_REPEATS, rc;
        if ((rc = probe_median(st, &p, SMEM_REPS, reps, &m1)) != GX_OK ||
            (rc = probe_median(st, &p, 2 * SMEM_REPS, reps, &m2)) != GX_OK ||
            (rc = probe_median(st, &p, 4 * SMEM_REPS, reps, &m4)) != GX_OK)
            return rc;
        double a = (4.0 * m4 - m1) / 3.0, b = 2.0 * m4 - m2; /* (4R m4 - R m1) / 3R, ... */
        if (fabs(a - b) <= fmax(SMEM_LAT_ABS_TOL, SMEM_LAT_REL_TOL * b)) {
            *lat = b;
            return GX_OK;
        }
    }
    return GX_OK;
}

static int warm_and_base(smem_state *st, double *lat)
{
    pattern p;
    single_lane(&p, 4);
    double sink = 0;
    for (int i = 0; i < SMEM_WARM_CALLS; i++) {
        int rc = probe_median(st, &p, SMEM_REPS, 1, &sink);
        if (rc != GX_OK)
            return rc;
    }
    for (uint32_t w = 4; w <= GX_SMEM_MAX_WIDTH; w *= 2) {
        single_lane(&p, w);
        int rc = probe_median(st, &p, SMEM_REPS, SMEM_REPEATS, &st->base[w]);
        if (rc != GX_OK)
            return rc;
    }
    return latency(st, lat);
}

/* No candidate fits: say on the progress stream which patterns the first
 * best candidate misses (measured vs predicted transfers), for a person. */
static void explain_misses(smem_state *st, int best)
{
    for (int i = 0; i < st->n_cands; i++) {
        const gx_smem_cfg *c = &st->cands[i].cfg;
        if (st->cands[i].misses != best)
            continue;
        infer_progress(st->ctx, "smem: closest: %u banks x %u B, %u-byte groups, broadcast %d: "
                       "%d misses", c->banks, c->bank_bytes, c->transfer_bytes, c->broadcast, best);
        for (int j = 0, shown = 0; j < st->n_pats && shown < SMEM_EXPLAIN_MAX; j++) {
            const pattern *p = &st->pats[j];
            if (!p->sure || fits(c, p))
                continue;
            shown++;
            infer_progress(st->ctx, "smem:   %u-bit, lanes 0x%08x at %u %u %u %u ...: %.2f "
                           "transfers measured, %u predicted", 8 * p->width, p->active,
                           p->off[0], p->off[1], p->off[2], p->off[3], p->transfers, predict(c, p));
        }
        return;
    }
}

static int fit_geometry(smem_state *st)
{
    int rc;
    for (int j = 0; j < st->n_pats; j++)
        if ((rc = measure(st, &st->pats[j])) != GX_OK)
            return rc;
    if ((rc = build_cands(st)) != GX_OK)
        return rc;
    int best = score(st);
    for (int round = 0; round < SMEM_REMEASURE_ROUNDS && best > 0; round++) {
        if ((rc = remeasure_misses(st, best)) != GX_OK)
            return rc;
        best = score(st);
    }
    if (best > 0)
        explain_misses(st, best);
    return GX_OK;
}

static void free_state(smem_state *st)
{
    free(st->pats);
    free(st->cands);
}

int gx_stage_smem(gx_infer *ctx)
{
    smem_state st;
    memset(&st, 0, sizeof st);
    st.ctx = ctx;
    gx_smem_cfg out;
    gx_smem_cfg_clear(&out);
    out.present = 1;
    double latency = NAN, max_dev = 0;
    int n_off = 0;
    int rc = warm_and_base(&st, &latency);
    if (rc == GX_OK)
        rc = conflict_sweep(&st, &n_off, &max_dev);
    if (rc != GX_OK)
        return rc;
    report_costs(&st, latency, n_off, max_dev, &out);
    report_api(ctx, &out);
    agreed a;
    memset(&a, 0, sizeof a);
    a.broadcast = -1;
    if (st.slope >= SMEM_MIN_CONFLICT_CYCLES) {
        if ((rc = build_patterns(&st)) == GX_OK)
            rc = fit_geometry(&st);
        if (rc != GX_OK) {
            free_state(&st);
            return rc;
        }
        agree(&st, &a);
    }
    report_geometry(&st, &a, &out);
    record_data(&st, latency);
    rc = gx_smem_cfg_to_profile(ctx->out, &out, ctx->msg);
    infer_progress(ctx, "smem: %u banks x %u B, %.1f + %.2f cycles per extra transfer", a.banks,
                   a.bank_bytes, latency, st.slope);
    int complete = a.banks && a.bank_bytes && a.transfer_bytes && a.broadcast >= 0 &&
                   isfinite(out.conflict_cycles) && isfinite(out.latency_cycles);
    free_state(&st);
    if (rc == GX_OK && !complete)
        rc = gx_fail(ctx->msg, GX_EUNSURE, "smem: %s",
                     a.n_fit == 0 && st.slope >= SMEM_MIN_CONFLICT_CYCLES
                         ? "no bank geometry fits the measured transfers"
                         : "the bank geometry is not established");
    return rc;
}
