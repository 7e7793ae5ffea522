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

/* The layout and the probe are here so that a TLB lookup inlines the
 * probe; the rest is salru.c's. NIL ends the recency lists and chains. */
#define GX_SALRU_NIL UINT32_MAX
#define GX_SALRU_FIB 0x9e3779b97f4a7c15ULL
#define GX_SALRU_SET_MIX 0xd6e8feb86659fd93ULL

typedef struct gx_salru_slot {
    uint64_t tag;
    uint32_t set, mask;
    uint32_t prev, next; /* the set's recency list */
    uint32_t chain;      /* next slot of the same bucket */
    uint32_t home;       /* the line's bucket (an eviction unchains without a hash) */
} gx_salru_slot;

typedef struct gx_salru_set {
    uint32_t head, tail, used;
} gx_salru_set;

typedef struct gx_salru {
    uint32_t sets, ways, shift, nbuckets;
    uint32_t *bucket; /* first slot of each chain, GX_SALRU_NIL: empty */
    gx_salru_slot *slots;      /* sets * ways */
    gx_salru_set *hdr;
} gx_salru;

/* The bucket of (set, tag). */
static inline uint32_t gx_salru_home(const gx_salru *c, uint32_t set, uint64_t tag)
{
    return (uint32_t)(((tag + set * GX_SALRU_SET_MIX) * GX_SALRU_FIB) >> c->shift);
}

/* The slot holding (set, tag), from its bucket b, or GX_SALRU_NIL. */
static inline uint32_t gx_salru_find(const gx_salru *c, uint32_t b, uint32_t set, uint64_t tag)
{
    uint32_t s = c->bucket[b];
    while (s != GX_SALRU_NIL && (c->slots[s].tag != tag || c->slots[s].set != set))
        s = c->slots[s].chain;
    return s;
}

static inline void gx_salru_unlink(gx_salru *c, gx_salru_set *h, uint32_t s)
{
    gx_salru_slot *e = &c->slots[s];
    if (e->prev != GX_SALRU_NIL)
        c->slots[e->prev].next = e->next;
    else
        h->head = e->next;
    if (e->next != GX_SALRU_NIL)
        c->slots[e->next].prev = e->prev;
    else
        h->tail = e->prev;
}

static inline void gx_salru_push_head(gx_salru *c, gx_salru_set *h, uint32_t s)
{
    gx_salru_slot *e = &c->slots[s];
    e->prev = GX_SALRU_NIL;
    e->next = h->head;
    if (h->head != GX_SALRU_NIL)
        c->slots[h->head].prev = s;
    else
        h->tail = s;
    h->head = s;
}

static inline void gx_salru_touch(gx_salru *c, gx_salru_set *h, uint32_t s)
{
    if (h->head == s)
        return;
    gx_salru_unlink(c, h, s);
    gx_salru_push_head(c, h, s);
}

/* NULL when out of memory or sets * ways is 0 or too large. */
gx_salru *gx_salru_new(uint32_t sets, uint32_t ways);
void gx_salru_free(gx_salru *c);
/* 1 when set holds tag with bit (a one-bit mask) set: the line becomes the
 * most recently used; 0 otherwise (no state change). */
static inline int gx_salru_probe(gx_salru *c, uint32_t set, uint64_t tag, uint32_t bit)
{
    uint32_t s = gx_salru_find(c, gx_salru_home(c, set, tag), set, tag);
    if (s == GX_SALRU_NIL || !(c->slots[s].mask & bit))
        return 0;
    gx_salru_touch(c, &c->hdr[set], s);
    return 1;
}

/* The valid mask of tag's line in set, 0 when absent; no state change. */
static inline uint32_t gx_salru_mask(const gx_salru *c, uint32_t set, uint64_t tag)
{
    uint32_t s = gx_salru_find(c, gx_salru_home(c, set, tag), set, tag);
    return s == GX_SALRU_NIL ? 0 : c->slots[s].mask;
}

/* OR mask into tag's line in set (allocating it, evicting the set's least
 * recently used line when full); the line becomes the most recently used. */
void gx_salru_insert(gx_salru *c, uint32_t set, uint64_t tag, uint32_t mask);
/* gx_salru_insert of a tag known absent from set (no look for it). */
void gx_salru_insert_absent(gx_salru *c, uint32_t set, uint64_t tag, uint32_t mask);

/* Take slot s's line out of its chain. */
static inline void gx_salru_unchain(gx_salru *c, uint32_t s)
{
    uint32_t *p = &c->bucket[c->slots[s].home];
    while (*p != s)
        p = &c->slots[*p].chain;
    *p = c->slots[s].chain;
}

/* The absent (set, tag) of bucket b (gx_salru_home) as set's most recent
 * line (a free way, else its least recent line's): gx_salru_insert_absent
 * with the bucket known, inline (a TLB fill after a missed probe). */
static inline void gx_salru_add_absent(gx_salru *c, uint32_t b, uint32_t set, uint64_t tag,
                                       uint32_t mask)
{
    gx_salru_set *h = &c->hdr[set];
    uint32_t s;
    if (h->used < c->ways) {
        s = set * c->ways + h->used++;
        gx_salru_push_head(c, h, s);
    } else { /* the least recent line moves to the head (the list's rotation) */
        s = h->tail;
        gx_salru_unchain(c, s);
        if (s != h->head) { /* more than one way */
            gx_salru_slot *v = &c->slots[s];
            c->slots[v->prev].next = GX_SALRU_NIL;
            h->tail = v->prev;
            v->prev = GX_SALRU_NIL;
            v->next = h->head;
            c->slots[h->head].prev = s;
            h->head = s;
        }
    }
    gx_salru_slot *e = &c->slots[s];
    e->tag = tag;
    e->set = set;
    e->mask = mask;
    e->home = b;
    e->chain = c->bucket[b];
    c->bucket[b] = s;
}
void gx_salru_flush(gx_salru *c);

#endif
