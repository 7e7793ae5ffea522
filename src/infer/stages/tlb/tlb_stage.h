/* tlb_stage.h - the tlb discovery stage's entry point (the stage table in
 * src/infer/core/discover.c lists it). */
#ifndef GX_INFER_TLB_STAGE_H
#define GX_INFER_TLB_STAGE_H

struct gx_infer;
int gx_stage_tlb(struct gx_infer *ctx);

#endif
