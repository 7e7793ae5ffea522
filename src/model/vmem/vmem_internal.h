/* vmem_internal.h - private to src/model/vmem/: the virtual memory's state,
 * shared by vmem.c (frames) and pagetable.c (the page table). */
#ifndef GX_VMEM_INTERNAL_H
#define GX_VMEM_INTERNAL_H

#include <stdint.h>

#include "gpuxray/placement.h"
#include "gpuxray/vmem.h"

#define XLATE_ENTRIES 64 /* direct-mapped frame cache; a power of two */

typedef struct gx_vregion {
    uint64_t base, end, page_bytes; /* [base, end), end > base */
} gx_vregion;

typedef struct gx_ptable {
    int on;
    int n_sizes;
    uint64_t sizes[GX_MAX_PAGE_SIZES];
    int final_level[GX_MAX_PAGE_SIZES]; /* level where each size's PTEs sit */
    int n_levels;
    uint32_t bits[GX_MAX_PT_LEVELS];
    uint32_t span_shift[GX_MAX_PT_LEVELS]; /* log2 of the VA an entry of level i covers */
    uint8_t can_final[GX_MAX_PT_LEVELS];
    uint32_t pte_bytes, pte_shift;
    uint64_t default_page; /* 0: VA outside every region is unmapped */
    int maps_seen;
    gx_vregion *reg; /* sorted by base, disjoint */
    uint64_t n_reg, cap_reg;
    /* page-table nodes: node id -> PA (open addressing) */
    uint64_t *node_key, *node_pa, node_cap, node_n;
    /* the last node looked up at each level, and its PA (a walk's upper
     * nodes repeat from walk to walk; a node's PA never changes) */
    uint64_t memo_node[GX_MAX_PT_LEVELS], memo_pa[GX_MAX_PT_LEVELS];
    uint64_t next_pa; /* bump allocator of page-table memory */
} gx_ptable;

struct gx_vmem {
    gx_placement *pl;
    uint64_t frame_bytes, frame_shift;
    /* arena: flat frame table over [arena_base, arena_base + arena_frames frames) */
    uint64_t arena_base, arena_frames;
    uint64_t *arena; /* physical frame base, NO_FRAME until touched */
    /* direct-mapped cache of frames */
    uint64_t xl_vfn[XLATE_ENTRIES], xl_pa[XLATE_ENTRIES];
    uint8_t xl_valid[XLATE_ENTRIES];
    gx_ptable pt;
    /* physical alias window (gx_vmem_alias): bytes 0 = none */
    uint64_t alias_base, alias_bytes, alias_target;
    uint32_t alias_shift;
};

int gx_vmem_pt_init(gx_vmem *vm, const gx_tlb_cfg *t, uint64_t phys_bytes, gx_msg *msg);
void gx_vmem_pt_free(gx_vmem *vm);

#endif
