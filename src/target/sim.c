/* sim.c - TEMPORARY placeholder for the sim target; replaced by its owner. */
#include "target_impl.h"
int gx_sim_target_open(const char *profile_path, uint64_t seed, const gx_target_ops **ops,
                       void **impl, gx_target_info *info, gx_msg *msg)
{
    (void)profile_path; (void)seed; (void)ops; (void)impl; (void)info;
    return gx_fail(msg, GX_EUNSUPPORTED, "sim target not built yet");
}
