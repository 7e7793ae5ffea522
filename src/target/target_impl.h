/* target_impl.h - internals shared by the target front end (target.c) and
 * its backends (sim.c, cuda.c): the backend vtable. */
#ifndef GPUXRAY_TARGET_IMPL_H
#define GPUXRAY_TARGET_IMPL_H

#include "gpuxray/target.h"

typedef struct gx_target_ops {
    void (*close)(void *impl);
    int (*arena)(void *impl, uint64_t bytes, gx_msg *msg);
    int (*chase)(void *impl, const gx_chase_req *req, double *mean_cycles, gx_msg *msg);
    int (*seq)(void *impl, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
               gx_msg *msg);
    int (*prime_probe)(void *impl, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                       const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                       gx_msg *msg);
    /* NULL: the backend has no shared-memory probe (GX_EUNSUPPORTED) */
    int (*smem_probe)(void *impl, const gx_smem_probe_req *req, double *cycles, gx_msg *msg);
    /* NULL: no translation chase (GX_EUNSUPPORTED) */
    int (*xchase)(void *impl, const gx_xchase_req *req, double *cycles, gx_msg *msg);
    /* NULL: no contention probe (GX_EUNSUPPORTED) */
    int (*contend)(void *impl, const gx_contend_req *req, double *cycles, gx_msg *msg);
} gx_target_ops;

struct gx_target {
    const gx_target_ops *ops;
    void *impl;
    gx_target_info info;
    uint64_t arena_bytes;
    gx_target_stats stats;
};

/* Backend constructors: fill *ops, *impl and info (except spec/kind). */
int gx_sim_target_open(const char *profile_path, uint64_t seed, const gx_target_ops **ops,
                       void **impl, gx_target_info *info, gx_msg *msg);
int gx_cuda_target_open(int device, const gx_target_ops **ops, void **impl,
                        gx_target_info *info, gx_msg *msg);

#endif
