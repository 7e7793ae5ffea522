/* levels_stage.c - discovery stage 2: the latency levels one SM sees as its
 * footprint grows (l2.levels_from_one_sm), the DRAM latency, the topology,
 * and the hit / miss latencies and thresholds later stages use.
 *
 * Method (latency classes + residency, robust to the replacement policy):
 * 1. Probe pairs (infer_probe_pairs): time a line, then reload it twice; the
 *    difference ("delta") is the extra cost of wherever the line was, with
 *    the (SM, slice) skew cancelled. Cold (never-touched) lines give the
 *    DRAM delta and the pair noise; reloads of lines from several SMs give
 *    the skew spread and the fastest (SM, slice) hit latency, the base.
 * 2. Sweep nested footprints (x2 from 32 KiB): the first F / 256 blocks of
 *    a random permutation of the arena's 256 B blocks, one fixed random 32 B
 *    slot per block (one line and one sector per block whatever the line
 *    size; spread over every page, so hash bits above the page average out;
 *    nested, so lines a policy never evicts are always chain lines). Chase
 *    once (warm round + short timed part: the curve shown with --progress),
 *    then probe pairs on random chain lines: the fraction resident in the
 *    first level, and in any L2 level. Once F exceeds a level, the level is
 *    full of chain lines, so its resident fraction is C / F whatever the
 *    policy (LRU keeps the newest lines, MRU the oldest). Stop when less
 *    than a fifth is resident anywhere.
 * 3. Topology: at F = 1.4 x the first level's capacity every line still fits
 *    in a near + far L2, so the lines missing from the first level show the
 *    far level's delta; on a uniform L2 they show the DRAM delta.
 * 4. Capacity of a level (in lines): a rough maximum-likelihood estimate
 *    from the sweep, then a dedicated footprint ~30 % resident probed
 *    LV_CAP_PROBES times (re-chased between batches so the probes' own fills
 *    do not drain the level), then the likelihood of a common capacity over
 *    the footprints expected 12-50 % resident. Far vs DRAM deltas, when they
 *    are close, are split by a two-Gaussian mixture with known centres. The
 *    line size (infer_measure_line, stage_line.c) turns lines into bytes.
 *
 * Notes / assumptions:
 * - At most two L2 levels (near, far). Latencies are reported as the base:
 *   the fastest (SM, slice) pair, as profiles define them; the far and DRAM
 *   latencies are the base plus their skew-free deltas.
 * - Results in ctx->levels (results.h): hit_latency, miss_latency and
 *   hit_miss_threshold are in seq units (timer overhead and SM 0's typical
 *   skew included); the deltas
 *   (pair_noise, miss_delta, dram_delta) are skew-free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levels_internal.h"

static void write_profile(gx_infer *ctx, double dram, double conf_lat, double conf_lv)
{
    gx_profile *p = ctx->out;
    p->l2.present = 1;
    if (conf_lv >= 0.9) {
        p->l2.n_levels = ctx->levels.n;
        for (int i = 0; i < ctx->levels.n; i++)
            p->l2.levels[i] = ctx->levels.level[i];
        gx_profile_set_confidence(p, "l2.levels_from_one_sm", conf_lv);
    }
    if (conf_lat < 0.9)
        return;
    p->l2.topology = ctx->levels.topology;
    p->memory.dram_latency_cycles = dram;
    if (ctx->levels.topology == GX_TOPO_UNIFORM) {
        p->l2.hit_cycles = ctx->levels.level[0].latency_cycles;
    } else {
        p->l2.near_hit_cycles = ctx->levels.level[0].latency_cycles;
        p->l2.far_hit_cycles = ctx->levels.level[1].latency_cycles;
        if (ctx->levels.far_stream_extra > 0) {
            p->l2.far_stream_extra_cycles = round(ctx->levels.far_stream_extra);
            gx_profile_set_confidence(p, "l2.latency_cycles.far_stream_extra", conf_lat);
        }
    }
    int uniform = ctx->levels.topology == GX_TOPO_UNIFORM;
    const char *keys[] = {"l2.topology", "memory.dram_latency_cycles",
                          uniform ? "l2.latency_cycles.hit" : "l2.latency_cycles.near_hit",
                          uniform ? NULL : "l2.latency_cycles.far_hit"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i])
            gx_profile_set_confidence(p, keys[i], conf_lat);
}

static void report(gx_infer *ctx, const lv_skew *sk, double dram, double conf,
                   double conf_lv, size_t points, const char *why, const double *rel_sd,
                   const char *low)
{
    char v[128], m[200], b[32];
    int in = conf >= 0.9;
    v[0] = 0;
    for (int i = 0; i < ctx->levels.n; i++) {
        size_t len = strlen(v);
        snprintf(v + len, sizeof v - len, "%s%s @ %.0f", i ? ", " : "",
                 infer_fmt_bytes(ctx->levels.level[i].capacity_bytes, b, sizeof b),
                 ctx->levels.level[i].latency_cycles);
    }
    snprintf(m, sizeof m, "residency of %zu nested chains (+-%.0f%%), latency classes%s",
             points, 100 * rel_sd[ctx->levels.n - 1], low);
    infer_report_row(ctx, "l2.levels_from_one_sm", v, m, conf_lv, conf_lv >= 0.9);
    infer_report_row(ctx, "l2.topology", gx_topology_name(ctx->levels.topology), why, conf, in);
    if (ctx->levels.topology == GX_TOPO_UNIFORM) {
        snprintf(v, sizeof v, "%.0f", ctx->levels.level[0].latency_cycles);
        infer_report_row(ctx, "l2.latency_cycles.hit", v,
                         "1st pct of reload medians over SMs x lines", conf, in);
    } else {
        snprintf(v, sizeof v, "%.0f", ctx->levels.level[0].latency_cycles);
        infer_report_row(ctx, "l2.latency_cycles.near_hit", v,
                         "1st pct of reload medians over SMs x lines", conf, in);
        snprintf(v, sizeof v, "%.0f", ctx->levels.level[1].latency_cycles);
        infer_report_row(ctx, "l2.latency_cycles.far_hit", v,
                         "near hit + skew-free delta of far lines", conf, in);
        if (isfinite(ctx->levels.far_stream_extra)) {
            snprintf(v, sizeof v, "%.0f", ctx->levels.far_stream_extra);
            infer_report_row(ctx, "l2.latency_cycles.far_stream_extra", v,
                             "chase over every line of a region between the levels (far hits "
                             "back to back) minus near plateau and isolated far delta",
                             ctx->levels.far_stream_extra > 0 ? conf : NAN,
                             in && ctx->levels.far_stream_extra > 0);
        }
    }
    snprintf(v, sizeof v, "%.0f", dram);
    snprintf(m, sizeof m, "hit + skew-free delta of %d cold lines (pair sigma %.1f)", LV_COLD,
             ctx->levels.pair_noise);
    infer_report_row(ctx, "memory.dram_latency_cycles", v, m, conf, in);
    snprintf(v, sizeof v, "%.0f", ctx->levels.chase_hit_latency);
    infer_report_row(ctx, "first plateau seen by a chase", v,
                     "chase mean per access from SM 0 (base + SM 0's mean skew)", NAN, 0);
    snprintf(v, sizeof v, "%.0f", sk->spread);
    infer_report_row(ctx, "hit skew over (SM, slice)", v, "95th - 5th pct of reload medians",
                     NAN, 0);
}

static double interp_half(const lv_state *s, int level)
{
    /* first footprint where the resident fraction falls below 1/2: ~2 C */
    for (size_t i = 1; i < s->n; i++) {
        double r0 = lv_resident(s, &s->p[i - 1], level), r1 = lv_resident(s, &s->p[i], level);
        if (r0 >= 0.5 && r1 < 0.5) {
            double t = (r0 - 0.5) / (r0 - r1);
            return 0.5 * exp(log(s->p[i - 1].f) + t * (log(s->p[i].f) - log(s->p[i - 1].f)));
        }
    }
    return NAN;
}

