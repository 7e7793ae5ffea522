/* slicepredict.h - learn a GPU's slice classes from timing, and predict the
 * slice class of every line of a page never seen before from a few measured
 * lines of it ("closing the loop" of the slice hash).
 *
 * What is learned (gx_slicepred_learn, through target primitives only):
 * - a classifier: each line's latency fingerprint (mean reload latency from
 *   S chosen SMs) is matched to the fingerprints of the classes seen so far;
 *   a class is one L2 slice (as far as the SMs can tell slices apart);
 * - the hash structure over the observable address bits (line bits up to
 *   the page): k XOR masks M and, per "component", a table of 2^k classes:
 *   the class of the line at in-page offset x of a page is
 *   table_c[M x ^ z], where the page's component c and XOR constant z stand
 *   for the physical address bits above the page (unknown to the probe);
 * - for a linear hash every table is a bijection (classes = cosets of the
 *   masks' kernel), so pages differ only by a relabelling; for a non-linear
 *   one (non-power-of-two slice counts, table hashes) the split of a page's
 *   lines into classes itself changes from page to page, and z (and c) must
 *   be identified per page.
 *
 * Predicting a new page (gx_slicepred_identify): measure a few random lines
 * of it, find the (component, z) that explains all of them (adding lines
 * until exactly one does and a chance match is improbable), then
 * gx_slicepred_predict() answers for every line of the page without
 * measuring it. A page of a component never seen is learned from its cube
 * (2^k lines) when that fits the measurement budget.
 *
 * Labelled learning (gx_slicepred_learn_labelled): the same structure and
 * identification with the labels from a caller's labeller instead of
 * fingerprints (the slices stage's contention classes, which separate
 * slices at the same distance from every SM). The caller gives the other
 * pages' lines already labelled (gx_slicepred_identify_labelled): the first
 * identify the page, the rest are held-out checks.
 *
 * Notes:
 * - Class ids are small integers, stable for the predictor's lifetime (they
 *   name physical slices: the same id on every page). They do not follow
 *   the hardware's numbering; gx_slicepred_relabel() can reorder them.
 * - Offsets are arena offsets of the target's current arena. The learner
 *   touches only the region it is given. Replacing the arena keeps the
 *   predictor valid (it stores no offsets beyond a call).
 * - The target's cost counters include everything the predictor measures. */
#ifndef GPUXRAY_SLICEPREDICT_H
#define GPUXRAY_SLICEPREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"
#include "gpuxray/target.h"

typedef struct gx_slicepred gx_slicepred;

typedef struct gx_slicepred_opts {
    uint32_t line_bytes;       /* required: the L2 line */
    uint64_t page_bytes;       /* 0: the target's page size */
    uint64_t region_offset;    /* arena region the learner may use (page aligned) */
    uint64_t region_bytes;     /* 0: from region_offset to the end of the arena */
    uint32_t n_sms;            /* SMs per fingerprint; 0: 16 or 32 from a pilot; at most sm_count and 64 */
    uint32_t reps;             /* reloads per (line, SM) and round; 0: from a pilot */
    uint32_t max_pages;        /* pages the learner samples at most; 0: 256. It stops
                                  earlier, after max(8, 5 x components) pages in a row
                                  showed no new component (at least 8 pages) */
    uint32_t verify_lines;     /* held-out lines checked per learned page; 0: 16 */
    double timer_noise_cycles; /* hint (0: measured) */
    uint64_t seed;
    /* Asked after a learning attempt whose held-out lines disagree, before
     * the retry at twice the samples (NULL: always retry): nonzero keeps
     * this attempt's predictor, errors and all (the caller has another way
     * to decide the classes: the slices stage's contention labels). */
    int (*settled)(void *user, const gx_slicepred *sp);
    void *settled_user;
} gx_slicepred_opts;

void gx_slicepred_opts_default(gx_slicepred_opts *o);

/* Learn on the current arena. On GX_OK *out is a predictor (free it). */
int gx_slicepred_learn(gx_target *t, const gx_slicepred_opts *opts, gx_slicepred **out,
                       gx_msg *msg);
void gx_slicepred_free(gx_slicepred *sp);

/* What was learned. */
typedef struct gx_slicepred_summary {
    uint32_t classes;          /* distinct slice classes seen */
    int k;                     /* masks */
    int obs_lo, obs_hi;        /* observable bits */
    int linear;                /* tables are bijections */
    uint32_t components;       /* distinct page components seen */
    uint32_t pages_learned;    /* pages of the region identified or learned */
    uint32_t sms;              /* SMs per fingerprint */
    uint32_t reps;             /* reloads per (line, SM) and round */
    double sigma_cycles;       /* per-sample noise */
    double skew_var;           /* half the per-SM squared distance between lines of two
                                  slices of one partition (pilot), cycles^2 */
    uint32_t attempts;         /* learning attempts (a failed verification retries) */
    double calib;              /* residual ratio (1 = noise as predicted) */
    double min_center_d2;      /* smallest D2 between two class centers */
    uint64_t lines_structure;  /* lines labelled to solve the structure */
    uint64_t lines_measured;   /* every line fingerprinted while learning */
    uint64_t verified, verify_errors; /* held-out lines of the learned pages */
    uint64_t forced;           /* structure lines still unsure after every measuring round,
                                  given their nearest class */
} gx_slicepred_summary;

