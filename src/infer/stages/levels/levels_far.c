/* levels_far.c - the levels stage's reference deltas and the far level: the
 * (SM, slice) skew of hit latencies, cold lines (the DRAM delta and the pair
 * noise), the far test at 1.4x the first level's capacity, the second
 * capacity from the chase curve where far and DRAM deltas overlap, and the
 * chase over the far plateau (back-to-back far hits). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levels_internal.h"

/* n values as a JSON array of numbers (null for a non-finite one) */
static json_t *lv_json_values(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, infer_json_num(v[i]));
    return a;
}

int lv_measure_skew(gx_infer *ctx, const uint64_t *lines_at, size_t nlines, lv_skew *sk)
{
    uint32_t nsm = ctx->info->sm_count < LV_SMS ? ctx->info->sm_count : LV_SMS;
    double med[LV_SM0_LINES + LV_SMS * LV_LINES], sm0[LV_SM0_LINES];
    size_t k = 0;
    for (uint32_t j = 0; j < nsm; j++) {
        uint32_t sm = (uint32_t)((uint64_t)j * ctx->info->sm_count / nsm);
        int nl = j == 0 ? LV_SM0_LINES : LV_LINES;
        for (int i = 0; i < nl; i++) {
            uint64_t off = lines_at[gx_rng_below(&ctx->rng, nlines)];
            int rc = infer_reload_latency(ctx, off, sm, LV_RELOADS, &med[k]);
            if (rc != GX_OK)
                return rc;
            if (j == 0)
                sm0[i] = med[k];
            k++;
        }
    }
    sk->base_hit = gx_percentile(med, k, 1) - ctx->timer.overhead;
    sk->spread = gx_percentile(med, k, 95) - gx_percentile(med, k, 5);
    sk->sm0_hit_seq = gx_median(sm0, LV_SM0_LINES);
    return GX_OK;
}

/* Cold pairs: DRAM delta and the pair noise. */
int lv_measure_cold(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    uint64_t offs[LV_COLD];
    double d[LV_COLD];
    /* Cold lines far apart (LV_COLD_STRIDE), taken from the END of the
     * never-touched reserve (which then ends before them): consecutive fresh
     * blocks would share DRAM rows, and on real HBM a row-buffer hit is much
     * faster than the random access a DRAM latency should describe. The
     * page they sit in is TLB-warmed first through a block that is not used. */
    const uint64_t stride = LV_COLD_STRIDE;
    if (ctx->arena.fresh_end < ctx->arena.fresh_next + (LV_COLD + 2) * stride)
        return gx_fail(ctx->msg, GX_ERANGE, "levels: the never-touched reserve is too small");
    uint64_t top = ctx->arena.fresh_end - stride;
    uint64_t page = ctx->info->page_bytes ? ctx->info->page_bytes : 4096;
    uint64_t warmed = ~(uint64_t)0;
    for (int i = 0; i < LV_COLD; i++) {
        offs[i] = top - (uint64_t)i * stride;
        if (offs[i] / page != warmed) {
            warmed = offs[i] / page;
            uint64_t sentinel = warmed * page + INFER_FRESH_BLOCK_BYTES;
            if (sentinel % stride == top % stride) /* never one of the cold lines */
                sentinel += INFER_FRESH_BLOCK_BYTES;
            gx_seq_op op = {.offset = sentinel, .kind = GX_OP_LOAD, .timed = 0};
            double dummy = 0;
            int rc = infer_seq_timed(ctx, &op, 1, 0, &dummy);
            if (rc != GX_OK)
                return rc;
        }
    }
    ctx->arena.fresh_end = offs[LV_COLD - 1] / page * page; /* the rest stays fresh below */
    if (ctx->arena.fresh_end < ctx->arena.fresh_next)
        ctx->arena.fresh_end = ctx->arena.fresh_next;
    int rc = infer_probe_pairs(ctx, offs, LV_COLD, 0, NULL, d);
    if (rc != GX_OK)
        return rc;
    s->dram_delta = gx_median(d, LV_COLD);
    s->noise = fmax(1.4826 * gx_mad(d, LV_COLD), 1.0);
    s->dram_low = gx_percentile(d, LV_COLD, 10);
    memcpy(s->cold, d, sizeof s->cold);
    return GX_OK;
}

