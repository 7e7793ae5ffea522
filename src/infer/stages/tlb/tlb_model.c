/* tlb_model.c - the parts of a tlb section that no translation chase sees,
 * written after the measured ones so that `gpuxray sim` runs what the tlb
 * stage found. Each is a stated model choice, not a measurement: none gets
 * a confidence entry (compare and the holdout skip these rows), and a field
 * the stage measured is never overwritten.
 *
 * - Level 0's hit latency: 0. Every access pays it, the L2 hit latencies the
 *   other stages measure include it, so the model adds nothing more.
 * - Levels' policy: lru (the stage's tests assume an LRU-like replacement:
 *   a cyclic chase one page longer than a set misses every access).
 * - Page table: the allocation granule is the one page size and the page of
 *   all VA (the translation page of allocated memory, docs/nvidia-h200.md,
 *   "TLB"); four levels of 9 bits over it (the levels count from the
 *   smallest page: a 57-bit VA over 2 MiB, every chase window fits), a walk
 *   reads all four; 8-byte PTEs.
 * - Walker: a fetch of as many PTEs as the widest entry holds pages (a walk
 *   fills a coalesced entry whole, as the chases show), at most one L2 line
 *   and at least one PTE; WALKERS walkers (a dependent chase has one walk in
 *   flight, so their number is invisible); no page-walk caches; each read of
 *   a walk a fixed share of the measured walk (the last level's
 *   miss_cycles: its mean at the distance the stage measured it, page-walk
 *   caches included).
 * - Coalescer: no window, the granule as the largest granule, the rest the
 *   section's defaults.
 * Nothing is written when a level lacks what the model needs (entries,
 * ways, reach, sharing) or the walk's cost is unknown. */
#include <math.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "tlb_model.h"

#define TABLE_LEVELS 4
#define TABLE_BITS 9
#define PTE_BYTES 8
#define WALKERS 64
#define LINE_BYTES_DEFAULT 128

int tlb_write_model(gx_profile *p, uint64_t granule, uint32_t line_bytes)
{
    gx_tlb_cfg *t = &p->tlb;
    if (!t->present || t->n_levels < 1 || !gx_is_pow2_u64(granule))
        return 0;
    uint64_t widest = granule;
    for (int j = 0; j < t->n_levels; j++) {
        const gx_tlb_level_cfg *l = &t->levels[j];
        if (!l->entries || !l->ways || !l->entry_bytes || l->sharing == GX_SHARE_UNKNOWN ||
            (j > 0 && isnan(l->hit_latency_cycles)))
            return 0;
        if (l->entry_bytes > widest)
            widest = l->entry_bytes;
    }
    const double walk = t->levels[t->n_levels - 1].miss_cycles;
    const uint32_t reads = TABLE_LEVELS; /* the granule is the table's page: every level */
    if (isnan(walk) || walk <= 0)
        return 0;
    if (isnan(t->levels[0].hit_latency_cycles))
        t->levels[0].hit_latency_cycles = 0;
    for (int j = 0; j < t->n_levels; j++)
        if (!t->levels[j].policy[0])
            strcpy(t->levels[j].policy, "lru");
    t->n_page_sizes = 1;
    t->page_sizes[0] = granule;
    t->default_page_bytes = granule;
    t->n_level_bits = TABLE_LEVELS;
    for (int i = 0; i < TABLE_LEVELS; i++)
        t->level_bits[i] = TABLE_BITS;
    t->pte_bytes = PTE_BYTES;
    const uint32_t line = line_bytes ? line_bytes : LINE_BYTES_DEFAULT;
    uint64_t fetch = PTE_BYTES * (widest / granule);
    t->walker.fetch_bytes = (uint32_t)(fetch > line ? line : fetch);
    t->walker.walkers = WALKERS;
    t->walker.queue_entries = 0;
    t->walker.fixed_read_cycles = walk / reads;
    t->walker.pwc.present = 0;
    t->walker.neighbour_pwc.present = 0;
    t->coalescer.window_cycles = 0;
    t->coalescer.max_granule_bytes = granule;
    return 1;
}
