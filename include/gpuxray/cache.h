/* cache.h - a sectored, set-associative cache (one "level" of storage).
 *
 * Notes:
 * - The caller computes the set (index functions live in hash.h); the cache
 *   stores whole line addresses (address >> log2(line_bytes)) as tags.
 * - line 32-256 B; sector = the line or a power-of-two fraction of it;
 *   1-64 ways; any number of sets (non-power-of-two too).
 * - A miss fills only the missed sector. A line miss allocates a way
 *   (invalid ways first, else the policy's victim); a sector miss on a
 *   present line fills that sector and counts as a policy hit for the line.
 * - Replacement through the policy registry (policy.h). */
#ifndef GPUXRAY_CACHE_H
#define GPUXRAY_CACHE_H

#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/rng.h"

typedef struct gx_cache gx_cache;

typedef struct gx_cache_cfg {
    uint32_t line_bytes;
    uint32_t sector_bytes;
    uint32_t ways;
    uint64_t sets;
    const char *policy; /* policy spec */
    uint64_t seed;      /* for randomized policies */
    uint64_t rng_groups; /* 0 or 1: one random stream; N: the sets split into N equal
                            runs (set / (sets / N)), each with its own stream seeded
                            from (seed, run), so the runs' victims never depend on
                            each other's accesses (an L2's slices: a split run keeps
                            them); sets % N == 0 */
} gx_cache_cfg;

typedef enum gx_cache_outcome {
    GX_CACHE_HIT = 0,
    GX_CACHE_SECTOR_MISS = 1, /* line present, sector not */
    GX_CACHE_LINE_MISS = 2
} gx_cache_outcome;

typedef struct gx_cache_victim {
    int valid;            /* 1 when a line was evicted */
    uint64_t line_addr;
    uint32_t sector_mask; /* sectors it held */
} gx_cache_victim;

typedef struct gx_cache_stats {
    uint64_t accesses, hits, sector_misses, line_misses, evictions;
} gx_cache_stats;

int gx_cache_new(const gx_cache_cfg *cfg, gx_cache **out, gx_msg *msg);
void gx_cache_free(gx_cache *c);

/* Look up (line_addr, sector) in set. With allocate, a miss fills the sector
 * (evicting a line when needed; victim receives it, may be NULL). */
gx_cache_outcome gx_cache_access(gx_cache *c, uint64_t set, uint64_t line_addr,
                                 uint32_t sector, int allocate, gx_cache_victim *victim);
/* Does the set hold this sector? No state change. */
int gx_cache_contains(const gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector);
/* Insert a line with the given sectors (e.g. a victim pushed from another
 * level); merges sectors when present. */
void gx_cache_insert(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector_mask,
                     gx_cache_victim *victim);
/* Drop a line; returns its sector mask (0 when absent). */
uint32_t gx_cache_invalidate(gx_cache *c, uint64_t set, uint64_t line_addr);
/* Evict one random valid line of a random set (background traffic). */
void gx_cache_evict_random(gx_cache *c, gx_rng *rng);
void gx_cache_flush(gx_cache *c);
void gx_cache_get_stats(const gx_cache *c, gx_cache_stats *s);
void gx_cache_reset_stats(gx_cache *c);

#endif