static int count_below(const lv_point *p, double cut)
{
    int c = 0;
    for (int i = 0; i < p->n_nf; i++)
        c += p->nf[i] < cut;
    return c;
}

/* Report data (series "curve"): the sweep's points, the chase curve's
 * plateaus, the levels, the cold lines' DRAM deltas. Copies only. */
static void record_curve(lv_state *s, const cp_segment *pl, size_t np, const double *caps,
                         uint32_t line)
{
    gx_infer *ctx = s->ctx;
    if (!infer_recording(ctx))
        return;
    infer_data_set(ctx, "curve", "method",
                   json_string("one thread on SM 0 chases a random cyclic chain over one random "
                               "32 B slot per 256 B block of nested footprints (x2 from 32 KiB); "
                               "mean cycles per access; probe pairs on random chain lines count "
                               "those still in the first level"));
    infer_data_set(ctx, "curve", "sm", json_integer(0));
    infer_data_set(ctx, "curve", "timed_steps", json_integer(LV_TIMED_STEPS));
    infer_data_set(ctx, "curve", "block_bytes", json_integer(LV_BLOCK_BYTES));
    for (size_t i = 0; i < s->n; i++) {
        const lv_point *p = &s->p[i];
        infer_data_append(ctx, "curve", "points",
                          json_pack("{s:f,s:o,s:i,s:o}", "footprint_bytes", p->f, "cycles",
                                    infer_json_num(p->y), "probes", p->k, "resident_first",
                                    infer_json_num(p->k ? (double)p->n1 / p->k : NAN)));
    }
    for (size_t i = 0; i < np; i++)
        infer_data_append(ctx, "curve", "plateaus",
                          json_pack("{s:I,s:I,s:o,s:o}", "first", (json_int_t)pl[i].first,
                                    "last", (json_int_t)pl[i].last, "cycles",
                                    infer_json_num(pl[i].level), "spread",
                                    infer_json_num(pl[i].spread)));
    for (int l = 0; l < (s->near_far ? 2 : 1); l++)
        if (isfinite(caps[l]) && line)
            infer_data_append(ctx, "curve", "levels",
                              json_pack("{s:f}", "capacity_bytes",
                                        caps[l] / LV_BLOCK_BYTES * line));
    for (int i = 0; i < LV_COLD; i++)
        infer_data_append(ctx, "curve", "dram_deltas", infer_json_num(s->cold[i]));
}

