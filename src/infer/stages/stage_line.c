/* stage_line.c - discovery stage 3: the sector (fetch granularity) and the
 * line (allocation granularity), distinguished by two experiments.
 *
 * Method:
 * - Sector: for d = 32, 64, 128, 256: take a never-touched block A, load A
 *   (one sector is fetched), then probe A + d (time it, reload it twice:
 *   the skew-free delta). Same sector -> a first-level hit (delta ~ 0);
 *   another sector or line -> DRAM (delta ~ the DRAM delta). sector = the
 *   smallest d that misses. Each d is voted on fresh blocks (SEC_VOTES, more
 *   while unsure).
 * - Line (infer_measure_line, run by the levels stage, which needs it to
 *   turn capacities counted in lines into bytes): chains over the levels'
 *   256 B blocks (random blocks over the whole arena, nested), two 32 B slots
 *   per block at s and s ^ d (d = 32, 64, 128), accessed back to back. While d < line the two slots share a
 *   line: B lines, and when the line is (re)filled both sectors come in
 *   together, so there is no partial-line effect. From d = line on they are
 *   two lines: 2B lines. With B = 2.5 x the first level's capacity in lines
 *   every set is over-full either way, so the resident fraction of the
 *   s ^ d slots is C/B or C/(2B): it halves at d = line (or drops to ~0
 *   under a policy that never evicts old lines, such as MRU, since the old
 *   lines are the s slots). A reference chain with one slot per block gives
 *   C/B. line = the smallest d whose ratio to the reference is below 0.8 (two lines
 *   measure 0.5-0.6: the pairs' sets are fuller than the reference's);
 *   none up to 128 means 256 B lines.
 *
 * Notes / assumptions:
 * - line is a power of two in 32..256, sector a power of two in 32..line.
 * - Residency is measured with probe pairs (infer_probe_pairs) in batches,
 *   the chain re-walked between batches so the probes' own fills do not
 *   drain the cache. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "../infer_util.h"

#define SEC_VOTES 5
#define SEC_MAX_VOTES 11
#define LN_PROBES 384
#define LN_B_FACTOR 2.5 /* blocks per first-level line: sets well over-full either way */
#define LN_RATIO_CUT 0.8 /* between 1 (one line) and ~0.5-0.6 (two lines) */
#define LN_ONE_LO 0.9   /* one line: ratio ~1 */
#define LN_TWO_HI 0.65  /* two lines: ratio ~0.5 (0 under MRU-like policies) */
#define LN_REF_PROBES 1024
#define LN_MAX_PROBES 1536

/* ---- line ------------------------------------------------------------------------ */

typedef struct ln_state {
    gx_infer *ctx;
    const uint64_t *blocks; /* slot offsets, one per 512 B block */
    size_t nblocks;         /* blocks used (B) */
    uint64_t *chain, *probe;
    double *delta;
} ln_state;

/* Build the chain: one slot per block (d == 0) or two slots s, s ^ d back to
 * back; blocks in random order. */
static size_t build_chain(ln_state *s, uint32_t d)
{
    gx_rng *r = &s->ctx->rng;
    size_t per = d == 0 ? 1 : 2;
    for (size_t b = 0; b < s->nblocks; b++) {
        s->chain[b * per] = s->blocks[b];
        if (d)
            s->chain[b * per + 1] = s->blocks[b] ^ d;
    }
    for (size_t i = s->nblocks; i > 1; i--) { /* shuffle blocks, slots stay together */
        size_t j = (size_t)gx_rng_below(r, i);
        for (size_t q = 0; q < per; q++) {
            uint64_t t = s->chain[(i - 1) * per + q];
            s->chain[(i - 1) * per + q] = s->chain[j * per + q];
            s->chain[j * per + q] = t;
        }
    }
    return s->nblocks * per;
}

/* Resident fraction (first level) of the blocks' last slots. */
static int residency(ln_state *s, uint32_t d, double c1_lines, int probes, double *r, int *kept)
{
    gx_infer *ctx = s->ctx;
    const gx_levels_result *lv = &ctx->levels; /* the deltas, set before the line's measurement */
    size_t n = build_chain(s, d);
    size_t per = d == 0 ? 1 : 2;
    double y = 0;
    int rc = infer_chase(ctx, s->chain, n, 2, 1, 1, 0, &y);
    if (rc != GX_OK)
        return rc;
    int batch = (int)(c1_lines / 48);
    batch = batch < 16 ? 16 : batch > LN_PROBES ? LN_PROBES : batch;
    int hit = 0, k = 0;
    for (int guard = 0; k < probes && guard < 256; guard++) {
        int m = probes - k < batch ? probes - k : batch;
        for (int i = 0; i < m; i++)
            s->probe[i] = s->chain[(size_t)gx_rng_below(&ctx->rng, s->nblocks) * per + per - 1];
        if ((rc = infer_probe_pairs(ctx, s->probe, (size_t)m, 0, NULL, s->delta)) != GX_OK)
            return rc;
        for (int i = 0; i < m; i++) {
            int h = infer_delta_is_hit(ctx, s->delta[i]);
            if (h >= 0 && s->delta[i] > -0.5 * lv->miss_delta &&
                s->delta[i] < lv->dram_delta + 0.5 * lv->miss_delta + 6 * lv->dram_noise) {
                hit += h;
                k++;
            }
        }
        if (k < probes && (rc = infer_chase(ctx, s->chain, n, 1, 1, 1, 0, &y)) != GX_OK)
            return rc;
    }
    *r = k ? (double)hit / k : NAN;
    *kept = k;
    return GX_OK;
}

