/* slice_fp.h - latency fingerprints of lines and their classification into
 * slice classes (discovery stage 5, internal).
 *
 * A line's fingerprint is, for each of S chosen SMs, the mean latency of
 * repeated reloads of that line from that SM (a hit in the slice that serves
 * the SM). On-chip distance differs per (SM, slice), so lines of one slice
 * share a fingerprint and lines of different slices differ on some SMs.
 *
 * Notes:
 * - Pure code (no target): samples come in through sfp_line_add_batch(), so
 *   the classifier is unit-tested on synthetic fingerprints.
 * - Each batch (R samples of one line from one SM) is filtered robustly:
 *   samples far from its median (misses after a background eviction, rare
 *   +3000-cycle outliers) are dropped; the rest feed the line's mean and a
 *   pooled per-sample noise estimate sigma.
 * - Decisions are chi-square tests: D2 = sum over SMs of (line - center)^2 /
 *   (sigma^2 (1/n_line + 1/n_center)), ~ chi2(S) when the line belongs to
 *   the class. ASSIGN when the best class is plausible and the runner-up is
 *   not; NEW when no class is plausible; UNSURE otherwise (the caller
 *   measures the line again, more samples, and retries).
 * - A calibration factor (>= 1) widens the tests when the residuals of
 *   members around their centers exceed what sigma predicts (real GPUs:
 *   quantised, non-gaussian timings).
 * - Host cost: a class keeps its centers and 1/n next to its sums and the
 *   model its two chi-square thresholds, so a decision is one pass over the
 *   classes' slots (a class is left once its partial D2 reaches the
 *   runner-up); a batch's median and MAD come from two selections in a
 *   stack copy. Every value kept is computed by the same operations as the
 *   plain formulas, so the results are bit-identical to them. */
#ifndef GPUXRAY_INFER_SLICE_FP_H
#define GPUXRAY_INFER_SLICE_FP_H

#include <stddef.h>
#include <stdint.h>

#define SFP_MAX_SMS 64 /* SMs a fingerprint can hold (the default uses up to 32: SP_DEFAULT_SMS) */

typedef struct sfp_line {
    double mean[SFP_MAX_SMS]; /* cycles, per SM slot */
    uint32_t n[SFP_MAX_SMS];  /* kept samples behind mean */
} sfp_line;

typedef struct sfp_class {
    double sum[SFP_MAX_SMS];  /* sum of member mean * member n */
    double n[SFP_MAX_SMS];    /* sum of member n */
    double center[SFP_MAX_SMS]; /* sum / n (kept with them; NAN while n is 0) */
    double inv_n[SFP_MAX_SMS];  /* 1.0 / n */
    int full;                   /* n > 0 in every slot */
    uint32_t members;
} sfp_class;

typedef struct sfp_model {
    int S;                  /* SM slots in use */
    double sigma_floor;     /* lower bound of sigma, cycles */
    double ss, dof;         /* pooled within-batch squared deviations, degrees of freedom */
    double scale;           /* calibration factor on D2 (>= 1) */
    int thr_S;              /* S the two thresholds below were computed for */
    double t_acc, t_new;    /* sfp_accept_threshold, sfp_new_threshold at thr_S */
    int n_classes, cap;
    sfp_class *cls;
} sfp_model;

typedef enum sfp_verdict { SFP_ASSIGN = 0, SFP_NEW = 1, SFP_UNSURE = 2 } sfp_verdict;

/* 0 or GX_ENOMEM. */
int sfp_init(sfp_model *m, int S, double sigma_floor);
void sfp_free(sfp_model *m);
void sfp_reset_classes(sfp_model *m);
/* Per-sample noise (pooled, at least the floor), cycles. */
double sfp_sigma(const sfp_model *m);
/* Add one batch of n raw samples of SM slot s to line l (robust filter);
 * returns the number kept. */
int sfp_line_add_batch(sfp_model *m, sfp_line *l, int s, const double *samples, int n);
/* *med = gx_median(x, n) and *mad = gx_mad(x, n) (0 when n < 3), bit for
 * bit, at the cost of two selections (n >= 1). */
void sfp_batch_median_mad(const double *x, int n, double *med, double *mad);
/* Mean samples per SM slot of a line (its weakest slot). */
uint32_t sfp_line_min_n(const sfp_model *m, const sfp_line *l);
/* D2 of line l against class j (divided by the calibration scale). */
double sfp_dist2(const sfp_model *m, const sfp_line *l, int j);
/* D2 between two lines. */
double sfp_line_dist2(const sfp_model *m, const sfp_line *a, const sfp_line *b);
/* Decide: *best gets the nearest class (-1 when none). */
sfp_verdict sfp_decide(const sfp_model *m, const sfp_line *l, int *best);
/* Open a class with l as its first member; returns its id or -1 (ENOMEM). */
int sfp_class_new(sfp_model *m, const sfp_line *l);
void sfp_class_add(sfp_model *m, int j, const sfp_line *l);
/* Center of class j at slot s, cycles. */
double sfp_center(const sfp_model *m, int j, int s);
/* Upper quantile of chi2 with k degrees of freedom at tail probability p
 * (Wilson-Hilferty). */
double sfp_chi2_quantile(int k, double p);
/* Thresholds used by sfp_decide (exposed for tests and reports). */
double sfp_accept_threshold(const sfp_model *m);
double sfp_new_threshold(const sfp_model *m);
/* Recompute the calibration factor from members' residuals: lines[i] with
 * labels[i] (-1 = unlabelled). Needs a few dozen labelled lines; returns the
 * measured residual ratio (1 = as sigma predicts). */
double sfp_calibrate(sfp_model *m, const sfp_line *lines, const int *labels, size_t n);

#endif
