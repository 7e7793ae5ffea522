/* salru.c - set-associative true-LRU cache of tags with valid masks (see
 * salru.h).
 *
 * Notes:
 * - A chained hash table: a bucket holds the first slot of its chain, a
 *   slot the next one; at least TABLE_PER_LINE buckets per line, so that a
 *   chain holds about one line. An evicted line is unlinked from its
 *   (short) chain: no tombstones, nothing moves.
 * - The bucket of (set, tag) is the top bits of (tag + set * SET_MIX)
 *   times 2^64/phi (Fibonacci hashing).
 * - A set hands out its slots in order until full; then its least
 *   recently used slot is reused (its line leaves the table).
 * - NIL ends the recency lists (head: most recently used) and the chains. */
#include "salru.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define FIB 0x9e3779b97f4a7c15ULL
#define SET_MIX 0xd6e8feb86659fd93ULL
#define MIN_TABLE_BITS 4  /* at least 16 buckets */
#define TABLE_PER_LINE 4u /* buckets per line, at least: chains of ~1 line */

typedef struct slot {
    uint64_t tag;
    uint32_t set, mask;
    uint32_t prev, next; /* the set's recency list */
    uint32_t chain;      /* next slot of the same bucket */
} slot;

typedef struct set_hdr {
    uint32_t head, tail, used;
} set_hdr;

struct gx_salru {
    uint32_t sets, ways, shift, nbuckets;
    uint32_t *bucket; /* first slot of each chain, NIL: empty */
    slot *slots;      /* sets * ways */
    set_hdr *hdr;
};

gx_salru *gx_salru_new(uint32_t sets, uint32_t ways)
{
    uint64_t lines = (uint64_t)sets * ways;
    if (!lines || lines > (UINT32_MAX >> 3))
        return NULL;
    gx_salru *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    uint32_t bits = MIN_TABLE_BITS;
    while ((1ull << bits) < TABLE_PER_LINE * lines)
        bits++;
    c->sets = sets;
    c->ways = ways;
    c->shift = 64 - bits;
    c->nbuckets = 1u << bits;
    c->bucket = malloc((size_t)c->nbuckets * sizeof *c->bucket);
    c->slots = calloc((size_t)lines, sizeof *c->slots);
    c->hdr = malloc((size_t)sets * sizeof *c->hdr);
    if (!c->bucket || !c->slots || !c->hdr) {
        gx_salru_free(c);
        return NULL;
    }
    gx_salru_flush(c);
    return c;
}

void gx_salru_free(gx_salru *c)
{
    if (!c)
        return;
    free(c->bucket);
    free(c->slots);
    free(c->hdr);
    free(c);
}

static inline uint32_t home(const gx_salru *c, uint32_t set, uint64_t tag)
{
    return (uint32_t)(((tag + set * SET_MIX) * FIB) >> c->shift);
}

/* The slot holding (set, tag), from its bucket b, or NIL. */
static inline uint32_t find(const gx_salru *c, uint32_t b, uint32_t set, uint64_t tag)
{
    uint32_t s = c->bucket[b];
    while (s != NIL && (c->slots[s].tag != tag || c->slots[s].set != set))
        s = c->slots[s].chain;
    return s;
}

static inline void unlink_slot(gx_salru *c, set_hdr *h, uint32_t s)
{
    slot *e = &c->slots[s];
    if (e->prev != NIL)
        c->slots[e->prev].next = e->next;
    else
        h->head = e->next;
    if (e->next != NIL)
        c->slots[e->next].prev = e->prev;
    else
        h->tail = e->prev;
}

static inline void push_head(gx_salru *c, set_hdr *h, uint32_t s)
{
    slot *e = &c->slots[s];
    e->prev = NIL;
    e->next = h->head;
    if (h->head != NIL)
        c->slots[h->head].prev = s;
    else
        h->tail = s;
    h->head = s;
}

static inline void touch(gx_salru *c, set_hdr *h, uint32_t s)
{
    if (h->head == s)
        return;
    unlink_slot(c, h, s);
    push_head(c, h, s);
}

/* Take slot s's line out of its chain. */
static inline void unchain(gx_salru *c, uint32_t s)
{
    uint32_t *p = &c->bucket[home(c, c->slots[s].set, c->slots[s].tag)];
    while (*p != s)
        p = &c->slots[*p].chain;
    *p = c->slots[s].chain;
}

int gx_salru_probe(gx_salru *c, uint32_t set, uint64_t tag, uint32_t bit)
{
    uint32_t s = find(c, home(c, set, tag), set, tag);
    if (s == NIL || !(c->slots[s].mask & bit))
        return 0;
    touch(c, &c->hdr[set], s);
    return 1;
}

void gx_salru_insert(gx_salru *c, uint32_t set, uint64_t tag, uint32_t mask)
{
    uint32_t b = home(c, set, tag), s = find(c, b, set, tag);
    set_hdr *h = &c->hdr[set];
    if (s != NIL) {
        c->slots[s].mask |= mask;
        touch(c, h, s);
        return;
    }
    if (h->used < c->ways) {
        s = set * c->ways + h->used++;
    } else {
        s = h->tail;
        unlink_slot(c, h, s);
        unchain(c, s);
    }
    slot *e = &c->slots[s];
    e->tag = tag;
    e->set = set;
    e->mask = mask;
    e->chain = c->bucket[b];
    c->bucket[b] = s;
    push_head(c, h, s);
}

void gx_salru_flush(gx_salru *c)
{
    memset(c->bucket, 0xff, (size_t)c->nbuckets * sizeof *c->bucket); /* NIL everywhere */
    for (uint32_t i = 0; i < c->sets; i++)
        c->hdr[i] = (set_hdr){NIL, NIL, 0};
}