/* Level 2 from the chase curve, for near-far cards where far and DRAM deltas
 * overlap line by line (on an H200, HBM row-buffer hits are as fast as far
 * hits, so per-line classification cannot count far residents). The chase
 * mean rises from the far plateau to the DRAM plateau as the footprint
 * passes the combined capacity; the capacity is where it crosses halfway
 * (bracketed on a grid of multiples of the first level, then bisected).
 * *c2 in chain lines; *sd the relative half-width of the final bracket. */
int lv_curve_capacity2(lv_state *s, double c1, double *c2, double *sd)
{
    static const double mult[] = {1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.5};
    enum { NM = sizeof mult / sizeof mult[0] };
    double x[NM], y[NM];
    size_t k = 0, n = 0;
    *c2 = NAN;
    *sd = NAN;
    for (size_t i = 0; i < NM; i++) {
        double lines = floor(c1 * mult[i]);
        if (lines > (double)s->nblocks)
            break;
        x[k] = lines;
        int rc = lv_chase_footprint(s, (uint64_t)lines * LV_BLOCK_BYTES, &y[k], &n);
        if (rc != GX_OK)
            return rc;
        k++;
    }
    if (k < 4)
        return GX_OK;
    double lo_y = y[0], hi_y = y[k - 1], mid = 0.5 * (lo_y + hi_y);
    if (!(hi_y - lo_y > 8 * s->far_noise / sqrt((double)LV_TIMED_STEPS) + 5))
        return GX_OK;
    size_t b = 0;
    while (b + 1 < k && !(y[b] < mid && y[b + 1] >= mid))
        b++;
    if (b + 1 >= k)
        return GX_OK;
    double a = x[b], z = x[b + 1];
    for (int it = 0; it < 3; it++) { /* bisection on the bracket */
        double m = floor(0.5 * (a + z)), ym = 0;
        int rc = lv_chase_footprint(s, (uint64_t)m * LV_BLOCK_BYTES, &ym, &n);
        if (rc != GX_OK)
            return rc;
        if (ym < mid)
            a = m;
        else
            z = m;
    }
    *c2 = 0.5 * (a + z);
    *sd = 0.5 * (z - a) / *c2;
    infer_progress(s->ctx, "levels: level 2 from the chase curve: far %.0f, DRAM %.0f, halfway at "
                   "%.0f lines (+-%.1f%%)", lo_y, hi_y, *c2, 100 * *sd);
    return GX_OK;
}

/* The far delta of isolated far hits as chases see it (the stream's own
 * terms): a chase that alternates the far region's lines (B: every line of
 * [0, n lines), each a far hit: n + the A lines exceed the first level and
 * stay below the combined capacity) with words of a small set of lines A
 * (each A line's words are visited once per word round, so every A line is
 * reused long before a recency policy forgets it: near hits), against a
 * chase over A's words alone. Per step, alternation costs (near + near +
 * far delta) / 2 and A alone near, so far delta = 2 (alt - A); every far
 * hit there follows a near hit. Both are means over thousands of steps and
 * lines (an H200's far deltas are bimodal, ~175 and ~250, and a few hundred
 * probe pairs put 174-251 at their centre in six runs of one call while the
 * stream chase stayed within 2.2 cycles); the SM's skew and timing outliers
 * add to both chases alike and cancel. *alt, *aa = NaN when the arena cannot
 * hold B and A. */
