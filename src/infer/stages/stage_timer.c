/* stage_timer.c - discovery stage 1: the cycle counter's overhead and
 * noise floor. Every later stage sizes its repeats and unsure bands from
 * ctx->timer.noise.
 *
 * Method:
 * - overhead: median of 64 empty timed intervals (seq with GX_OP_NONE);
 * - noise: robust spread (MAD * 1.4826) of 64 reloads of ONE line (always an
 *   L2 hit, always the same slice, so only jitter remains), and of the empty
 *   intervals; the larger of the two.
 *
 * - clock settling first: a GPU idles at a low SM clock and ramps up once
 *   work arrives; latencies in SM cycles (DRAM above all) move while it
 *   ramps (an H200 went from 345 to 1980 MHz within 0.5 s of work). The
 *   stage keeps one SM busy with a FIXED number of chases of an L2-resident
 *   chain (SETTLE_ROUNDS x 15 ms of L2 hits on a GPU: about 0.3 s) and
 *   estimates the SM clock from cycles per wall second of the last rounds.
 *   A fixed count keeps discovery reproducible on a simulated target, whose
 *   "clock" is its simulation rate and varies with the host's load.
 *
 * Notes: medians make rare +3000-cycle outliers irrelevant. The timer
 * overhead is part of every seq measurement; latencies written to the
 * profile have it subtracted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuxray/clock.h"
#include "gpuxray/stats.h"
#include "../infer_util.h"

#define TIMER_SAMPLES 64
#define SETTLE_LINES 64
#define SETTLE_STEPS 1500 /* rounds of the 64-line chain per chase: 96k steps, ~15 ms at 2 GHz */
#define SETTLE_ROUNDS 20

/* Keep SM 0 busy for SETTLE_ROUNDS chases; *mhz = the last round's clock
 * estimate, *drift = its relative change from the round before. */
static int settle_clock(gx_infer *ctx, double *mhz, double *drift)
{
    uint64_t offs[SETTLE_LINES];
    for (int i = 0; i < SETTLE_LINES; i++)
        offs[i] = (uint64_t)i * 256;
    gx_rng_shuffle_u64(&ctx->rng, offs, SETTLE_LINES);
    gx_chase_req req = {.offsets = offs, .n = SETTLE_LINES, .warm_rounds = 1,
                        .timed_rounds = SETTLE_STEPS, .max_timed_steps = 0, .sm = 0};
    double prev = NAN;
    *mhz = NAN;
    *drift = NAN;
    for (int r = 0; r < SETTLE_ROUNDS; r++) {
        double mean = 0, t0 = gx_monotonic_seconds();
        int rc = gx_target_chase(ctx->t, &req, &mean, ctx->msg);
        double dt = gx_monotonic_seconds() - t0;
        if (rc != GX_OK)
            return rc;
        double est = dt > 0 ? mean * (double)(SETTLE_LINES * (SETTLE_STEPS + 1)) / dt / 1e6 : 0;
        *mhz = est;
        *drift = fabs(est - prev) / est;
        prev = est;
    }
    return GX_OK;
}

static int time_empty(gx_infer *ctx, double *median, double *spread)
{
    gx_seq_op ops[TIMER_SAMPLES];
    double cyc[TIMER_SAMPLES];
    for (int i = 0; i < TIMER_SAMPLES; i++)
        ops[i] = (gx_seq_op){.offset = 0, .kind = GX_OP_NONE, .timed = 1};
    int rc = infer_seq_timed(ctx, ops, TIMER_SAMPLES, 0, cyc);
    if (rc != GX_OK)
        return rc;
    *median = gx_median(cyc, TIMER_SAMPLES);
    *spread = 1.4826 * gx_mad(cyc, TIMER_SAMPLES);
    return GX_OK;
}

static int time_reloads(gx_infer *ctx, double *median, double *spread)
{
    gx_seq_op ops[TIMER_SAMPLES + 1];
    double cyc[TIMER_SAMPLES];
    for (int i = 0; i <= TIMER_SAMPLES; i++)
        ops[i] = (gx_seq_op){.offset = 0, .kind = GX_OP_LOAD, .timed = i > 0};
    int rc = infer_seq_timed(ctx, ops, TIMER_SAMPLES + 1, 0, cyc);
    if (rc != GX_OK)
        return rc;
    *median = gx_median(cyc, TIMER_SAMPLES);
    *spread = 1.4826 * gx_mad(cyc, TIMER_SAMPLES);
    return GX_OK;
}

int gx_stage_timer(gx_infer *ctx)
{
    int rc = infer_arena_default(ctx);
    if (rc != GX_OK)
        return rc;
    double over = 0, over_spread = 0, hit = 0, hit_spread = 0, mhz = NAN, drift = NAN;
    if ((rc = settle_clock(ctx, &mhz, &drift)) != GX_OK)
        return rc;
    if ((rc = time_empty(ctx, &over, &over_spread)) != GX_OK)
        return rc;
    if ((rc = time_reloads(ctx, &hit, &hit_spread)) != GX_OK)
        return rc;
    ctx->timer.overhead = over;
    ctx->timer.noise = fmax(fmax(over_spread, hit_spread), 0.5);
    ctx->timer.have = 1;
    ctx->out->timer_overhead_cycles = round(over);
    /* Confidence: the median of 64 samples is within +-1 cycle when the
     * spread is a few cycles; lower it as the spread grows. */
    double conf = over_spread < 4 ? 0.99 : over_spread < 10 ? 0.9 : 0.6;
    gx_profile_set_confidence(ctx->out, "timer.overhead_cycles", conf);
    char v[64], m[128];
    snprintf(v, sizeof v, "%.0f", round(over));
    snprintf(m, sizeof m, "median of %d empty timed intervals (spread %.1f)", TIMER_SAMPLES,
             over_spread);
    infer_report_row(ctx, "timer.overhead_cycles", v, m, conf, conf >= 0.9);
    if (conf < 0.9)
        ctx->out->timer_overhead_cycles = NAN;
    snprintf(v, sizeof v, "%.1f", ctx->timer.noise);
    snprintf(m, sizeof m, "MAD*1.4826 of %d reloads of one line (median %.0f)", TIMER_SAMPLES,
             hit);
    infer_report_row(ctx, "timer noise (cycles)", v, m, NAN, 0);
    /* a simulated target's "clock" is its simulation rate: say so */
    if (ctx->info->sm_clock_mhz && mhz > 2.0 * ctx->info->sm_clock_mhz)
        snprintf(v, sizeof v, "n/a");
    else
        snprintf(v, sizeof v, "%.0f", mhz);
    snprintf(m, sizeof m, "cycles per wall second of busy chases, after %d rounds (last change %.1f%%)",
             SETTLE_ROUNDS, 100 * drift);
    infer_report_row(ctx, "SM clock while probing (MHz)", v, m, NAN, 0);
    infer_progress(ctx, "timer: overhead %.1f cycles, noise %.1f cycles", over, ctx->timer.noise);
    return GX_OK;
}
