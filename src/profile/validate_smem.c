/* validate_smem.c - the cross-field rules of the smem section (shared
 * memory banks); the per-field ranges are rows of fields.def. Each rule
 * names the field it refuses; they run in SMEM_RULES order.
 *
 * Notes: a lane group of transfer_bytes may exceed a bank row
 * (banks x bank_bytes): then the banks' width alone splits wide accesses
 * (the H200's whole-warp groups), so no rule ties the two. */
#include <inttypes.h>

#include "validate_internal.h"

/* block_bytes <= sm_bytes: a block lives on one SM. */
static int rule_block_fits_sm(const gx_vctx *v)
{
    const gx_smem_cfg *s = &v->p->smem;
    if (s->block_bytes && s->sm_bytes && s->block_bytes > s->sm_bytes)
        return BAD("smem.block_bytes", "%" PRIu64 " exceeds smem.sm_bytes = %" PRIu64
                   " (a block lives on one SM)", s->block_bytes, s->sm_bytes);
    return GX_OK;
}

static const gx_vrule SMEM_RULES[] = {rule_block_fits_sm};

int gx_vrule_smem(const gx_vctx *v)
{
    for (size_t i = 0; i < sizeof SMEM_RULES / sizeof SMEM_RULES[0]; i++) {
        int rc = SMEM_RULES[i](v);
        if (rc)
            return rc;
    }
    return GX_OK;
}
