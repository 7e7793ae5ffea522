/* facache.h - a fully associative LRU cache of 64-bit keys for any number
 * of entries (the walker's page-walk caches when ways = entries and the
 * policy is lru), private to src/model/.
 *
 * Notes:
 * - Exactly the hit/miss stream of a one-set gx_cache with "lru" and
 *   entries ways: a probe that hits makes the key the most recently used,
 *   a miss changes nothing; an insert of a present key is a touch; an
 *   insert into a full cache evicts the least recently used key (the cache
 *   fills its free ways before it evicts, so the victim is always the
 *   least recently used valid line); flush empties it.
 * - Layout: a chained hash table from key to slot (at least four buckets
 *   per entry) and an intrusive doubly linked list of the slots in recency
 *   order. Probe, touch, insert and evict are O(1) (expected).
 * - gx_cache stops at 64 ways (its way masks are uint64_t); this one has no
 *   such bound (gem5's neighbour PWC: 256 entries, fully associative). */
#ifndef GX_FACACHE_H
#define GX_FACACHE_H

#include <stdint.h>

typedef struct gx_facache gx_facache;

/* NULL when out of memory or entries is 0. */
gx_facache *gx_facache_new(uint32_t entries);
void gx_facache_free(gx_facache *c);
/* 1 on a hit (the key becomes the most recently used), 0 on a miss (no
 * state change). */
int gx_facache_probe(gx_facache *c, uint64_t key);
/* Touch the key when present, else insert it as the most recently used,
 * evicting the least recently used key when full. */
void gx_facache_insert(gx_facache *c, uint64_t key);
/* gx_facache_insert of keys[0], keys[1], .. keys[n - 1], in that order. */
void gx_facache_insert_keys(gx_facache *c, const uint64_t *keys, uint32_t n);
void gx_facache_flush(gx_facache *c);
/* Keys held now. */
uint32_t gx_facache_count(const gx_facache *c);

#endif