/* Cold lines until the first-level threshold clears the noise (a fresh
 * measurement after an unsure one, at most LV_COLD_ATTEMPTS). */
static int levels_threshold(lv_state *s, const lv_skew *sk)
{
    gx_infer *ctx = s->ctx;
    int rc;
    /* Cold lines: first-level threshold = half the DRAM delta, at most a
     * quarter of the hit latency (a far level costs at least half a hit
     * more). The hit side of a delta is as tight as the reload jitter;
     * s->noise is the spread of DRAM deltas, which on real HBM is wide (row
     * hits and misses, refresh: ~75 cycles on an H200) and must not veto a
     * threshold that sits far below the DRAM cluster. Require the threshold
     * to clear both the hit jitter and the DRAM cluster's lower tail. An
     * unsure answer is measured again on fresh lines (an H200 just out of
     * idle once showed a spread of 130 cycles on its first 40 cold lines). */
    for (int attempt = 0;; attempt++) {
        if (attempt > 0 && (rc = lv_measure_cold(s)) != GX_OK)
            return rc;
        s->thr1 = fmin(0.5 * s->dram_delta, 0.25 * sk->base_hit);
        double hit_noise =
            fmin(1.5 * fmax(ctx->timer.have ? ctx->timer.noise : 2.0, 1.0), s->noise);
        /* the cluster's lower tail: from the spread when it is unimodal, or
         * measured (HBM's row hits and misses make it wide and skewed) */
        int tail_clear = s->dram_delta - s->thr1 >= 2.5 * s->noise ||
                         s->dram_low - s->thr1 >= fmax(3 * hit_noise, 0.25 * s->dram_delta);
        if (s->thr1 >= 3 * hit_noise && tail_clear) {
            infer_progress(ctx, "levels: DRAM delta %.0f (spread %.1f), first-level threshold %.0f",
                           s->dram_delta, s->noise, s->thr1);
            break;
        }
        infer_progress(ctx, "levels: DRAM delta %.0f (10th pct %.0f) too close to the pair noise "
                            "%.1f%s",
                       s->dram_delta, s->dram_low, s->noise, attempt + 1 < LV_COLD_ATTEMPTS ? ", again" : "");
        if (attempt + 1 >= LV_COLD_ATTEMPTS)
            return gx_fail(ctx->msg, GX_EUNSURE,
                           "levels: DRAM delta %.0f too close to the pair noise %.1f (%d attempts)",
                           s->dram_delta, s->noise, LV_COLD_ATTEMPTS);
    }
    return GX_OK;
}

