/* levels_internal.h - private to the levels stage (src/infer/stages/levels/):
 * its limits, a sweep point (lv_point), the stage's state (lv_state), the
 * (SM, slice) skew (lv_skew) and the functions one file of the stage calls in
 * another. Uses only the target interface, through infer_util.h. */
#ifndef GX_INFER_LEVELS_INTERNAL_H
#define GX_INFER_LEVELS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/changepoint.h"
#include "../../infer_util.h"
#include "gpuxray/stats.h"

#define LV_BLOCK_BYTES 256u /* one random 32 B slot per block: one line, one sector */
#define LV_START_BYTES (32u << 10)
#define LV_MAX_POINTS 40
#define LV_TIMED_STEPS 2048u
#define LV_SWEEP_PROBES 48
#define LV_FAR_PROBES 96
/* Chases over the far plateau (and alternating chases) for far_stream_extra,
 * and far lines probed after each: the extra is a difference of such means,
 * each moving 3-4 cycles between runs at 3 x 256 (an H200: 11.5-23 within
 * one call); at 9 x 512 four runs of one call read 13.0-15.1 against
 * 12.2-14.9 (and one 4.4) at 3 x 256, for ~3.5 s more of its levels stage
 * (data/nvidia-h200/levels-2026-12-03). A build may set both (-D). */
#ifndef LV_STREAM_CHASES
#define LV_STREAM_CHASES 9
#endif
#ifndef LV_STREAM_PROBES
#define LV_STREAM_PROBES 512
#endif
/* a far hit's delta lies within this many far sigmas above the far delta
 * (a normal cluster keeps 99.7% of its lines; far_window_top) */
#define LV_FAR_WINDOW_SIGMAS 3.0
/* far_stream_extra is written above max(LV_EXTRA_MIN cycles, LV_EXTRA_SIGMAS
 * standard errors of its estimate): below, it is not told from no extra. An
 * H200: SE ~2.5 (650 probes of sigma ~40, chases within 2 cycles), extras
 * 11.5-18 in six runs of two calls; the former floor of 5% of the far delta
 * (11.2 there) left one of them out. The sim's generated near-far profiles
 * read -41..+83 without an extra: the chase-against-probes estimate has
 * systematic errors no floor of a few cycles removes (docs/discovery.md). */
#define LV_EXTRA_MIN 8.0
#define LV_EXTRA_SIGMAS 3.0
/* the far plateau is measured only where the combined capacity leaves room
 * for one: at least this multiple of the first level (below, the footprint
 * halfway between them sits in the transitions at both ends) */
#define LV_STREAM_MIN_RATIO 1.3
/* the alternating chase's far delta is used when within this fraction of
 * the probe pairs' mean (its failure under a PLRU near level: -13%) */
#define LV_ALT_AGREE 0.08
#define LV_CAP_PROBES 3072
#define LV_COLD 40
#define LV_COLD_ATTEMPTS 3
#define LV_RANK_Z 3.5 /* far-test vs cold-line deltas: rank-test z for a separate level */
/* Far and DRAM deltas overlap line by line (per-line counts of far
 * residents are not trusted; level 2 comes from the chase curve) when their
 * centres lie less than this many combined sigmas apart,
 * sqrt(dram_sigma^2 + far_sigma^2): there each cluster puts more than ~4%
 * of its lines on the other side of the midpoint. One combined spread, not
 * a sum of per-cluster multiples: the far sigma comes from a few dozen
 * lines, and weighting its sampling error three times over flipped the
 * decision between two samples of one card. HBM's wide DRAM spread (an
 * H200: gap ~200 cycles, DRAM sigma 113-197) stays far inside it. */
#define LV_OVERLAP_SIGMAS 2.5
#define LV_COLD_STRIDE (32u << 10) /* cold lines this far apart: different DRAM rows */
#define LV_LINES 6       /* lines per SM for the skew */
#define LV_SM0_LINES 24  /* lines on SM 0 (its typical hit latency) */
#define LV_SMS 64        /* SMs sampled: many (SM, slice) pairs even with one slice */
#define LV_RELOADS 15
#define LV_R_LO 0.12
#define LV_R_HI 0.5

typedef struct lv_point {
    double f, y;  /* footprint bytes, chase mean cycles */
    int k;        /* probes kept (outliers dropped) */
    int n1;       /* of which in the first level */
    int n_nf, cap_nf;
    double *nf;   /* deltas of the others (far or DRAM) */
} lv_point;

typedef struct lv_state {
    gx_infer *ctx;
    size_t n;
    lv_point p[LV_MAX_POINTS];
    double dram_delta, far_delta, noise; /* skew-free deltas, pair sigma (of DRAM deltas) */
    double dram_low;                     /* 10th percentile of the cold-line deltas */
    double cold[LV_COLD];                /* the cold-line deltas */
    double far_noise; /* sigma of far deltas (on-chip: much tighter than DRAM's on HBM) */
    double thr1;                          /* delta below: first level */
    int near_far;
    uint64_t *blocks;  /* slot offsets of the work area's blocks, random order */
    size_t nblocks;
    uint64_t *chain, *probe;
    double *delta;
} lv_state;

typedef struct lv_skew {
    double base_hit;     /* fastest (SM, slice) pair hit latency, profile units */
    double sm0_hit_seq;  /* median hit latency of SM 0's lines, seq units */
    double spread;       /* 95th - 5th percentile of per-pair hit medians */
} lv_skew;

/* ---- levels_curve.c ---- */
int lv_make_blocks(lv_state *s);
int lv_chase_footprint(lv_state *s, uint64_t f, double *y, size_t *n_out);
int lv_probe_point(lv_state *s, size_t n, int k, lv_point *pt);
double lv_resident(const lv_state *s, const lv_point *p, int level);
int lv_level_capacity(lv_state *s, int level, double *cap, double *rel_sd);

/* ---- levels_far.c ---- */
int lv_measure_skew(gx_infer *ctx, const uint64_t *lines_at, size_t nlines, lv_skew *sk);
int lv_measure_cold(lv_state *s);
int lv_curve_capacity2(lv_state *s, double c1, double *c2, double *sd);
int lv_far_stream_chase(lv_state *s, double c1, double c2, uint32_t line, double *y,
                        double *far_delta, double *near_y, double *se);
int lv_far_test(lv_state *s, double cap1, char *why, size_t why_len);

#endif
