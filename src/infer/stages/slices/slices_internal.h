/* slices_internal.h - private to the slices stage (src/infer/stages/slices/):
 * the partitions' and the contention's results, and the functions one of
 * its files calls in another. slices_stage.c: the driver and the
 * partitions; slices_contend.c: the count and the hash by contention;
 * slices_outputs.c: the profile's fields, report rows and data. */
#ifndef GX_INFER_STAGES_SLICES_INTERNAL_H
#define GX_INFER_STAGES_SLICES_INTERNAL_H

#include <stdint.h>

#include "gpuxray/hash.h"
#include "gpuxray/slicepredict.h"
#include "../../infer_util.h"

#define SL_MAX_CLASSES 1024

typedef struct parts_result {
    int method;          /* 0 none, 1 home visible, 2 copies (cross test), 3 uniform runs */
    uint32_t partitions; /* 0 = not observable */
    uint32_t slices;
    double conf;
    char how[192];
} parts_result;

typedef struct sl_contend sl_contend; /* the count's classes and lines, for the hash */

typedef struct contend_result {
    uint32_t classes;   /* 0: not established (the fingerprints' count stands) */
    uint32_t ref_classes; /* of them on the reference page */
    uint32_t pages;     /* other pages joined */
    uint64_t launches;  /* contention launches of the count */
    char how[192];
    /* the hash at contention resolution (slices_contend_hash) */
    int hash_ok;        /* learnt, every page identified, every held-out line agrees */
    gx_hash_fn hash;    /* the reference page's (owned) */
    gx_slicepred_summary hs;
    uint64_t hash_launches; /* contention launches of the hash */
    gx_slicepred *lpred; /* the labelled predictor when hash_ok (owned, with its labeller) */
    char hash_how[192];
} contend_result;

/* ---- slices_contend.c ---- */
/* The slice count by contention (the reference page's sample, other pages
 * joined in rounds, classes grown): cr->classes 0 when not established.
 * *state keeps the classes and the labelled lines for slices_contend_hash
 * (free with sl_contend_free; NULL when contention gave nothing). */
int slices_contend_count(gx_infer *ctx, uint64_t region_bytes, uint32_t fp_classes,
                         int fp_merged, contend_result *cr, sl_contend **state);
/* The hash learnt from the contention classes (gx_slicepred_learn_labelled)
 * and checked on the count's pages: cr->hash_ok, cr->hash. */
int slices_contend_hash(gx_infer *ctx, sl_contend *st, uint64_t region_bytes,
                        contend_result *cr);
void sl_contend_free(sl_contend *st);
void contend_result_clear(contend_result *cr);

/* ---- slices_outputs.c ---- */
/* Classes that hold about a multiple of the smallest class's share: 1 (see
 * the file). */
int classes_merged(const gx_hash_fn *h, uint32_t *smallest, uint32_t *largest);
void write_outputs(gx_infer *ctx, const gx_slicepred_summary *s, const parts_result *pr,
                   const gx_hash_fn *h, double cost_lines, const contend_result *cr);
void record_slices(gx_infer *ctx, const gx_slicepred *sp, const gx_slicepred_summary *s,
                   const parts_result *pr, const gx_hash_fn *fp_hash, const contend_result *cr);

#endif
