/* facache.c - fully associative LRU cache of 64-bit keys (see facache.h).
 *
 * Notes:
 * - A chained hash table: a bucket holds the first slot of its chain, a
 *   slot the next one; at least TABLE_PER_ENTRY buckets per entry, so that
 *   a chain holds about one key. Deleting the evicted key unlinks it from
 *   its (short) chain: no tombstones, nothing moves. Measured (callgrind,
 *   bench_translation --only 4k, 15 neighbour insertions a walk into
 *   gem5's 256-entry neighbour PWC): ~200 instructions per insertion with
 *   linear probing at half load, ~110 with a quarter load and stored homes,
 *   see docs/performance.md for the chained figure.
 * - The bucket of a key is the top bits of its rotation times 2^64/phi
 *   (Fibonacci hashing); page-table keys keep their level and class in the
 *   low KEY_LOW_BITS bits, rotated away so that neighbouring entries spread.
 * - Slots are handed out in order until the cache is full; then the least
 *   recently used slot is reused (its key leaves the table).
 * - NIL ends the recency list (head: most recently used) and the chains. */
#include "facache.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define FIB 0x9e3779b97f4a7c15ULL
#define MIN_TABLE_BITS 4   /* at least 16 buckets */
#define TABLE_PER_ENTRY 4u /* buckets per entry, at least: a quarter load, chains of ~1 key */
#define KEY_LOW_BITS 6     /* the page-table key's level and class (vmem/pagetable.c) */

typedef struct slot {
    uint64_t key;
    uint32_t prev, next; /* recency list */
    uint32_t chain;      /* next slot of the same bucket */
    uint32_t home;       /* the key's bucket (an eviction unchains without a hash) */
} slot;

struct gx_facache {
    uint32_t entries, used;
    uint32_t head, tail;
    uint32_t shift, nbuckets;
    uint32_t *bucket; /* first slot of each chain, NIL: empty */
    slot *slots;
};

gx_facache *gx_facache_new(uint32_t entries)
{
    if (!entries || entries > (UINT32_MAX >> 2))
        return NULL;
    gx_facache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    uint32_t bits = MIN_TABLE_BITS;
    while ((1u << bits) < TABLE_PER_ENTRY * entries)
        bits++;
    c->entries = entries;
    c->shift = 64 - bits;
    c->nbuckets = 1u << bits;
    c->bucket = malloc((size_t)c->nbuckets * sizeof *c->bucket);
    c->slots = calloc(entries, sizeof *c->slots);
    if (!c->bucket || !c->slots) {
        gx_facache_free(c);
        return NULL;
    }
    gx_facache_flush(c);
    return c;
}

void gx_facache_free(gx_facache *c)
{
    if (!c)
        return;
    free(c->bucket);
    free(c->slots);
    free(c);
}

static inline uint32_t home(const gx_facache *c, uint64_t key)
{
    uint64_t r = key >> KEY_LOW_BITS | key << (64 - KEY_LOW_BITS);
    return (uint32_t)((r * FIB) >> c->shift);
}

/* The slot holding key (from bucket b), or NIL. */
static inline uint32_t find(const gx_facache *c, uint32_t b, uint64_t key)
{
    uint32_t s = c->bucket[b];
    while (s != NIL && c->slots[s].key != key)
        s = c->slots[s].chain;
    return s;
}

static inline void unlink_slot(gx_facache *c, uint32_t s)
{
    slot *e = &c->slots[s];
    if (e->prev != NIL)
        c->slots[e->prev].next = e->next;
    else
        c->head = e->next;
    if (e->next != NIL)
        c->slots[e->next].prev = e->prev;
    else
        c->tail = e->prev;
}

static inline void push_head(gx_facache *c, uint32_t s)
{
    slot *e = &c->slots[s];
    e->prev = NIL;
    e->next = c->head;
    if (c->head != NIL)
        c->slots[c->head].prev = s;
    else
        c->tail = s;
    c->head = s;
}

static inline void touch(gx_facache *c, uint32_t s)
{
    if (c->head == s)
        return;
    unlink_slot(c, s);
    push_head(c, s);
}

/* Take slot s's key out of its chain. */
static inline void unchain(gx_facache *c, uint32_t s)
{
    uint32_t *p = &c->bucket[c->slots[s].home];
    while (*p != s)
        p = &c->slots[*p].chain;
    *p = c->slots[s].chain;
}

int gx_facache_probe(gx_facache *c, uint64_t key)
{
    uint32_t s = find(c, home(c, key), key);
    if (s == NIL)
        return 0;
    touch(c, s);
    return 1;
}

static inline __attribute__((always_inline)) void insert_one(gx_facache *c, uint64_t key)
{
    uint32_t b = home(c, key), s = find(c, b, key);
    if (s != NIL) {
        touch(c, s);
        return;
    }
    if (c->used < c->entries) {
        s = c->used++;
    } else {
        s = c->tail;
        unlink_slot(c, s);
        unchain(c, s);
    }
    c->slots[s].key = key;
    c->slots[s].home = b;
    c->slots[s].chain = c->bucket[b];
    c->bucket[b] = s;
    push_head(c, s);
}

void gx_facache_insert(gx_facache *c, uint64_t key)
{
    insert_one(c, key);
}

/* The walker's neighbour insertions (15 a walk with gem5's 128-byte fetch)
 * in one call: the loop inlines insert_one. */
void gx_facache_insert_keys(gx_facache *c, const uint64_t *keys, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        insert_one(c, keys[k]);
}

void gx_facache_flush(gx_facache *c)
{
    memset(c->bucket, 0xff, (size_t)c->nbuckets * sizeof *c->bucket); /* NIL everywhere */
    c->used = 0;
    c->head = c->tail = NIL;
}

uint32_t gx_facache_count(const gx_facache *c)
{
    return c->used;
}
