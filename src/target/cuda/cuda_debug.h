/* cuda_debug.h - counters of the cuda target for measurement tools
 * (bench/cuda_probe.c): how many kernel launches the primitives made and
 * how many of them were relaunches because no block reached the wanted SM
 * at first. Not part of the target interface discovery uses. */
#ifndef GPUXRAY_CUDA_DEBUG_H
#define GPUXRAY_CUDA_DEBUG_H

#include <stdint.h>

#include "gpuxray/target.h"

/* GX_OK, or GX_EINVAL when t is not a cuda target. */
int gx_cuda_target_counters(const gx_target *t, uint64_t *launches, uint64_t *relaunches);

/* The hammers' loads in the last contend launch; GX_EINVAL when t is not a cuda target. */
int gx_cuda_target_hammer_loads(const gx_target *t, uint64_t *loads);

#endif
