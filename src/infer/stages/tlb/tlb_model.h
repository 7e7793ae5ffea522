/* tlb_model.h - the model's parts of a found tlb section (tlb_model.c). */
#ifndef GX_INFER_TLB_MODEL_H
#define GX_INFER_TLB_MODEL_H

#include <stdint.h>

#include "gpuxray/profile.h"

/* Complete p's tlb section (its levels measured) with the parts no chase
 * sees, so that the model runs it (granule: the allocation granule;
 * line_bytes: the L2 line, 0 unknown). 1 when written, 0 when a level
 * lacks what the model needs or the walk's cost is unknown (nothing then). */
int tlb_write_model(gx_profile *p, uint64_t granule, uint32_t line_bytes);

#endif
