/* slices_internal.h - private to the slices stage (src/infer/stages/slices/):
 * the partitions' and the contention's results, and the functions one of
 * its files calls in another. slices_stage.c: the driver (contention first,
 * the fingerprint path); slices_parts.c: the partitions; slices_contend.c:
 * the count, the hash and the class latencies by contention;
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

/* SM slots of the class latencies at most (sparts_uniform's, and the
 * 64-bit near/far patterns') */
#define SL_CENTER_MAX_SMS 32u

/* The latency of every slice class from S SM slots: the fingerprint
 * predictor's class centers, or the reload latencies of a few lines of each
 * contention class (centers_from_contention). */
typedef struct sl_centers {
    uint32_t classes, sms;
    uint32_t sm[SL_CENTER_MAX_SMS]; /* the SM of each slot (SM id order) */
    double *c;                      /* classes x sms cycles, row j = class j (owned) */
    uint32_t reps;                  /* reloads per (line, SM) */
    uint64_t lines;                 /* lines measured for them */
    double sigma;                   /* per-sample noise, cycles (NAN: not estimated) */
} sl_centers;

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
    /* contention first (no fingerprint predictor): the count, the hash and the
     * partitions (from the contention classes' latencies) stand on their own */
    int first;
    int grouped;        /* lpred's classes relabelled by partition group (methods 1, 3) */
} contend_result;

/* ---- slices_contend.c ---- */
/* The slice count by contention (the reference page's sample, other pages
 * joined in rounds, classes grown): cr->classes 0 when not established.
 * fp_classes: the fingerprint classes it must reach unless fp_merged (0:
 * contention first, no bound). *state keeps the classes and the labelled
 * lines for slices_contend_hash and centers_from_contention (free with
 * sl_contend_free; NULL when contention gave nothing). */
int slices_contend_count(gx_infer *ctx, uint64_t region_bytes, uint32_t fp_classes,
                         int fp_merged, contend_result *cr, sl_contend **state);
/* The hash learnt from the contention classes (gx_slicepred_learn_labelled)
 * and checked on the count's pages: cr->hash_ok, cr->hash. */
int slices_contend_hash(gx_infer *ctx, sl_contend *st, uint64_t region_bytes,
                        contend_result *cr);
/* The latency of every contention class from S SM slots (sp_pick_sms's
 * spread): SL_CENTER_LINES labelled lines a class, each reloaded from every
 * slot; c->classes = the count's classes. */
int centers_from_contention(gx_infer *ctx, const sl_contend *st, uint32_t S, sl_centers *c);
void sl_contend_free(sl_contend *st);
void contend_result_clear(contend_result *cr);

/* ---- slices_parts.c ---- */
/* The fingerprint predictor's class centers (at most SL_CENTER_MAX_SMS slots). */
int centers_from_pred(const gx_slicepred *sp, const gx_slicepred_summary *s, sl_centers *c,
                      gx_msg *msg);
void centers_free(sl_centers *c);
/* The partitions (slices_stage.c's methods 1-3) from the class latencies;
 * group[j] = class j's partition where pr->method is 1 or 3 and
 * pr->partitions > 1 (the classes are then relabelled by group_map). */
int find_partitions(gx_infer *ctx, const sl_centers *cs, uint32_t *group, parts_result *pr);
/* map[j] = group[j] x (nc / P) + j's rank in its group: partition g's slices
 * numbered g x nc / P on. */
void group_map(uint32_t nc, const uint32_t *group, uint32_t P, uint32_t *map);

/* ---- slices_outputs.c ---- */
/* Classes that hold about a multiple of the smallest class's share: 1 (see
 * the file). */
int classes_merged(const gx_hash_fn *h, uint32_t *smallest, uint32_t *largest);
/* s, h: the fingerprint summary and hash (zeroed when contention decided
 * first); cs: the class latencies the partitions came from. */
void write_outputs(gx_infer *ctx, const gx_slicepred_summary *s, const parts_result *pr,
                   const gx_hash_fn *h, const sl_centers *cs, const contend_result *cr);
void record_slices(gx_infer *ctx, const sl_centers *cs, const gx_slicepred_summary *s,
                   const parts_result *pr, const gx_hash_fn *fp_hash, const contend_result *cr);

#endif
