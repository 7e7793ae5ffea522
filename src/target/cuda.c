/* cuda.c - TEMPORARY placeholder for the cuda target; replaced by its owner. */
#include "target_impl.h"
int gx_cuda_target_open(int device, const gx_target_ops **ops, void **impl,
                        gx_target_info *info, gx_msg *msg)
{
    (void)device; (void)ops; (void)impl; (void)info;
    return gx_fail(msg, GX_ENODEV, "no usable CUDA device: cuda target not built yet");
}
