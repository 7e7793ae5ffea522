/* sim_smem.c - the sim target's shared memory: answers smem_probe from the
 * bank model (smem.h) of the profile's smem section (or the default one when
 * the profile has none), like a GPU would.
 *
 * Models:
 * - The probe's warp repeats one access pattern; each access costs the
 *   model's cycles for it (the pattern's cost never changes: the window
 *   holds zeros, so every address is the lane's offset).
 * - *cycles = (reps x cost + one timer reading) / reps: one clock pair
 *   around the timed chain, as on the GPU; the timer reading carries the
 *   profile's timer overhead and jitter.
 * - Rare interruptions: the profile's outlier rate is per L2 access; here
 *   it is per SIM_SMEM_OUTLIER_SPAN cycles of probing (about one L2
 *   access's time), capped at 0.5 per call. An interrupted call is
 *   stretched by outlier_cycles, so discovery's median and retry band have
 *   real work to do.
 *
 * Notes: all randomness comes from the open seed. */
#include <math.h>
#include <stdlib.h>

#include "gpuxray/rng.h"
#include "gpuxray/smem.h"
#include "../model/noise.h"
#include "sim_smem.h"

#define SIM_SMEM_OUTLIER_SPAN 256.0 /* cycles: about one L2 access */

struct sim_smem {
    gx_smem *model;
    gx_noise timer;
    gx_rng rng;
    double overhead_cycles, outlier_rate, outlier_cycles;
};

int sim_smem_open(const gx_profile *p, uint64_t seed, sim_smem **out, gx_target_info *info,
                  gx_msg *msg)
{
    *out = NULL;
    gx_smem_cfg cfg;
    int rc = gx_smem_cfg_from_profile(p, &cfg, msg);
    if (rc != GX_OK)
        return rc;
    if (!cfg.present)
        gx_smem_cfg_default(&cfg);
    sim_smem *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    if ((rc = gx_smem_new(&cfg, p->device.sm_count, &s->model, msg)) != GX_OK) {
        free(s);
        return rc;
    }
    s->overhead_cycles = isfinite(p->timer_overhead_cycles) ? p->timer_overhead_cycles : 0;
    if (p->sim.present) {
        s->outlier_rate = p->sim.outlier_rate;
        s->outlier_cycles = p->sim.outlier_cycles;
    }
    gx_noise_init(&s->timer, p->sim.present, p->sim.jitter_cycles, 0, 0, 0,
                  gx_mix64(seed ^ 0x5eed5e3ULL));
    gx_rng_seed(&s->rng, gx_mix64(seed ^ 0x53e3b4ULL));
    info->smem_block_bytes = cfg.block_bytes;
    info->smem_sm_bytes = cfg.sm_bytes;
    *out = s;
    return GX_OK;
}

void sim_smem_close(sim_smem *s)
{
    if (!s)
        return;
    gx_smem_free(s->model);
    free(s);
}

int sim_smem_probe(sim_smem *s, const gx_smem_probe_req *req, double *cycles, gx_msg *msg)
{
    gx_smem_cost c;
    int rc = gx_smem_access(s->model, req->sm, 0, req->lane_offsets, req->active,
                            req->width_bytes, &c, msg);
    if (rc != GX_OK)
        return rc;
    double total = (double)req->reps * c.cycles + s->overhead_cycles + gx_noise_jitter(&s->timer);
    double p_out = fmin(0.5, s->outlier_rate * (double)req->reps * c.cycles / SIM_SMEM_OUTLIER_SPAN);
    if (p_out > 0 && gx_rng_uniform(&s->rng) < p_out)
        total += s->outlier_cycles;
    *cycles = total / (double)req->reps;
    return GX_OK;
}
