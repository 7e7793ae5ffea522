/* fablock.h - a fully associative LRU cache of page-table keys that keeps
 * its recency order as runs of keys of one fetch block (the walker's
 * neighbour PWC when ways = entries and the policy is lru), private to
 * src/model/.
 *
 * Models: exactly gx_facache's hits, misses and state (a probe that hits
 * makes the key the most recently used, a miss changes nothing; an insert
 * of a present key is a touch; an insert into a full cache evicts the least
 * recently used key; flush empties it), for any key sequence.
 *
 * Notes:
 * - A key's group is the key with its index's low group_bits bits taken
 *   out (the aligned block of 2^group_bits entries of one table), its bit
 *   those bits. The recency list holds segments: a group and a mask of
 *   bits, whose keys are adjacent in recency order, least recent at the
 *   lowest bit. A walk's neighbours (one block in ascending order) become
 *   ONE segment; an eviction clears the tail segment's lowest bit; a touch
 *   clears the key's bit in its segment (the rest stays adjacent) and puts
 *   it at the head (into the head segment when that is the key's group
 *   and the key's bit is above its bits).
 * - Segments are found by group through a chained hash table (at least
 *   four buckets per entry); at most one segment per key exists. */
#ifndef GX_FABLOCK_H
#define GX_FABLOCK_H

#include <stdint.h>

typedef struct gx_fablock gx_fablock;

/* NULL when out of memory, entries is 0 or group_bits is above 6. */
gx_fablock *gx_fablock_new(uint32_t entries, uint32_t group_bits);
void gx_fablock_free(gx_fablock *c);
/* 1 on a hit (the key becomes the most recently used), 0 on a miss. */
int gx_fablock_probe(gx_fablock *c, uint64_t key);
/* Touch the key when present, else insert it as the most recently used,
 * evicting the least recently used key when full. */
void gx_fablock_insert(gx_fablock *c, uint64_t key);
/* gx_fablock_insert of keys[0], keys[1], .. keys[n - 1], in that order. */
void gx_fablock_insert_keys(gx_fablock *c, const uint64_t *keys, uint32_t n);
/* gx_fablock_insert_keys of the keys first + (j << 6), j = 0 .. n - 1 in
 * that order, except j = skip (skip >= n: none skipped): a fetch block's
 * entries (the page-table key's index above its low 6 bits). */
void gx_fablock_insert_run(gx_fablock *c, uint64_t first, uint32_t n, uint32_t skip);
void gx_fablock_flush(gx_fablock *c);
/* Keys held now. */
uint32_t gx_fablock_count(const gx_fablock *c);

#endif