static int far_alternation(lv_state *s, size_t n, uint32_t line, double *alt, double *aa)
{
    gx_infer *ctx = s->ctx;
    *alt = *aa = NAN;
    size_t words = line / 8, na = words ? (n + words - 1) / words : 0;
    uint64_t abase = (uint64_t)n * line;
    if (!na || abase + (uint64_t)na * line > ctx->arena.work_bytes)
        return GX_OK;
    uint64_t *chain = malloc(2 * n * sizeof *chain), *a = malloc(na * words * sizeof *a);
    uint64_t *perm = malloc(na * sizeof *perm);
    int rc = GX_OK;
    if (!chain || !a || !perm) {
        rc = gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
        goto out;
    }
    double ya[LV_STREAM_CHASES], yaa[LV_STREAM_CHASES];
    for (int i = 0; rc == GX_OK && i < LV_STREAM_CHASES; i++) {
        for (size_t w = 0; w < words; w++) { /* word round w: every A line once */
            infer_chain_strided(&ctx->rng, abase, line, na, perm);
            for (size_t j = 0; j < na; j++)
                a[w * na + j] = perm[j] + 8 * w;
        }
        /* B in the upper half, interleaved in place: pair j's writes end at
         * 2j + 1 < n + j + 1, below every B line still to be read */
        infer_chain_strided(&ctx->rng, 0, line, n, chain + n);
        for (size_t j = 0; j < n; j++) {
            chain[2 * j] = chain[n + j];
            chain[2 * j + 1] = a[j];
        }
        rc = infer_chase(ctx, chain, 2 * n, 2, 1, 2 * LV_TIMED_STEPS, 0, &ya[i]);
        if (rc == GX_OK)
            rc = infer_chase(ctx, a, na * words, 2, 1, LV_TIMED_STEPS, 0, &yaa[i]);
    }
    if (rc == GX_OK) {
        *alt = gx_median(ya, LV_STREAM_CHASES);
        *aa = gx_median(yaa, LV_STREAM_CHASES);
        if (infer_recording(ctx)) {
            infer_data_set(ctx, "curve", "far_alternating_chases",
                           lv_json_values(ya, LV_STREAM_CHASES));
            infer_data_set(ctx, "curve", "far_alternating_nears",
                           lv_json_values(yaa, LV_STREAM_CHASES));
        }
    }
out:
    free(chain);
    free(a);
    free(perm);
    return rc;
}

/* The top of the window that counts a probe pair's delta as a far hit:
 * halfway between the far and DRAM deltas, or, where the far deltas spread
 * wider than that leaves room for, LV_FAR_WINDOW_SIGMAS of their spread
 * above the far delta (never past the DRAM delta). An H200's far deltas
 * are bimodal (modes ~175 and ~250, MAD-sigma ~40) and its DRAM delta reads
 * 328-410 from call to call: halfway (263-314) cut into the upper mode in
 * some runs and moved the probe pairs' mean by 5-34 cycles (dev37 run 3:
 * 202.9 against 207.3 and 205.9; all 768 probes of each run recorded), and
 * with it far_stream_extra. */
static double far_window_top(const lv_state *s)
{
    double mid = 0.5 * (s->far_delta + s->dram_delta);
    double spread = s->far_delta + LV_FAR_WINDOW_SIGMAS * s->far_noise;
    return spread > mid ? fmin(spread, s->dram_delta) : mid;
}

/* The chase's mean step over the far plateau: median of LV_STREAM_CHASES
 * chases, each over every line of a contiguous region (in a fresh random
 * cyclic order) halfway between the first level and the combined capacity.
 * Every line of a contiguous region: each set holds as many chain lines as
 * the next (a chain of random lines overfills some sets before others,
 * which mixes DRAM misses or near hits into the plateau). Every step is a
 * far hit that follows a far hit, so its excess over the near plateau + the
 * far delta of isolated far hits is the extra cost of far hits back to
 * back (the model's far_stream_extra). *far_delta: from far_alternation
 * where it agrees with probe pairs, else their mean: the deltas of lines
 * of the far level (see below), probed in pairs after each chase: 3 x 256
 * far samples where the topology test's random lines at 1.4x the first
 * level give ~35. The chase: 2048 steps per chase, where a 64-load seq
 * stream (its loop leaves gaps a chase does not have) read +6 and +39 on
 * two runs of one chip (it is gone). c1, c2 in lines. *y = NaN when the
 * levels leave no plateau between them; *near_y: the near steps of the
 * alternation's chases when its delta is used (else NaN). The random
 * stream is restored after: later stages draw what they drew without this
 * measurement. */
