/* salru.h - a set-associative true-LRU cache of 64-bit tags, each line with
 * a 32-bit valid mask (the TLB levels whose policy is lru), private to
 * src/model/.
 *
 * Models: exactly the hits and misses of a gx_cache with the "lru" policy
 * used as the TLB uses it (gx_cache_access with allocate 0, gx_cache_insert,
 * gx_cache_flush; never a single-line invalidation):
 * - a probe hits when the set holds the tag with the bit set; a hit makes
 *   the line the most recently used of its set; a miss (the tag absent, or
 *   present without the bit) changes nothing;
 * - an insert of a present tag ORs the mask in and makes it the most
 *   recently used; of an absent tag it takes a free way while the set has
 *   one (gx_cache fills its invalid ways before it evicts), else evicts the
 *   set's least recently used line;
 * - flush empties every set.
 *
 * Notes:
 * - Layout: one chained hash table over all sets from (set, tag) to a slot
 *   (at least four buckets per line), and per set an intrusive doubly
 *   linked recency list of its slots; probe, insert and evict are O(1)
 *   (expected) instead of a search over the ways and an update of every
 *   way's rank (gx_cache's lru). Set s owns slots s * ways .. + ways - 1. */
#ifndef GX_SALRU_H
#define GX_SALRU_H

#include <stdint.h>

typedef struct gx_salru gx_salru;

/* NULL when out of memory or sets * ways is 0 or too large. */
gx_salru *gx_salru_new(uint32_t sets, uint32_t ways);
void gx_salru_free(gx_salru *c);
/* 1 when set holds tag with bit (a one-bit mask) set: the line becomes the
 * most recently used; 0 otherwise (no state change). */
int gx_salru_probe(gx_salru *c, uint32_t set, uint64_t tag, uint32_t bit);
/* OR mask into tag's line in set (allocating it, evicting the set's least
 * recently used line when full); the line becomes the most recently used. */
void gx_salru_insert(gx_salru *c, uint32_t set, uint64_t tag, uint32_t mask);
void gx_salru_flush(gx_salru *c);

#endif