/* The sweep: nested footprints x2 from LV_START_BYTES until less than a
 * fifth is resident anywhere (or the work area or LV_MAX_POINTS ends). */
static int levels_sweep(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    uint64_t work = ctx->arena.work_bytes;
    int rc;
    for (double f = LV_START_BYTES; f <= (double)work && s->n < LV_MAX_POINTS; f *= 2) {
        lv_point *pt = &s->p[s->n];
        memset(pt, 0, sizeof *pt);
        pt->f = f;
        size_t n = 0;
        if ((rc = lv_chase_footprint(s, (uint64_t)f, &pt->y, &n)) != GX_OK)
            return rc;
        if ((rc = lv_probe_point(s, n, LV_SWEEP_PROBES, pt)) != GX_OK)
            return rc;
        s->n++;
        double r1 = lv_resident(s, pt, 0);
        double rall = r1 + (double)count_below(pt, s->dram_delta - fmax(4 * s->noise,
                                                                       0.1 * s->dram_delta)) /
                               (pt->k ? pt->k : 1);
        infer_progress(ctx, "levels: %8.0f KiB chase %.1f, resident first %.2f, any %.2f",
                       f / 1024, pt->y, r1, rall);
        if (s->n >= 3 && r1 < LV_R_LO && rall < 0.2)
            break;
    }
    return GX_OK;
}

/* A near-far L2: the sweep extended until the far level is also mostly
 * gone. */
static int levels_extend_far(lv_state *s)
{
    uint64_t work = s->ctx->arena.work_bytes;
    int rc;
    while (s->n < LV_MAX_POINTS && lv_resident(s, &s->p[s->n - 1], 1) > 0.2 &&
           s->p[s->n - 1].f * 2 <= (double)work) {
        lv_point *pt = &s->p[s->n];
        memset(pt, 0, sizeof *pt);
        pt->f = s->p[s->n - 1].f * 2;
        size_t n = 0;
        if ((rc = lv_chase_footprint(s, (uint64_t)pt->f, &pt->y, &n)) != GX_OK)
            return rc;
        if ((rc = lv_probe_point(s, n, LV_SWEEP_PROBES, pt)) != GX_OK)
            return rc;
        s->n++;
    }
    return GX_OK;
}

/* Confidence: latencies and topology need a clear far test; the levels
 * list needs well-measured capacities and the line size too (low: why not). */
static void levels_confidence(const gx_infer *ctx, int nl, int overlap, int by_curve,
                              const double *sds, double lconf, double *conf_lat,
                              double *conf_lv, char *low, size_t low_len)
{
    *conf_lat = 0.99;
    *conf_lv = 0.99;
    if (overlap && !by_curve) {
        *conf_lat = 0.6;
        snprintf(low, low_len, "; far and DRAM deltas too close");
    } else if (by_curve) {
        *conf_lat = 0.9;
        snprintf(low, low_len, "; far level from the chase curve (far/DRAM overlap per line)");
    }
    for (int l = 0; l < nl; l++)
        if (!ctx->levels.level[l].capacity_bytes || !(sds[l] < 0.05)) {
            *conf_lv = 0.5;
            snprintf(low, low_len, "; level %d capacity +-%.0f%%", l + 1, 100 * sds[l]);
        }
    if (lconf < 0.9) {
        *conf_lv = fmin(*conf_lv, 0.5);
        snprintf(low, low_len, "; line size unsure");
    }
    *conf_lv = fmin(*conf_lv, *conf_lat);
}

