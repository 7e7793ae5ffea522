/* slicepredict_internal.h - private to the slice predictor (slicepredict*.c in
 * src/infer/slice/): its limits, its state (struct gx_slicepred) and the
 * functions one of its files calls in another. Uses only the target interface. */
#ifndef GX_INFER_SLICEPREDICT_INTERNAL_H
#define GX_INFER_SLICEPREDICT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/bits.h"
#include "gpuxray/rng.h"
#include "gpuxray/slicepredict.h"
#include "gpuxray/stats.h"
#include "slice_fp.h"
#include "slice_solve.h"

/* SMs of a fingerprint unless the caller asks: the pilot picks 16 or this many */
#define SP_DEFAULT_SMS 32
#define SP_MAX_ROUNDS 8      /* measuring rounds before a line stays unsure */
#define SP_BATCH_LINES 256   /* lines per seq call */
#define SP_ID_CHANCE 1e-9    /* accepted chance of a wrong page identification */
#define SP_PILOT_LINES 24
#define SP_MIN_PAGES 8       /* pages learned at least (when the region has them) */
#define SP_MAX_PAGES 256     /* pages learned at most */
#define SP_ATTEMPTS 3       /* learning attempts (reps doubled after a failed check) */
#define SP_STORE_MAX 4096   /* labelled lines kept for calibration */

struct gx_slicepred {
    gx_target *t;
    gx_slicepred_opts o;
    uint32_t sm_count;
    int obs_lo, obs_hi;
    uint64_t space;
    int S;
    uint32_t sms[SFP_MAX_SMS];
    uint32_t reps;
    sfp_model fp;
    gx_rng rng;
    gx_msg *msg;
    ssolve_result hs;
    int have_hash;
    int n_comp, cap_comp;
    int **comp;             /* component tables (internal class ids), 1 << k each */
    uint32_t *ext;          /* internal class -> caller's id */
    uint32_t cap_ext;
    sfp_line *st;           /* labelled lines (calibration) */
    int *st_lab;
    size_t n_st, cap_st;
    size_t n_st_calib;      /* store size at the last calibration */
    uint64_t page_base;     /* the solver's page */
    gx_slicepred_labeller label_fn; /* labelled learning: the labels' source (NULL:
                                       fingerprints) */
    void *label_user;
    void (*label_free)(void *); /* frees label_user with the predictor (NULL: the caller's) */
    uint32_t n_labels;      /* labelled learning: 1 + the largest label seen */
    gx_slicepred_summary sum;
};

/* The lines of a page an identification uses when they come labelled
 * (gx_slicepred_identify_labelled): taken in order; NULL in sp_identify:
 * random lines, measured. */
typedef struct sp_given {
    const uint64_t *offs;
    const int *labels;
    size_t n, next;
} sp_given;

/* ---- slicepredict.c ---- */
int sp_setup(gx_target *t, const gx_slicepred_opts *opts, gx_slicepred **out, gx_msg *msg);
/* The region's first page (the reference page) and its whole pages. */
int sp_region(gx_slicepred *sp, uint64_t *r0, uint64_t *npages);

/* ---- slicepredict_measure.c ---- */
int sp_classify(gx_slicepred *sp, const uint64_t *offs, size_t n, int *labels, int allow_new,
                size_t *unsure, int force);
int sp_ensure_ext(gx_slicepred *sp, uint32_t need);
void sp_pick_sms(gx_slicepred *sp);
uint64_t sp_random_line(gx_slicepred *sp, uint64_t base);
int sp_pilot(gx_slicepred *sp, uint64_t base);

/* ---- slicepredict_structure.c ---- */
int sp_oracle(void *user, const uint64_t *offs, size_t n, int *labels);
int sp_add_component(gx_slicepred *sp, int *table);
int sp_identify(gx_slicepred *sp, uint64_t base, uint32_t max_lines, int allow_learn,
                sp_given *given, gx_slicepred_page *pg);
int sp_verify_page(gx_slicepred *sp, const gx_slicepred_page *pg, uint32_t n);

/* ---- slicepredict_labelled.c ---- */
/* Labels of lines at arena offsets: the labeller's in labelled learning
 * (unsure = lines it gave no class), else sp_classify's. */
int sp_label(gx_slicepred *sp, const uint64_t *offs, size_t n, int *labels, int allow_new,
             size_t *unsure, int force);
/* Classes known: the labels seen, or the fingerprint classes. */
uint32_t sp_classes(const gx_slicepred *sp);

#endif