int lv_far_stream_chase(lv_state *s, double c1, double c2, uint32_t line, double *y,
                        double *far_delta, double *near_y, double *se)
{
    gx_infer *ctx = s->ctx;
    *y = NAN;
    *far_delta = NAN;
    *near_y = NAN;
    *se = NAN;
    if (!line || !isfinite(c1) || !isfinite(c2) || c2 < LV_STREAM_MIN_RATIO * c1)
        return GX_OK;
    size_t n = (size_t)(0.5 * (c1 + c2));
    if ((uint64_t)n * line > ctx->arena.work_bytes)
        return GX_OK;
    /* fd: the probes' deltas in the far window; fall: every probe's delta,
     * kept for the raw data (what the window leaves out: near hits under
     * thr1, DRAM misses from hi) */
    uint64_t *chain = malloc(n * sizeof *chain);
    double *fd = malloc(2 * (size_t)LV_STREAM_CHASES * LV_STREAM_PROBES * sizeof *fd);
    if (!chain || !fd) {
        free(chain);
        free(fd);
        return gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
    }
    double ys[LV_STREAM_CHASES], *fall = fd + (size_t)LV_STREAM_CHASES * LV_STREAM_PROBES;
    size_t nfd = 0, nall = 0, k = n / 8 < LV_STREAM_PROBES ? n / 8 : LV_STREAM_PROBES;
    double hi = far_window_top(s);
    gx_rng keep = ctx->rng;
    int rc = GX_OK;
    for (int i = 0; rc == GX_OK && i < LV_STREAM_CHASES; i++) {
        infer_chain_strided(&ctx->rng, 0, line, n, chain);
        rc = infer_chase(ctx, chain, n, 2, 1, LV_TIMED_STEPS, 0, &ys[i]);
        /* isolated far hits of the same lines: lines last touched between
         * the first level's reach and the region's (c1 + n) / 2 steps ago,
         * in the far level with room on both sides. The chase's next lines
         * (the oldest, n steps ago) were probed before: where the hash
         * fills some sets first they are the first to reach DRAM, whose row
         * hits on HBM are as fast as far hits and pass the window below (an
         * H200: a far delta of 219 in one run against 186-191). */
        size_t pos = (size_t)((2 * (uint64_t)n + LV_TIMED_STEPS) % n);
        size_t age = (size_t)(0.5 * (c1 + (double)n)) + k / 2;
        for (size_t j = 0; j < k; j++)
            s->probe[j] = chain[(pos + 2 * n - age + j) % n];
        if (rc == GX_OK && (rc = infer_probe_pairs(ctx, s->probe, k, 0, NULL, s->delta)) == GX_OK)
            for (size_t j = 0; j < k; j++) {
                fall[nall++] = s->delta[j];
                if (s->delta[j] >= s->thr1 && s->delta[j] < hi)
                    fd[nfd++] = s->delta[j];
            }
    }
    free(chain);
    double alt = NAN, aa = NAN;
    if (rc == GX_OK)
        rc = far_alternation(s, n, line, &alt, &aa);
    ctx->rng = keep;
    if (rc == GX_OK) {
        *y = gx_median(ys, LV_STREAM_CHASES);
        /* most of them must be far hits, or the footprint was not a plateau */
        int probes_ok = nfd >= (size_t)LV_STREAM_CHASES * k / 2 && nfd >= 8;
        double dchase = 2.0 * (alt - aa), pmean = probes_ok ? gx_mean(fd, nfd) : NAN;
        double pmed = probes_ok ? gx_median(fd, nfd) : NAN;
        /* The alternation's B steps are all far hits only where the near
         * level keeps its recently used lines (LRU-like): a tree PLRU with
         * A's hot lines in every set spares some B lines, and the chase's
         * delta falls short of the probe pairs' mean (plru-rand: 220 against
         * 254). On an H200 (LRU) it stands above it: 229.5-233.2 against
         * 205-210 in six runs, the stream's own far steps' cost (its chase
         * minus A's: 231), so there a far hit after a near hit costs what one
         * after a far hit does, and the extra is the gap between what chases
         * and probe pairs see of a far hit. Where they disagree, and without
         * probe pairs to check it by, the probe pairs stand, the
         * reference the model's far_hit and far_stream_extra were fitted to:
         * their MEAN, as a chase averages its far steps (an H200's probe
         * deltas are bimodal, a gap at 200-220 cycles and 41-52% above it,
         * so their median moved by 45 cycles between runs of one call, 187
         * or 232, where the mean moved by 9: 204-213). */
        /* the standard error of y - near - far delta, from the stream
         * chases' spread (MAD sigma over sqrt of their count, se): with the
         * chases' delta the extra is y - aa - 2 (alt - aa) = y + aa - 2 alt,
         * three medians of as many chases, sqrt(1 + 1 + 4) se when they
         * spread alike; with the probe pairs' mean, se and their sigma over
         * sqrt of their count */
        double ys_se = 1.4826 * gx_mad(ys, LV_STREAM_CHASES) / sqrt((double)LV_STREAM_CHASES);
        if (probes_ok && isfinite(dchase) && fabs(dchase - pmean) <= LV_ALT_AGREE * pmean) {
            *far_delta = dchase;
            *near_y = aa;
            *se = sqrt(6.0) * ys_se;
        } else if (probes_ok) {
            *far_delta = pmean;
            *se = hypot(ys_se, gx_stddev(fd, nfd) / sqrt((double)nfd));
        }
        infer_progress(ctx,
                       "levels: isolated far hits: alternating chase %.1f, its near steps %.1f: "
                       "delta %.1f; probe pairs (%zu) mean %.1f, median %.1f: %s",
                       alt, aa, dchase, nfd, pmean, pmed,
                       isfinite(*near_y) ? "the chases" : "the probe pairs' mean");
        if (infer_recording(ctx)) {
            json_t *a = json_array();
            for (size_t j = 0; j < nfd; j++)
                json_array_append_new(a, json_real(fd[j]));
            infer_data_set(ctx, "curve", "far_stream_deltas", a);
            infer_data_set(ctx, "curve", "far_alternating_chase", infer_json_num(alt));
            infer_data_set(ctx, "curve", "far_alternating_near", infer_json_num(aa));
            infer_data_set(ctx, "curve", "far_stream_chase", infer_json_num(*y));
            infer_data_set(ctx, "curve", "far_stream_chases", lv_json_values(ys, LV_STREAM_CHASES));
            json_t *all = json_array(), *win = json_array();
            for (size_t j = 0; j < nall; j++)
                json_array_append_new(all, json_real(fall[j]));
            json_array_append_new(win, json_real(s->thr1));
            json_array_append_new(win, json_real(hi));
            infer_data_set(ctx, "curve", "far_stream_probes_all", all);
            infer_data_set(ctx, "curve", "far_stream_window", win);
        }
    }
    free(fd);
    return rc;
}

