/* sets_internal.h - private to the sets stage (src/infer/stages/sets/): the
 * stage's state (sets_ctx), its limits, the structures its algorithms pass
 * each other (sweep_diffs, mod_fit) and the functions one file of the stage
 * calls in another. Uses only the target interface, through evset.h and
 * infer_util.h. */
#ifndef GX_INFER_SETS_INTERNAL_H
#define GX_INFER_SETS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../../evset/evset.h"
#include "../../infer_util.h"
#include "../../slice/gf2.h"
#include "gpuxray/bits.h"
#include "gpuxray/hash.h"
#include "gpuxray/slicepredict.h"

#define SETS_MAX_K 16
#define SETS_MAX_N 14
#define SETS_MAX_CLASSES 4096
#define SETS_CAP_TOL 0.125
#define SETS_EC_MAX 32
#define SETS_LIFT_TRIES 10
#define SETS_MAX_ALTS 256
#define SETS_DIR_CANDS 8 /* best-supported xors kept per slice direction */
#define VERIFY_SAME 32 /* verification points per coset: predicted congruent */
#define VERIFY_OTHER 16 /* and not */
#define SETS_TABLE_ALTS 256 /* table slice hash: more lifts, more chance passes */

typedef struct sets_ctx {
    gx_infer *ctx;
    gx_evx ev;
    uint32_t w, line;
    uint64_t page, base, toff; /* target = base + toff */
    uint64_t space;            /* observable line-address bits */
    int lo, hi;
    uint64_t smask[GX_MAX_MASKS];
    int ns;                    /* slice masks (observable parts) */
    uint64_t kb[64];
    int k;                     /* basis of K (slice-preserving differences) */
    const gx_evset *es;
    uint64_t *cong;            /* table hash: in-page differences to lines congruent */
    size_t ncong;              /* with T (T's page sweep) */
    uint16_t *hs;              /* the page's possible unobservable slice parts */
    int nh;
    int vote_sure;             /* table hash: cross-coset congruences pinned the masks */
    uint32_t exact_m;          /* modulo: class count of an earlier clean measurement */
    uint64_t probes;           /* probe calls */
    /* table slice hash, modulo: eviction sets reduced per in-page target
     * (slice_evset), reused by every frame that the lift tries */
    uint64_t ec_t[SETS_EC_MAX];
    uint32_t ec_n[SETS_EC_MAX];
    uint64_t ec_set[SETS_EC_MAX][GX_EVX_MAX_WAYS];
    int n_ec;
    int lift_tries;            /* frames lifted so far (bounded: each costs probes) */
    /* table slice hash, modulo: cross-coset probes measured once, shared by
     * every discriminate_table call (targets, points, answers) */
    int bank_done, bank_n;
    uint64_t bank_tt[4], bank_x[4][40];
    uint8_t bank_ev[4][40];
    size_t bank_np[4];
} sets_ctx;

/* measurements of a modulo partition before giving up on a value fit */
#define SETS_MEASURES 3

/* Differences X xor Y of congruent lines (X evicted by target Y's set),
 * gathered by the page sweeps. */
typedef struct sweep_diffs {
    uint64_t *v;
    size_t n, cap;
} sweep_diffs;

typedef struct mod_fit {
    int n;          /* value bits */
    uint32_t m;     /* classes */
    uint64_t q[SETS_MAX_N];  /* Q basis (offset differences) */
    int32_t *lab;   /* class per point of Q */
    uint64_t mask[SETS_MAX_N];
    int ok;
} mod_fit;

/* ---- sets_pages.c ---- */
/* The sets of T's slice counted over the arena's pages (ct: T's class in
 * its page, sorted in-page offsets): *m classes (0: the census does not
 * apply), *complete when the stop rule was met, *pages pages visited. */
int sets_pages_census(sets_ctx *s, const uint64_t *ct, size_t nct, uint32_t *m, int *complete,
                      uint32_t *pages);

/* ---- sets_probe.c ---- */
uint64_t sets_span_point(const uint64_t *basis, int n, uint64_t c);
int sets_probe_offsets(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *offs,
                       size_t n, size_t batch, uint8_t *ev_out);
int sets_set_overflows(sets_ctx *s, uint64_t tt, const uint64_t *set, uint32_t nset, int *ovf);
int sets_probe_if_evset(sets_ctx *s, uint64_t tt, const uint64_t *set, uint32_t nset,
                        const uint64_t *pts, size_t np, uint8_t *ev, int *probed);
