/* sim_smem.h - the sim target's shared-memory part (sim_smem.c). */
#ifndef GPUXRAY_SIM_SMEM_H
#define GPUXRAY_SIM_SMEM_H

#include "gpuxray/profile.h"
#include "gpuxray/target.h"

typedef struct sim_smem sim_smem;

/* Builds the bank model of p's smem section (the default when absent) and
 * fills info's smem_* fields (what the API would report). */
int sim_smem_open(const gx_profile *p, uint64_t seed, sim_smem **out, gx_target_info *info,
                  gx_msg *msg);
void sim_smem_close(sim_smem *s);
int sim_smem_probe(sim_smem *s, const gx_smem_probe_req *req, double *cycles, gx_msg *msg);

#endif
