/* changepoint.h - plateaus and change points of a latency curve (latency
 * against footprint, sorted by footprint): robust piecewise-constant
 * segmentation, then plateaus = long, flat segments, and the footprint at
 * which the curve crosses a level.
 *
 * Notes: pure functions over arrays, no target access; unit-tested on
 * synthetic curves (tests/test_changepoint.c). */
#ifndef GPUXRAY_INFER_CHANGEPOINT_H
#define GPUXRAY_INFER_CHANGEPOINT_H

#include <stddef.h>

#define CP_MAX_SEGMENTS 64

typedef struct cp_segment {
    size_t first, last; /* inclusive indices */
    double level;       /* median of the segment's values */
    double spread;      /* median absolute deviation of the segment */
} cp_segment;

/* Optimal segmentation of y[0..n) into constant pieces minimising the sum of
 * absolute deviations from each piece's median plus `penalty` per piece
 * (dynamic programming, O(n^2) cost evaluations, n <= 512). Writes up to max
 * segments in order; returns their number (0 on bad input). */
size_t cp_segment_l1(const double *y, size_t n, double penalty, cp_segment *out, size_t max);

/* Plateaus of a rising curve: segments (after merging neighbours whose levels
 * differ by less than tol) with at least min_pts points, each at least tol
 * above the previous plateau. A single point that deviates from both of its
 * neighbours by more than tol while they agree is treated as an outlier.
 * Returns the number written to out (<= max). */
size_t cp_plateaus(const double *y, size_t n, double tol, size_t min_pts, cp_segment *out,
                   size_t max);

/* Where the curve first crosses `level` upward after index `from`: x
 * interpolated linearly in log(x) between the last point below and the
 * first point at or above. Returns NaN when it never crosses. x must be > 0
 * and increasing. */
double cp_crossing_logx(const double *x, const double *y, size_t n, size_t from, double level);

#endif
