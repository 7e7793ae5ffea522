/* vmem.h - the GPU's virtual memory as the model sees it: virtual addresses
 * to physical ones (frame placement, placement.h) and, with translation on,
 * the page table the walker reads (page sizes, VA regions, walk levels).
 *
 * Notes:
 * - Frames are placed at frame_bytes (the profile's memory.page_bytes)
 *   granularity on first touch, whatever the translation page size: a
 *   translation page smaller than a frame lies inside one frame (as a
 *   driver carving 4 KiB and 64 KiB pages out of 2 MiB chunks); a larger
 *   one is several frames, physically apart (PA bits above the frame are
 *   random per frame either way, as on a GPU; with contiguous_frames the
 *   frames of consecutive pages are consecutive, as an H200's large
 *   allocations). Translation therefore never
 *   changes which physical address an access reaches, only its timing.
 * - Host speed-ups kept here cannot change a result: a flat frame table
 *   over the current arena (gx_vmem_arena) and a direct-mapped cache of the
 *   last translations, both filled from the placement that decides. */
#ifndef GPUXRAY_VMEM_H
#define GPUXRAY_VMEM_H

#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef struct gx_vmem gx_vmem;

typedef struct gx_vmem_cfg {
    uint64_t frame_bytes; /* placement granule: a power of two */
    uint64_t phys_bytes;  /* physical space of the frames: a multiple of frame_bytes */
    uint64_t seed;        /* placement seed */
    /* The page table (tlb.page_table), or NULL / present == 0 for none.
     * Page-table memory lies just above the frames' physical space. */
    const gx_tlb_cfg *tlb;
    int contiguous_frames; /* 1: consecutive frames for consecutive pages (placement.h) */
} gx_vmem_cfg;

int gx_vmem_new(const gx_vmem_cfg *cfg, gx_vmem **out, gx_msg *msg);
void gx_vmem_free(gx_vmem *vm);
/* The physical address of va (its frame is placed on first touch). */
uint64_t gx_vmem_pa(gx_vmem *vm, uint64_t va);
/* Frames placed so far and frames the physical space holds (placement.h's
 * gx_placement_usage): pages > frames means pages share frames. */
void gx_vmem_usage(const gx_vmem *vm, uint64_t *pages, uint64_t *frames);
/* 1 and *pa when va's frame is already known to the host caches (no
 * placement, no state change): for a caller looking ahead (prefetching)
 * without changing the order frames are placed in. */
int gx_vmem_pa_known(const gx_vmem *vm, uint64_t va, uint64_t *pa);
/* Forget every placed frame, reseed the placement, and keep a flat frame
 * table for [va_base, va_base + bytes) (the sim target's arena). */
int gx_vmem_arena(gx_vmem *vm, uint64_t va_base, uint64_t bytes, uint64_t seed, gx_msg *msg);

/* Physical aliasing (the sim target's translation chase windows, as
 * cuMemMap of one physical handle at many places): [base, base + bytes) is
 * cut into windows of 2^window_shift bytes; every VA of window k takes the
 * physical address of target_va + k x frame_bytes + (va - base) mod
 * frame_bytes (one frame per window). Translation (the page table) is not
 * changed: only which PA an access reaches. bytes 0 removes the alias. */
void gx_vmem_alias(gx_vmem *vm, uint64_t base, uint64_t bytes, uint32_t window_shift,
                   uint64_t target_va);

/* ---- the page table (translation on) ----
 * Walk levels i = 0 (root) .. n-1, level_bits[i] VA bits each over the
 * smallest page. An entry of level i covers span(i) = smallest page <<
 * (bits of the levels below i). A page of size S is FINAL at the deepest
 * level with span <= S; when S > span there (64 KiB over a 4 KiB level),
 * its PTEs sit in a table of their own (NVIDIA's big-page table), each
 * entry covering S. Entries are INVALID where nothing is mapped below. */
typedef enum gx_pte_kind { GX_PTE_INVALID = 0, GX_PTE_TABLE = 1, GX_PTE_FINAL = 2 } gx_pte_kind;

/* The key of entry idx of table class cls (0: the level's own table; 1 + s:
 * page size s's) at level: index in bits 6 and up, class bits 3-5, level
 * bits 0-2 (the keys of one table's consecutive entries step by 1 << 6). */