int infer_measure_line(gx_infer *ctx, const uint64_t *blocks, size_t nblocks, double c1_lines,
                       uint32_t *line, double *conf, char *how, size_t how_len)
{
    *line = 0;
    *conf = 0;
    how[0] = 0;
    if (!(c1_lines >= 16) || !(ctx->levels.miss_delta > 0) || !blocks)
        return gx_fail(ctx->msg, GX_EINVAL, "line: needs the first level's capacity and deltas");
    ln_state s = {.ctx = ctx, .blocks = blocks};
    s.nblocks = (size_t)(LN_B_FACTOR * c1_lines);
    if (s.nblocks > nblocks)
        s.nblocks = nblocks;
    s.chain = malloc(2 * s.nblocks * sizeof *s.chain);
    s.probe = malloc(LN_PROBES * sizeof *s.probe);
    s.delta = malloc(LN_PROBES * sizeof *s.delta);
    int rc = GX_OK;
    if (!s.chain || !s.probe || !s.delta) {
        rc = gx_fail(ctx->msg, GX_ENOMEM, "line: out of memory");
        goto out;
    }
    double ref = 0;
    int kref = 0;
    if ((rc = residency(&s, 0, c1_lines, LN_REF_PROBES, &ref, &kref)) != GX_OK)
        goto out;
    int n = snprintf(how, how_len, "resident ref %.2f;", ref);
    if (!(ref > 0.15)) {
        rc = gx_fail(ctx->msg, GX_EUNSURE, "line: reference residency %.2f too low", ref);
        goto out;
    }
    *conf = 0.99;
    int prev_two = 0;
    for (uint32_t d = INFER_MIN_LINE_BYTES; d < INFER_MAX_LINE_BYTES; d *= 2) {
        double r = 0, ratio = NAN;
        int k = 0, total = 0;
        double sum_hits = 0;
        int decided = -1;
        while (total < LN_MAX_PROBES) { /* more probes while the ratio is unsure */
            if ((rc = residency(&s, d, c1_lines, LN_PROBES, &r, &k)) != GX_OK)
                goto out;
            sum_hits += r * k;
            total += k;
            double rr = total ? sum_hits / total : NAN;
            ratio = rr / ref;
            /* standard error of the ratio (binomial on both) */
            double se = fmax(ratio, 0.05) * sqrt((1 - rr) / (fmax(rr, 0.01) * total + 1e-9) +
                                                  (1 - ref) / (ref * kref + 1e-9));
            /* distances to the two hypotheses' ranges, in standard errors */
            double d_one = fmax(0, LN_ONE_LO - ratio) / se, d_two = fmax(0, ratio - LN_TWO_HI) / se;
            if (fmin(d_one, d_two) < 1.5 && fmax(d_one, d_two) > 3.5) {
                decided = d_one > d_two; /* 1: two lines */
                break;
            }
        }
        if (n > 0 && (size_t)n < how_len)
            n += snprintf(how + n, how_len - (size_t)n, " %u:%.2f", d, ratio);
        if (decided < 0) {
            *conf = fmin(*conf, 0.6);
            decided = ratio < LN_RATIO_CUT;
        }
        if (decided && !*line)
            *line = d;
        if (!decided && prev_two)
            *conf = fmin(*conf, 0.5); /* not monotone */
        prev_two = decided;
    }
    if (!*line) /* slots up to 128 B apart share a line: 256 B lines */
        *line = INFER_MAX_LINE_BYTES;
out:
    free(s.chain);
    free(s.probe);
    free(s.delta);
    return rc;
}

/* ---- sector ------------------------------------------------------------------------ */