static int run_levels(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    lv_skew sk;
    int rc = lv_measure_cold(s);
    if (rc == GX_OK)
        rc = lv_make_blocks(s);
    if (rc != GX_OK)
        return rc;
    /* skew on lines every chain contains (the first blocks) */
    if ((rc = lv_measure_skew(ctx, s->blocks, LV_START_BYTES / LV_BLOCK_BYTES, &sk)) != GX_OK)
        return rc;
    if ((rc = levels_threshold(s, &sk)) != GX_OK)
        return rc;
    if ((rc = levels_sweep(s)) != GX_OK)
        return rc;
    double c1_rough = interp_half(s, 0);
    if (!isfinite(c1_rough))
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "levels: the first level never fell below half resident (up to %.0f KiB)",
                       s->n ? s->p[s->n - 1].f / 1024 : 0.0);
    char why[160];
    if ((rc = lv_far_test(s, c1_rough, why, sizeof why)) != GX_OK)
        return rc;
    /* the far level's points: re-probe the sweep points with the mixture */
    int nl = s->near_far ? 2 : 1;
    double caps[2] = {NAN, NAN}, sds[2] = {NAN, NAN};
    if (s->near_far && (rc = levels_extend_far(s)) != GX_OK)
        return rc;
    int overlap = s->near_far && s->dram_delta - s->far_delta <
                                     LV_OVERLAP_SIGMAS * hypot(s->noise, s->far_noise);
    int by_curve = 0;
    for (int l = 0; l < nl; l++)
        if ((rc = lv_level_capacity(s, l, &caps[l], &sds[l])) != GX_OK)
            return rc;
    if (overlap && isfinite(caps[0])) {
        double c2 = NAN, sd2 = NAN;
        if ((rc = lv_curve_capacity2(s, caps[0] / LV_BLOCK_BYTES, &c2, &sd2)) != GX_OK)
            return rc;
        if (isfinite(c2)) {
            caps[1] = c2 * LV_BLOCK_BYTES;
            sds[1] = sd2;
            by_curve = 1;
        }
    }
    /* chase curve: the first plateau's level (for the report and later stages) */
    double ys[LV_MAX_POINTS];
    for (size_t i = 0; i < s->n; i++)
        ys[i] = s->p[i].y;
    cp_segment pl[4];
    size_t np = cp_plateaus(ys, s->n, fmax(0.025 * ys[0], 3.0), 2, pl, 4);
    double chase1 = np > 0 && pl[0].first == 0 ? pl[0].level : ys[0];
    /* pair_noise: the spread of a hit-side delta (reload jitter), used for
     * unsure bands around hit/miss thresholds; dram_noise: the spread of
     * DRAM deltas (wide on real HBM), used for bounds on the miss side */
    ctx->levels.dram_noise = s->noise;
    const gx_timer_result *tm = &ctx->timer;
    ctx->levels.pair_noise = fmin(s->noise, 1.5 * fmax(tm->have ? tm->noise : 2.0, 1.0));
    ctx->levels.dram_delta = s->dram_delta;
    ctx->levels.miss_delta = s->near_far ? s->far_delta : s->dram_delta;
    /* capacities are in lines (one line per 256 B block): the line size
     * turns them into bytes */
    uint32_t line = 0;
    double lconf = 0;
    char lhow[160] = "";
    if (isfinite(caps[0])) {
        rc = infer_measure_line(ctx, s->blocks, s->nblocks, caps[0] / LV_BLOCK_BYTES, &line,
                                &lconf, lhow, sizeof lhow);
        if (rc != GX_OK && rc != GX_EUNSURE)
            return rc;
        if (rc == GX_EUNSURE) {
            snprintf(lhow, sizeof lhow, "%.150s", ctx->msg->text);
            line = 0;
        }
        rc = GX_OK;
    }
    ctx->levels.line_measured = line; /* the line stage publishes it */
    ctx->levels.line_conf = lconf;
    /* A chase over the far plateau is a stream of far hits: each costs the
     * chase's near plateau + the far delta, unless back-to-back far hits
     * (line swaps) cost more, as on an H200 (+28-34 cycles over the probe
     * pairs' far delta in six runs of one call). */
    ctx->levels.far_stream_extra = NAN;
    if (s->near_far && line) {
        double ystream = NAN, fdelta = NAN, ynear = NAN, se = NAN;
        if ((rc = lv_far_stream_chase(s, caps[0] / LV_BLOCK_BYTES, caps[1] / LV_BLOCK_BYTES, line,
                                      &ystream, &fdelta, &ynear, &se)) != GX_OK)
            return rc;
        /* the near steps as the far delta's own chases saw them, else the
         * curve's first plateau */
        double near = isfinite(ynear) ? ynear : chase1;
        double extra = ystream - near - fdelta;
        /* the far delta itself: these lines are all far hits, where the
         * topology test's at 1.4x a rough first level can mix in DRAM
         * misses (an H200: 186-246 over eight runs, against 186-200 here) */
        if (isfinite(fdelta)) {
            s->far_delta = fdelta;
            ctx->levels.miss_delta = fdelta;
        }
        double floor_c = fmax(LV_EXTRA_MIN, isfinite(se) ? LV_EXTRA_SIGMAS * se : 0.0);
        if (isfinite(extra))
            ctx->levels.far_stream_extra = extra > floor_c ? extra : 0.0;
        infer_progress(ctx, "levels: far hits back to back: chase %.1f over the far plateau vs "
                       "%.1f near + %.1f far delta: extra %.1f (written above %.1f)",
                       ystream, near, fdelta, extra, floor_c);
    }
    snprintf(ctx->levels.line_how, sizeof ctx->levels.line_how, "%s", lhow);
    record_curve(s, pl, np, caps, line);
    ctx->levels.n = nl;
    for (int l = 0; l < nl; l++) {
        double bytes = caps[l] / LV_BLOCK_BYTES * line;
        ctx->levels.level[l].capacity_bytes =
            isfinite(bytes) && line ? (uint64_t)llround(bytes / 1024.0) * 1024u : 0;
        ctx->levels.level[l].latency_cycles =
            round(sk.base_hit + (l == 0 ? 0 : s->far_delta));
    }
    ctx->levels.topology = nl > 1 ? GX_TOPO_NEAR_FAR : GX_TOPO_UNIFORM;
    ctx->levels.l2_capacity = ctx->levels.level[nl - 1].capacity_bytes;
    ctx->levels.hit_latency = sk.sm0_hit_seq;
    ctx->levels.miss_latency = sk.sm0_hit_seq + ctx->levels.miss_delta;
    ctx->levels.chase_hit_latency = chase1;
    ctx->levels.hit_miss_threshold = 0.5 * (ctx->levels.hit_latency + ctx->levels.miss_latency);
    ctx->levels.have = 1;
    double dram = round(sk.base_hit + s->dram_delta);

    double conf_lat, conf_lv;
    char low[96] = "";
    levels_confidence(ctx, nl, overlap, by_curve, sds, lconf, &conf_lat, &conf_lv, low,
                      sizeof low);
    write_profile(ctx, dram, conf_lat, conf_lv);
    report(ctx, &sk, dram, conf_lat, conf_lv, s->n, why, sds, low);
    return GX_OK;
}

int gx_stage_levels(gx_infer *ctx)
{
    if (!ctx->timer.have)
        return gx_fail(ctx->msg, GX_EINVAL, "levels needs the timer stage");
    int rc = infer_arena_default(ctx);
    if (rc != GX_OK)
        return rc;
    lv_state *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
    s->ctx = ctx;
    s->probe = malloc(LV_CAP_PROBES * sizeof *s->probe);
    s->delta = malloc(LV_CAP_PROBES * sizeof *s->delta);
    if (!s->probe || !s->delta)
        rc = gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
    else
        rc = run_levels(s);
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i].nf);
    free(s->chain);
    free(s->blocks);
    free(s->probe);
    free(s->delta);
    free(s);
    return rc;
}
