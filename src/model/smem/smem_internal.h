/* smem_internal.h - the bank model's state, shared by smem.c (the model)
 * and smem_trace.c (trace records, writers). */
#ifndef GPUXRAY_SMEM_INTERNAL_H
#define GPUXRAY_SMEM_INTERNAL_H

#include "gpuxray/smem.h"

/* One SM's open warp instruction (trace records being grouped). */
typedef struct gx_smem_pending {
    uint32_t warp;
    int is_write;
    uint32_t active, width;
    uint32_t addr[GX_SMEM_LANES];
} gx_smem_pending;

struct gx_smem {
    gx_smem_cfg cfg;
    uint32_t sm_count;
    gx_smem_stats *per_sm;
    gx_smem_pending *pending;
    uint64_t oversize;
};

#endif