/* Topology test at F = 1.4 x the first level: far delta or DRAM delta? */
int lv_far_test(lv_state *s, double cap1, char *why, size_t why_len)
{
    gx_infer *ctx = s->ctx;
    uint64_t f = (uint64_t)(1.4 * cap1) / LV_BLOCK_BYTES * LV_BLOCK_BYTES;
    size_t n = 0;
    double y = 0;
    if (f > ctx->arena.work_bytes)
        f = ctx->arena.work_bytes / LV_BLOCK_BYTES * LV_BLOCK_BYTES;
    int rc = lv_chase_footprint(s, f, &y, &n);
    if (rc == GX_OK)
        rc = lv_chase_footprint(s, f, &y, &n); /* two passes: exclusive levels settle */
    if (rc != GX_OK)
        return rc;
    /* First the chase's next lines: the oldest, which a recency policy has
     * pushed out of the first level (into the far level, or DRAM); random
     * chain lines are mostly first-level hits at this footprint (an H200
     * left 15-38 of 96 for the test, mixing far and DRAM: far deltas of
     * 186-246 over six runs). A policy that keeps old lines (MRU-like)
     * leaves fewer than half of them missing: then random lines too. */
    int k = LV_FAR_PROBES > (int)n ? (int)n : LV_FAR_PROBES;
    size_t pos = n >= LV_TIMED_STEPS ? (size_t)(LV_TIMED_STEPS % n) : 0;
    /* the random lines are drawn first, probed only when needed (after the
     * oldest ones in the probe array) */
    uint64_t *rnd = s->probe + k;
    infer_pick_distinct(&ctx->rng, s->chain, n, (size_t)k, rnd);
    for (int j = 0; j < k; j++)
        s->probe[j] = s->chain[(pos + (size_t)j) % n];
    if ((rc = infer_probe_pairs(ctx, s->probe, (size_t)k, 0, NULL, s->delta)) != GX_OK)
        return rc;
    double x[2 * LV_FAR_PROBES];
    size_t m = 0;
    double hi = s->dram_delta + fmax(6 * s->noise, 0.5 * s->dram_delta);
    for (int i = 0; i < k; i++)
        if (s->delta[i] >= s->thr1 && s->delta[i] <= hi)
            x[m++] = s->delta[i];
    if (2 * m < (size_t)k) {
        if ((rc = infer_probe_pairs(ctx, rnd, (size_t)k, 0, NULL, s->delta)) != GX_OK)
            return rc;
        for (int i = 0; i < k; i++)
            if (s->delta[i] >= s->thr1 && s->delta[i] <= hi)
                x[m++] = s->delta[i];
        k *= 2;
    }
    if (m < 6) {
        snprintf(why, why_len, "only %zu of %d lines missed the first level at 1.4x", m, k);
        s->near_far = 0;
        return GX_OK;
    }
    double med = gx_median(x, m);
    s->far_noise = fmax(1.4826 * gx_mad(x, m), 1.0);
    /* standard error of the difference of the two medians, each from its
     * own sample's spread (on HBM the DRAM deltas spread far wider than
     * far-partition hits do) */
    double se_dram = 1.25 * s->noise / sqrt((double)LV_COLD);
    double se_far = 1.25 * s->far_noise / sqrt((double)m);
    double se = sqrt(se_dram * se_dram + se_far * se_far);
    double need = fmax(5 * se, 0.04 * s->dram_delta);
    /* or a rank test (Mann-Whitney): the far-test deltas lie below the
     * cold-line deltas far beyond chance, whatever the shape of the DRAM
     * spread (HBM row hits and misses make it bimodal, and its MAD then
     * overstates the uncertainty of its median) */
    double u = 0;
    for (size_t i = 0; i < m; i++)
        for (int j = 0; j < LV_COLD; j++)
            u += x[i] < s->cold[j] ? 1.0 : x[i] == s->cold[j] ? 0.5 : 0.0;
    double mn = (double)m * LV_COLD;
    double z = (u - 0.5 * mn) / sqrt(mn * ((double)m + LV_COLD + 1) / 12.0);
    s->near_far = s->dram_delta - med > need ||
                  (z >= LV_RANK_Z && s->dram_delta - med > 0.1 * s->dram_delta);
    s->far_delta = med;
    snprintf(why, why_len, "misses at 1.4x C1: delta %.0f vs DRAM %.0f (%zu lines, rank z %.1f)",
             med, s->dram_delta, m, z);
    return GX_OK;
}
