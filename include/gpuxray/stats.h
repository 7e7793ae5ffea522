/* stats.h - robust statistics for noisy timings: median, percentiles, MAD,
 * mean and standard deviation, and a two-cluster split (threshold between
 * "fast" and "slow" samples). None of them modify their input. */
#ifndef GPUXRAY_STATS_H
#define GPUXRAY_STATS_H

#include <stddef.h>

/* Median of n values (n >= 1); the mean of the two middle values when n is
 * even. Returns NaN for n == 0. */
double gx_median(const double *v, size_t n);
/* Percentile p in [0, 100] with linear interpolation between closest ranks
 * (the "R-7" definition). NaN for n == 0. */
double gx_percentile(const double *v, size_t n, double p);
/* Median absolute deviation from the median (unscaled). */
double gx_mad(const double *v, size_t n);
double gx_mean(const double *v, size_t n);
/* Sample standard deviation (n - 1 in the denominator); 0 for n < 2. */
double gx_stddev(const double *v, size_t n);
double gx_min(const double *v, size_t n);
double gx_max(const double *v, size_t n);
/* Threshold that best separates two clusters of values (Otsu's method on
 * the sorted values: maximises between-class variance). Returns NaN when
 * n < 2 or all values are equal. *separation (optional) receives the gap
 * between the two cluster means divided by the pooled spread (MAD-based),
 * a measure of how clearly bimodal the data are. */
double gx_split_threshold(const double *v, size_t n, double *separation);

#endif