void gx_slicepred_get_summary(const gx_slicepred *sp, gx_slicepred_summary *s);

/* The hash of the reference page (the first page of the region): masks over
 * the observable bits, table[M x] = class id when non-linear (table NULL
 * when linear). out owns a fresh table; classes are the current ids. */
int gx_slicepred_hash(const gx_slicepred *sp, gx_hash_fn *out, gx_msg *msg);

/* Fingerprint center of a class at SM slot s (cycles) and the SM behind a
 * slot. */
double gx_slicepred_center(const gx_slicepred *sp, uint32_t cls, uint32_t slot);
uint32_t gx_slicepred_sm(const gx_slicepred *sp, uint32_t slot);

/* S SM slots spread over the SM ids 0..sm_count-1: slot i the middle of
 * the i-th of S equal runs (the ids a predictor's fingerprints use; sm_count
 * 0 counts as 1). sms[] gets S ids. */
void gx_slicepred_spread_sms(uint32_t sm_count, uint32_t S, uint32_t *sms);

/* Rename class i to map[i] for every i < classes (a permutation). */
int gx_slicepred_relabel(gx_slicepred *sp, const uint32_t *map, gx_msg *msg);

/* A page to predict. */
typedef struct gx_slicepred_page {
    uint64_t base;             /* arena offset of the page */
    int component;             /* -1: not identified */
    uint64_t z;                /* XOR constant on the mask outputs */
    uint32_t lines_measured;   /* lines of this page the identification measured */
} gx_slicepred_page;

/* Identify a page (arena offset page_base, page aligned) by measuring at
 * most max_lines of its lines. GX_EUNSURE when that is not enough. */
int gx_slicepred_identify(gx_slicepred *sp, uint64_t page_base, uint32_t max_lines,
                          gx_slicepred_page *pg, gx_msg *msg);
/* The predicted class of the line at arena offset off (inside pg's page),
 * or -1 when pg is not identified. Measures nothing. */
int gx_slicepred_predict(const gx_slicepred *sp, const gx_slicepred_page *pg, uint64_t off);

/* ---- labelled learning ---- */

/* Labels n lines at arena offsets offs[]: labels[i] >= 0 a class id (the
 * same slice, the same id, on every page), -1 when the labeller cannot say.
 * Returns GX_OK or an error code (message in msg). */
typedef int (*gx_slicepred_labeller)(void *user, const uint64_t *offs, size_t n, int *labels,
                                     gx_msg *msg);

/* Learn the structure on the reference page (the region's first page) from
 * fn's labels, and check opts->verify_lines held-out lines of that page
 * (opts n_sms, reps and max_pages are not used; the target only gives the
 * page size). Other pages: gx_slicepred_identify_labelled. A predictor
 * learnt so measures nothing itself: gx_slicepred_identify and
 * gx_slicepred_measure label through fn as well. */
int gx_slicepred_learn_labelled(gx_target *t, const gx_slicepred_opts *opts,
                                gx_slicepred_labeller fn, void *user, gx_slicepred **out,
                                gx_msg *msg);

/* Identify the page at page_base from the n labelled lines offs[] (inside
 * the page), used in order until one (component, z) explains them all and a
 * chance match is improbable; the lines left over are held-out checks
 * (summary verified / verify_errors). When no known component explains them
 * and allow_learn, the page's cube is labelled (fn) and learnt as a new
 * component, and every given line checks it. GX_EUNSURE when the page is
 * not identified. */
int gx_slicepred_identify_labelled(gx_slicepred *sp, uint64_t page_base, const uint64_t *offs,
                                   const int *labels, size_t n, int allow_learn,
                                   gx_slicepred_page *pg, gx_msg *msg);

/* Identify the n pages at bases[] (page aligned) with a labelled predictor
 * in ONE labeller call: `lines` random lines of each page labelled, each
 * page identified from them (no component learnt: a page of a component
 * not seen stays unidentified, component -1, as one whose left-over lines
 * disagree with its identification). The cost of identifying a page one
 * labeller call at a time (gx_slicepred_identify: 4 lines a call) is paid
 * once for all of them. *identified = pages identified. */
int gx_slicepred_identify_pages(gx_slicepred *sp, const uint64_t *bases, size_t n,
                                uint32_t lines, gx_slicepred_page *pgs, uint32_t *identified,
                                gx_msg *msg);

/* 1 when sp learnt from a labeller (gx_slicepred_learn_labelled). */
int gx_slicepred_is_labelled(const gx_slicepred *sp);

/* Hand the labeller's state (the `user` of gx_slicepred_learn_labelled) to
 * sp: gx_slicepred_free frees it with free_fn, so a labelled predictor can
 * outlive the caller that learnt it (the slices stage's, for the ways
 * stage). */
void gx_slicepred_own_labeller(gx_slicepred *sp, void (*free_fn)(void *));

/* The arena offsets of the cube of the page at page_base (the lines a new
 * component is learnt from), at most cap of them written; returns their
 * number (2^masks; 0 before a hash is learnt). */
size_t gx_slicepred_cube_lines(const gx_slicepred *sp, uint64_t page_base, uint64_t *offs,
                               size_t cap);

/* A full fresh measurement: classes[i] = the class of the line at offs[i]
 * by its fingerprint, -1 when it matches no known class. */
int gx_slicepred_measure(gx_slicepred *sp, const uint64_t *offs, size_t n, int *classes,
                         gx_msg *msg);

#endif