static inline uint64_t gx_vmem_key(uint64_t idx, int cls, int level)
{
    return idx << 6 | (uint64_t)cls << 3 | (uint64_t)level;
}

typedef struct gx_vmem_pte {
    gx_pte_kind kind;
    uint64_t key;        /* unique id of the entry (level, table, index): PWC tag (gx_vmem_key) */
    uint64_t pa;         /* physical address of the entry */
    uint64_t va_base;    /* first VA the entry covers */
    uint64_t page_bytes; /* FINAL: the page size */
} gx_vmem_pte;

#define GX_VMEM_MAX_FETCH 64 /* entries of one fetch at most (256 bytes of 4-byte PTEs) */

int gx_vmem_translating(const gx_vmem *vm);
int gx_vmem_pt_levels(const gx_vmem *vm);
/* 1 when an entry of level i can be final (some page size ends there) /
 * can point to a table (i is not the last level). */
int gx_vmem_level_can_be_final(const gx_vmem *vm, int level);
/* The page of va: its size and base; 0 when unmapped. */
uint64_t gx_vmem_page(const gx_vmem *vm, uint64_t va, uint64_t *base);
/* The entry of level `level` on va's walk (level 0: the root's entry). */
void gx_vmem_entry(gx_vmem *vm, int level, uint64_t va, gx_vmem_pte *e);
/* One walk's VA and its page (size, size index, final level; -1 when
 * unmapped), looked up once for all its levels: gx_vmem_walk_entry(w,
 * level) is gx_vmem_entry(level, w's va) while the mapping stays. */
typedef struct gx_vmem_walk {
    uint64_t va, page_bytes;
    int size, final_level;
    const uint32_t *span_shift; /* the page table's: log2 of the VA a level's entry covers */
} gx_vmem_walk;
void gx_vmem_walk_begin(gx_vmem *vm, uint64_t va, gx_vmem_walk *w);
void gx_vmem_walk_entry(gx_vmem *vm, const gx_vmem_walk *w, int level, gx_vmem_pte *e);
/* 1 when w's entry at level is known a table entry without looking (the
 * page is mapped and ends below level), its key (gx_vmem_walk_entry's) in
 * *key: what a page-walk cache probe needs, without the entry's address. */
static inline int gx_vmem_walk_table_key(const gx_vmem_walk *w, int level, uint64_t *key)
{
    if (w->size < 0 || level >= w->final_level)
        return 0;
    *key = gx_vmem_key(w->va >> w->span_shift[level], 0, level);
    return 1;
}
/* The entries of the aligned fetch_bytes block holding e (e's table;
 * returns their number, at most GX_VMEM_MAX_FETCH; out[] in address order). */
int gx_vmem_fetch_block(gx_vmem *vm, int level, const gx_vmem_pte *e, uint32_t fetch_bytes,
                        gx_vmem_pte *out);
/* A fetch block whose entries all have one kind and page size: entry j
 * (0 <= j < the count) has key first_key + (j << 6) (the key's index sits
 * above its low 6 bits) and first VA first_va + (j << va_shift). */
typedef struct gx_vmem_block {
    gx_pte_kind kind;
    uint64_t page_bytes; /* FINAL: the page size */
    uint64_t first_key, first_va;
    uint32_t va_shift;
} gx_vmem_block;
/* gx_vmem_fetch_block's block as one gx_vmem_block when its entries are
 * all alike (one region's page size, or the default's, covers them):
 * returns their number; 0 when they may differ (then fetch_block). */
int gx_vmem_fetch_uniform(gx_vmem *vm, int level, const gx_vmem_pte *e, uint32_t fetch_bytes,
                          gx_vmem_block *out);
/* Map [va, va + bytes) at page_bytes (an installable size; the range is
 * widened to whole pages). The first map switches the default page size
 * off: a trace that maps its memory says what is mapped. */
int gx_vmem_map(gx_vmem *vm, uint64_t va, uint64_t bytes, uint64_t page_bytes, gx_msg *msg);
/* Index of page_bytes among the installable sizes, -1 if not one. */
int gx_vmem_size_index(const gx_vmem *vm, uint64_t page_bytes);
int gx_vmem_n_sizes(const gx_vmem *vm);
uint64_t gx_vmem_size(const gx_vmem *vm, int index);

#endif