/* One sector vote: 1 = A + d hit (same sector), 0 = miss, -1 unsure. */
static int sector_vote(gx_infer *ctx, uint32_t d, int *vote)
{
    uint64_t a = 0;
    int rc = infer_fresh_block(ctx, 0, &a);
    if (rc != GX_OK)
        return rc;
    gx_seq_op ops[4] = {{.offset = a, .kind = GX_OP_LOAD, .timed = 0},
                        {.offset = a + d, .kind = GX_OP_LOAD, .timed = 1},
                        {.offset = a + d, .kind = GX_OP_LOAD, .timed = 1},
                        {.offset = a + d, .kind = GX_OP_LOAD, .timed = 1}};
    double c[3] = {0};
    if ((rc = infer_seq_timed(ctx, ops, 4, 0, c)) != GX_OK)
        return rc;
    double ref = fabs(c[1] - c[2]) > 100 ? fmin(c[1], c[2]) : 0.5 * (c[1] + c[2]);
    double delta = c[0] - ref;
    /* same sector: a first-level hit; else DRAM (the line is new) */
    double mid = 0.5 * ctx->levels.dram_delta;
    double band = fmin(2.0 * ctx->levels.pair_noise + 1.0, 0.25 * ctx->levels.dram_delta);
    if (delta < -mid || delta > ctx->levels.dram_delta + mid + 6 * ctx->levels.dram_noise)
        *vote = -1; /* an outlier */
    else
        *vote = fabs(delta - mid) < band ? -1 : delta < mid;
    return GX_OK;
}

static int find_sector(gx_infer *ctx, uint32_t line, uint32_t *sector, double *conf,
                       int *n_votes)
{
    *sector = 0;
    *conf = 0.99;
    *n_votes = 0;
    int prev = 1;
    uint32_t top = line ? line : INFER_MAX_LINE_BYTES;
    for (uint32_t d = INFER_MIN_LINE_BYTES; d <= top; d *= 2) {
        int votes[SEC_MAX_VOTES], n = 0, v = -1;
        while (n < SEC_MAX_VOTES) {
            int rc = sector_vote(ctx, d, &votes[n++]);
            if (rc != GX_OK)
                return rc;
            if (n >= SEC_VOTES && (v = infer_vote(votes, n, (n + 1) / 2 + 1)) >= 0)
                break;
        }
        *n_votes += n;
        if (v < 0)
            return gx_fail(ctx->msg, GX_EUNSURE,
                           "sector: %d votes at distance %u B do not agree", n, d);
        if (v == 1 && prev == 0) /* hit after a miss: not a granularity */
            *conf = 0.5;
        if (v == 0 && !*sector)
            *sector = d;
        prev = v;
    }
    if (!*sector)
        return gx_fail(ctx->msg, GX_EUNSURE, "sector: every distance up to %u B hits", top);
    return GX_OK;
}

/* The line the levels stage measured (the hand-off in gx_levels_result) is
 * published in gx_line_result first, whatever the sector search finds: the
 * later stages size their pools and strides by it. */
int gx_stage_line(gx_infer *ctx)
{
    const gx_levels_result *lv = &ctx->levels;
    ctx->line.line_bytes = lv->line_measured;
    if (!lv->have || !(lv->dram_delta > 0))
        return gx_fail(ctx->msg, GX_EINVAL, "line needs the levels stage");
    gx_profile *p = ctx->out;
    char v[32], m[256];
    uint32_t line = lv->line_measured;
    double lconf = line ? lv->line_conf : 0;
    uint32_t sector = 0;
    double sconf = 0;
    int votes = 0;
    int rc = find_sector(ctx, line, &sector, &sconf, &votes);
    if (rc != GX_OK)
        return rc;
    if (line && line < sector) {
        sconf = fmin(sconf, 0.5);
        lconf = fmin(lconf, 0.5);
    }
    ctx->line.sector_bytes = sector;
    p->l2.present = 1;
    if (sconf >= 0.9) {
        p->l2.sector_bytes = sector;
        gx_profile_set_confidence(p, "l2.sector_bytes", sconf);
    }
    snprintf(v, sizeof v, "%u", sector);
    snprintf(m, sizeof m, "cold line A: load A, probe A+d; smallest d that misses (%d votes)",
             votes);
    infer_report_row(ctx, "l2.sector_bytes", v, m, sconf, sconf >= 0.9);
    if (!line) {
        infer_report_row(ctx, "l2.line_bytes", "?", lv->line_how, 0, 0);
        return gx_fail(ctx->msg, GX_EUNSURE, "line: %s", lv->line_how);
    }
    if (lconf >= 0.9) {
        p->l2.line_bytes = line;
        gx_profile_set_confidence(p, "l2.line_bytes", lconf);
    }
    snprintf(v, sizeof v, "%u", line);
    snprintf(m, sizeof m, "slot pairs s, s^d: residency ratio halves at d = line (%.170s)",
             lv->line_how);
    infer_report_row(ctx, "l2.line_bytes", v, m, lconf, lconf >= 0.9);
    infer_progress(ctx, "line: sector %u B, line %u B (%s)", sector, line, lv->line_how);
    return GX_OK;
}