size_t sets_batch_for(const sets_ctx *s, double sets_est);
int sets_in_sorted(const uint64_t *v, size_t n, uint64_t x);
uint64_t sets_bit_step(int i, uint32_t m);
void sets_class_span(const uint64_t *ct, size_t nct, uint64_t toff, gx_gf2_basis *b);
uint64_t sets_min_weight(uint64_t v, const uint64_t *null, int nn);

/* ---- sets_linear.c ---- */
int sets_linear_masks(const sets_ctx *s, const uint64_t *k0, int nk0, int want,
                      uint64_t *masks, int *spare);
uint64_t sets_slice_bits(const sets_ctx *s, uint64_t off);
int sets_sweep_target(sets_ctx *s, uint64_t toff, const uint64_t *set, gx_gf2_basis *b,
                      int *extra, sweep_diffs *dl);
int sets_table_page_info(sets_ctx *s, const uint64_t *v, size_t n_first);
uint32_t sets_moved_set(const sets_ctx *s, uint64_t x, uint64_t d, uint64_t *set);
int sets_table_moves(sets_ctx *s, uint64_t **xs_out, size_t *n_out);
int sets_table_constraints(sets_ctx *s, int *extra, sweep_diffs *dl);
int sets_identify_target_page(sets_ctx *s, gx_slicepred_page *pg);
int sets_vote_with_foreign_pages(sets_ctx *s, uint64_t *masks, int rho, sweep_diffs *dl,
                                 int *sure, size_t *n_cross);

/* ---- sets_modulo.c ---- */
uint32_t sets_renumber_labels(int32_t *lab, size_t np, int32_t *map, uint32_t m);
int sets_classify_q(sets_ctx *s, mod_fit *f, const uint64_t *ct, size_t nct, double sets_est);
int sets_fit_value_any(mod_fit *f, uint64_t *a_out, uint64_t *beta_out);

/* ---- sets_verify.c ---- */
void sets_write_sets(gx_infer *ctx, sets_ctx *vs, uint32_t sets, const uint64_t *masks,
                     int n, uint64_t modulo, int lo, int hi, double conf_sets, double conf_hash,
                     const char *how);

/* ---- sets_class.c ---- */
int sets_setup(sets_ctx *s, gx_infer *ctx);
int sets_class_of_target(sets_ctx *s, double sets_est, uint64_t **ct, size_t *nct);
int sets_repair_class(sets_ctx *s, const gx_gf2_basis *b, double sets_est, uint64_t **ct,
                      size_t *nct);
int sets_check_translations(sets_ctx *s, const uint64_t *k0, int nk0, double sets_est,
                            int *ok);

/* ---- sets_frames.c ---- */
int sets_fit_contiguous(const sets_ctx *s, const mod_fit *full, int *sh_out, int *nb_out);
int sets_partition_stabilizer(mod_fit *f, uint64_t *out);
int sets_masks_reproduce(const sets_ctx *s, const mod_fit *full, const uint64_t *masks, int n,
                         uint32_t m);
int sets_masks_reproduce_c(const sets_ctx *s, const mod_fit *full, const uint64_t *masks,
                           int n, uint32_t m, uint64_t c0);
int sets_perm_search(const sets_ctx *s, const mod_fit *full, const uint64_t *out, int n,
                     uint32_t m, int *perm, uint8_t *used, int i, uint64_t *res, long *budget);
uint32_t sets_mod_value(const uint64_t *masks, int n, uint64_t x, uint64_t delta, uint32_t m);
int sets_discriminate(sets_ctx *s, uint64_t (*alts)[SETS_MAX_N], int na, int n, uint32_t m,
                      int *pick);
int sets_discriminate_table(sets_ctx *s, uint64_t (*alts)[SETS_MAX_N], int na, int n,
                            uint32_t m, int *pick);
int sets_slice_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset);
int sets_table_page_sweep(sets_ctx *s);

/* ---- sets_capacity.c ---- */
/* The last fallback: sets per slice from one slice's capacity (contention,
 * chases), when the profile has none yet; rc is the stage's result so far,
 * returned unless the fallback establishes the count (then GX_OK). */
int sets_capacity(sets_ctx *s, int rc);

/* ---- sets_lift.c ---- */
int sets_coset_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset);
int sets_lift_checked(sets_ctx *s, const mod_fit *full, const uint64_t *pm, int n, uint32_t m,
                      uint64_t *out);
int sets_lift_frames(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n, uint32_t m,
                     int *perm, uint8_t *used, int i, int *tries, uint64_t *out);
int sets_lift_functionals(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n,
                          uint32_t m, uint64_t *out);

#endif
