/* vmem.c - virtual memory of the model (see vmem.h): frame placement and
 * the host-side translation caches in front of it.
 *
 * Models: VA -> PA through gx_placement (a seeded random frame per
 * frame_bytes of VA, on first touch; or consecutive frames for consecutive
 * pages, cfg->contiguous_frames).
 *
 * Notes:
 * - Two host caches, neither changes a result (placement decides, they
 *   only remember): a flat table of the arena's frames (one load per
 *   access for the sim target's chases) and a direct-mapped cache of the
 *   last XLATE_ENTRIES frames. Measured with the cache in the trace
 *   simulator (callgrind, random 64 MiB trace on seed-ampere-6mb): 692 ->
 *   646 instructions per access, all included. */
#include "gpuxray/vmem.h"

#include <stdlib.h>
#include <string.h>

#include "vmem_internal.h"

#define NO_FRAME UINT64_MAX

int gx_vmem_new(const gx_vmem_cfg *cfg, gx_vmem **out, gx_msg *msg)
{
    *out = NULL;
    gx_vmem *vm = calloc(1, sizeof *vm);
    if (!vm)
        return gx_fail(msg, GX_ENOMEM, "vmem: out of memory");
    int rc = gx_placement_new(cfg->frame_bytes, cfg->phys_bytes, cfg->seed, &vm->pl, msg);
    if (rc != GX_OK) {
        free(vm);
        return rc;
    }
    if (cfg->contiguous_frames)
        gx_placement_set_contiguous(vm->pl, 1);
    vm->frame_bytes = cfg->frame_bytes;
    vm->frame_shift = (uint64_t)__builtin_ctzll(cfg->frame_bytes);
    if (cfg->tlb && cfg->tlb->present &&
        (rc = gx_vmem_pt_init(vm, cfg->tlb, cfg->phys_bytes, msg)) != GX_OK) {
        gx_vmem_free(vm);
        return rc;
    }
    *out = vm;
    return GX_OK;
}

void gx_vmem_free(gx_vmem *vm)
{
    if (!vm)
        return;
    gx_placement_free(vm->pl);
    free(vm->arena);
    gx_vmem_pt_free(vm);
    free(vm);
}

void gx_vmem_alias(gx_vmem *vm, uint64_t base, uint64_t bytes, uint32_t window_shift,
                   uint64_t target_va)
{
    vm->alias_base = base;
    vm->alias_bytes = bytes;
    vm->alias_shift = window_shift;
    vm->alias_target = target_va & ~(vm->frame_bytes - 1);
}

static inline uint64_t unalias(const gx_vmem *vm, uint64_t va)
{
    uint64_t d = va - vm->alias_base;
    if (d < vm->alias_bytes)
        return vm->alias_target + ((d >> vm->alias_shift) << vm->frame_shift) +
               (d & (vm->frame_bytes - 1));
    return va;
}

uint64_t gx_vmem_pa(gx_vmem *vm, uint64_t va)
{
    va = unalias(vm, va);
    uint64_t vfn = va >> vm->frame_shift, off = va & (vm->frame_bytes - 1);
    uint64_t k = vfn - vm->arena_base;
    if (k < vm->arena_frames) {
        if (vm->arena[k] == NO_FRAME)
            vm->arena[k] = gx_placement_translate(vm->pl, vfn << vm->frame_shift);
        return vm->arena[k] | off;
    }
    uint32_t i = (uint32_t)(vfn & (XLATE_ENTRIES - 1));
    if (!(vm->xl_valid[i] && vm->xl_vfn[i] == vfn)) {
        vm->xl_pa[i] = gx_placement_translate(vm->pl, vfn << vm->frame_shift);
        vm->xl_vfn[i] = vfn;
        vm->xl_valid[i] = 1;
    }
    return vm->xl_pa[i] | off;
}

void gx_vmem_usage(const gx_vmem *vm, uint64_t *pages, uint64_t *frames)
{
    gx_placement_usage(vm->pl, pages, frames);
}

int gx_vmem_pa_known(const gx_vmem *vm, uint64_t va, uint64_t *pa)
{
    va = unalias(vm, va);
    uint64_t vfn = va >> vm->frame_shift, off = va & (vm->frame_bytes - 1);
    uint64_t k = vfn - vm->arena_base;
    if (k < vm->arena_frames) {
        if (vm->arena[k] == NO_FRAME)
            return 0;
        *pa = vm->arena[k] | off;
        return 1;
    }
    uint32_t i = (uint32_t)(vfn & (XLATE_ENTRIES - 1));
    if (!(vm->xl_valid[i] && vm->xl_vfn[i] == vfn))
        return 0;
    *pa = vm->xl_pa[i] | off;
    return 1;
}

int gx_vmem_arena(gx_vmem *vm, uint64_t va_base, uint64_t bytes, uint64_t seed, gx_msg *msg)
{
    uint64_t n = (bytes + vm->frame_bytes - 1) >> vm->frame_shift;
    uint64_t *f = n ? malloc((size_t)n * sizeof *f) : NULL;
    if (n && !f)
        return gx_fail(msg, GX_ENOMEM, "vmem: out of memory for an arena of %llu bytes",
                       (unsigned long long)bytes);
    for (uint64_t i = 0; i < n; i++)
        f[i] = NO_FRAME;
    free(vm->arena);
    vm->arena = f;
    vm->arena_frames = n;
    vm->arena_base = va_base >> vm->frame_shift;
    memset(vm->xl_valid, 0, sizeof vm->xl_valid);
    gx_placement_reset(vm->pl, seed);
    return GX_OK;
}
