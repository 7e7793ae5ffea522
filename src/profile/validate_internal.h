/* validate_internal.h - shared pieces of the validator: the rule context
 * and the cross-field rules (one function per rule, each naming its field).
 *
 * Notes:
 * - vctx.all: every field the model needs must be present (kinds reference
 *   and simulated, and gx_profile_check_model for any kind). */
#ifndef GX_PROFILE_VALIDATE_INTERNAL_H
#define GX_PROFILE_VALIDATE_INTERNAL_H

#include "fields.h"

typedef struct gx_vctx {
    const gx_profile *p;
    int all;         /* requirements apply */
    unsigned req;    /* the flag that makes a field required: GX_FF_REQ or GX_FF_MODEL */
    const char *why; /* "for a reference profile", "by the model" */
    gx_msg *msg;
} gx_vctx;

int gx_vbad(gx_msg *msg, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define BAD(field, ...) gx_vbad(v->msg, field, __VA_ARGS__)

typedef int (*gx_vrule)(const gx_vctx *v);

/* validate_hash.c: the index functions against the geometry. */
int gx_vrule_hashes(const gx_vctx *v);
/* validate_tlb.c: the tlb section's cross-field rules (all of them). */
int gx_vrule_tlb(const gx_vctx *v);
/* validate_smem.c: the smem section's cross-field rules. */
int gx_vrule_smem(const gx_vctx *v);

#endif
