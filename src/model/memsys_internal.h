/* memsys_internal.h - private to src/model: the assembled memory system's
 * state, shared by memsys.c (assembly, access path) and memsys_stats.c
 * (statistics output). */
#ifndef GX_MEMSYS_INTERNAL_H
#define GX_MEMSYS_INTERNAL_H

#include "gpuxray/dram.h"
#include "gpuxray/memsys.h"
#include "gpuxray/smem.h"
#include "slots.h"

struct gx_memsys {
    gx_l2 *l2;
    gx_dram *dram;
    gx_vmem *vm;
    uint32_t sector_shift;
    uint32_t frame_shift; /* vmem's frames (memory.page_bytes) */
    uint64_t *pa_buf;     /* gx_memsys_run_off / _run_alone: MEMSYS_RUN_CHUNK physical addresses */
    uint32_t *sm_buf;     /* gx_memsys_run_alone: their SMs */
    uint64_t *size_buf;   /* gx_memsys_run_alone: their page sizes */
    /* translation (tlb present) */
    int xlate;
    int n_levels;
    gx_tlb *tlb[GX_MAX_TLB_LEVELS];
    double hit_lat[GX_MAX_TLB_LEVELS];
    uint32_t nb_levels; /* bit j: level j's entries cover several pages (take neighbours) */
    int copy_entry;     /* tlb.hit_fills_entry */
    int lean;           /* every level gx_tlb_lean (entries of one page): translate_lean */
    gx_slots slots[GX_MAX_TLB_LEVELS]; /* outstanding misses of each level (n 0: unlimited) */
    char level_name[GX_MAX_TLB_LEVELS][16];
    gx_walker *walker;
    gx_coalescer *co;
    gx_smem *smem;      /* shared memory (SR / SW records); NULL: not modelled */
    char smem_note[256]; /* why not */
    uint64_t accesses, faults, maps, maps_rejected, invalidations, miss_slot_stalls;
    double translation_cycles;
};

#endif
