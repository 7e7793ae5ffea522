/* fablock.c - fully associative LRU cache of page-table keys as runs of one
 * fetch block (see fablock.h).
 *
 * Notes:
 * - Why the segments keep exact LRU: a segment's keys are adjacent in
 *   recency order, least recent at its lowest bit. A new segment holds one
 *   key; a key joins the head segment only as its new most recent key (its
 *   bit above the segment's bits, nothing more recent in front of it); an
 *   eviction takes the least recent key of the least recent segment, its
 *   lowest bit; a touch takes a key out of its segment, which leaves the
 *   others adjacent and in order. Every operation is facache's on the key
 *   order the segments spell out.
 * - A walk's 15 neighbours into a full cache (gem5's neighbour PWC) cost
 *   15 bit evictions from the tail segment and one head segment built bit
 *   by bit, instead of 15 slot evictions and chainings (facache.c).
 *   Measured: see docs/performance.md ("Translation: instructions per
 *   access").
 * - A chained hash table from group to the segments of its bucket (at
 *   least TABLE_PER_ENTRY buckets per entry; segments <= keys <= entries);
 *   free segment slots on a stack. NIL ends lists and chains. */
#include "fablock.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define FIB 0x9e3779b97f4a7c15ULL
#define MIN_TABLE_BITS 4   /* at least 16 buckets */
#define TABLE_PER_ENTRY 4u /* buckets per entry, at least */
#define KEY_LOW_BITS 6     /* the page-table key's level and class (vmem/pagetable.c) */
#define MAX_GROUP_BITS 6   /* a segment's mask is 64 bits */

typedef struct seg {
    uint64_t group, mask;
    uint32_t prev, next; /* recency list: prev more recent */
    uint32_t chain;      /* next segment of the same bucket */
    uint32_t home;       /* the group's bucket */
    uint32_t keys;       /* bits in mask */
} seg;

struct gx_fablock {
    uint32_t entries, used, gbits;
    uint32_t head, tail; /* most / least recent segment */
    uint32_t shift, nbuckets, nfree;
    uint32_t *bucket; /* first segment of each chain */
    uint32_t *free;   /* free segment slots (a stack of nfree) */
    seg *segs;        /* entries slots */
};

gx_fablock *gx_fablock_new(uint32_t entries, uint32_t group_bits)
{
    if (!entries || entries > (UINT32_MAX >> 2) || group_bits > MAX_GROUP_BITS)
        return NULL;
    gx_fablock *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    uint32_t bits = MIN_TABLE_BITS;
    while ((1u << bits) < TABLE_PER_ENTRY * entries)
        bits++;
    c->entries = entries;
    c->gbits = group_bits;
    c->shift = 64 - bits;
    c->nbuckets = 1u << bits;
    c->bucket = malloc((size_t)c->nbuckets * sizeof *c->bucket);
    c->free = malloc((size_t)entries * sizeof *c->free);
    c->segs = calloc(entries, sizeof *c->segs);
    if (!c->bucket || !c->free || !c->segs) {
        gx_fablock_free(c);
        return NULL;
    }
    gx_fablock_flush(c);
    return c;
}

void gx_fablock_free(gx_fablock *c)
{
    if (!c)
        return;
    free(c->bucket);
    free(c->free);
    free(c->segs);
    free(c);
}

/* key -> (group, one-bit mask) */
static inline uint64_t group_of(const gx_fablock *c, uint64_t key)
{
    return (key >> (KEY_LOW_BITS + c->gbits)) << KEY_LOW_BITS | (key & ((1u << KEY_LOW_BITS) - 1));
}

static inline uint64_t bit_of(const gx_fablock *c, uint64_t key)
{
    return (uint64_t)1 << ((key >> KEY_LOW_BITS) & ((1u << c->gbits) - 1));
}

static inline uint32_t home(const gx_fablock *c, uint64_t group)
{
    uint64_t r = group >> KEY_LOW_BITS | group << (64 - KEY_LOW_BITS);
    return (uint32_t)((r * FIB) >> c->shift);
}

/* The segment holding (group, bit), or NIL. */
static inline uint32_t find(const gx_fablock *c, uint64_t group, uint64_t bit)
{
    uint32_t s = c->bucket[home(c, group)];
    while (s != NIL && !(c->segs[s].group == group && (c->segs[s].mask & bit)))
        s = c->segs[s].chain;
    return s;
}

/* A new segment of (group, mask of keys bits) at the head of the recency list. */
static inline void seg_new(gx_fablock *c, uint64_t group, uint64_t mask, uint32_t keys)
{
    uint32_t s = c->free[--c->nfree];
    seg *e = &c->segs[s];
    e->group = group;
    e->mask = mask;
    e->keys = keys;
    e->home = home(c, group);
    e->chain = c->bucket[e->home];
    c->bucket[e->home] = s;
    e->prev = NIL;
    e->next = c->head;
    if (c->head != NIL)
        c->segs[c->head].prev = s;
    else
        c->tail = s;
    c->head = s;
}

/* Segment s out of the recency list and its chain, its slot freed. */
static void seg_del(gx_fablock *c, uint32_t s)
{
    seg *e = &c->segs[s];
    if (e->prev != NIL)
        c->segs[e->prev].next = e->next;
    else
        c->head = e->next;
    if (e->next != NIL)
        c->segs[e->next].prev = e->prev;
    else
        c->tail = e->prev;
    uint32_t *p = &c->bucket[e->home];
    while (*p != s)
        p = &c->segs[*p].chain;
    *p = e->chain;
    c->free[c->nfree++] = s;
}

/* bit out of segment s (the segment goes when it empties). */
static inline void take_bit(gx_fablock *c, uint32_t s, uint64_t bit)
{
    c->segs[s].keys--;
    if (!(c->segs[s].mask &= ~bit))
        seg_del(c, s);
}

/* (group, bit) as the most recent key: into the head segment when it is
 * the group's and bit is above its bits, else a new segment. (bit may be a
 * run of keys keys in ascending order: a mask whose bits all lie above the
 * head segment's joins it the same way.) */
static inline void push_mru(gx_fablock *c, uint64_t group, uint64_t bit, uint32_t keys)
{
    const uint32_t h = c->head;
    if (h != NIL && c->segs[h].group == group && c->segs[h].mask < (bit & (0 - bit))) {
        c->segs[h].mask |= bit;
        c->segs[h].keys += keys;
    } else {
        seg_new(c, group, bit, keys);
    }
}

/* The present key (group, bit) in segment s becomes the most recent. */
static inline void touch(gx_fablock *c, uint32_t s, uint64_t group, uint64_t bit)
{
    if (s == c->head && (c->segs[s].mask ^ bit) < bit)
        return; /* the head segment's highest bit: the most recent key already */
    take_bit(c, s, bit);
    push_mru(c, group, bit, 1);
}

int gx_fablock_probe(gx_fablock *c, uint64_t key)
{
    const uint64_t g = group_of(c, key), b = bit_of(c, key);
    uint32_t s = find(c, g, b);
    if (s == NIL)
        return 0;
    touch(c, s, g, b);
    return 1;
}

static inline __attribute__((always_inline)) void insert_one(gx_fablock *c, uint64_t key)
{
    const uint64_t g = group_of(c, key), b = bit_of(c, key);
    uint32_t s = find(c, g, b);
    if (s != NIL) {
        touch(c, s, g, b);
        return;
    }
    if (c->used == c->entries) { /* the least recent key: the tail segment's lowest bit */
        const uint32_t t = c->tail;
        take_bit(c, t, c->segs[t].mask & (0 - c->segs[t].mask));
    } else {
        c->used++;
    }
    push_mru(c, g, b, 1);
}

void gx_fablock_insert(gx_fablock *c, uint64_t key)
{
    insert_one(c, key);
}

/* The batch's keys as one group's mask when they are of one group in
 * ascending order; 0 otherwise. */
static uint64_t batch_mask(const gx_fablock *c, const uint64_t *keys, uint32_t n)
{
    const uint64_t in_group = (((uint64_t)1 << c->gbits) - 1) << KEY_LOW_BITS;
    uint64_t m = bit_of(c, keys[0]);
    for (uint32_t k = 1; k < n; k++) {
        if (keys[k] <= keys[k - 1] || ((keys[k] ^ keys[0]) & ~in_group))
            return 0;
        m |= bit_of(c, keys[k]);
    }
    return m;
}

/* The keys of group g present now (its segments' masks). */
static uint64_t present_bits(const gx_fablock *c, uint64_t g)
{
    uint64_t m = 0;
    for (uint32_t s = c->bucket[home(c, g)]; s != NIL; s = c->segs[s].chain)
        if (c->segs[s].group == g)
            m |= c->segs[s].mask;
    return m;
}

/* The e least recent keys out (e <= used). */
static void evict_n(gx_fablock *c, uint32_t e)
{
    while (e) {
        const uint32_t t = c->tail;
        if (c->segs[t].keys <= e) { /* the whole segment */
            e -= c->segs[t].keys;
            seg_del(c, t);
            continue;
        }
        uint64_t m = c->segs[t].mask; /* e < its keys <= 64: its e lowest bits go */
        c->segs[t].keys -= e;
        while (e) { /* a run of adjacent bits at a time */
            const uint64_t low = m & (0 - m);
            const uint64_t run = (m ^ (m + low)) & m; /* the lowest run of bits */
            const uint64_t ones = run >> __builtin_ctzll(m); /* 2^len - 1 */
            if (ones >> (e - 1) & 1) { /* len >= e (e <= 63) */
                m &= ~((low << e) - 1);
                break;
            }
            m &= ~run;
            e -= (uint32_t)__builtin_ctzll(~ones); /* len < e */
        }
        c->segs[t].mask = m;
        break;
    }
}

/* n (<= entries) absent keys of one group g in ascending order (mask m):
 * insert_one of each evicts while full, so the used + n - entries least
 * recent keys go (old keys: n <= entries), and the keys become the most
 * recent in their order, one run (the same key order as one at a time). */
static void insert_absent_run(gx_fablock *c, uint64_t g, uint64_t m, uint32_t n)
{
    const uint32_t room = c->entries - c->used;
    if (n > room) {
        evict_n(c, n - room);
        c->used = c->entries;
    } else {
        c->used += n;
    }
    push_mru(c, g, m, n); /* the head segment's bits below m's lowest: m joins it */
}

/* A walk's neighbours (one fetch block in ascending order, none present:
 * the common case) as one run; anything else one key at a time. */
void gx_fablock_insert_keys(gx_fablock *c, const uint64_t *keys, uint32_t n)
{
    if (n && n <= c->entries) {
        const uint64_t m = batch_mask(c, keys, n), g = group_of(c, keys[0]);
        if (m && !(present_bits(c, g) & m)) {
            insert_absent_run(c, g, m, n);
            return;
        }
    }
    for (uint32_t k = 0; k < n; k++)
        insert_one(c, keys[k]);
}

void gx_fablock_insert_run(gx_fablock *c, uint64_t first, uint32_t n, uint32_t skip)
{
    const uint32_t nk = n - (skip < n);
    if (nk && nk <= c->entries && n <= 64) {
        const uint64_t g = group_of(c, first);
        const uint64_t last = first + ((uint64_t)(n - 1) << KEY_LOW_BITS);
        if (group_of(c, last) == g && last >= first) { /* one group, no wrap */
            const uint32_t b0 = (uint32_t)((first >> KEY_LOW_BITS) & ((1u << c->gbits) - 1));
            uint64_t m = (n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << b0;
            if (skip < n)
                m &= ~((uint64_t)1 << (b0 + skip));
            if (!(present_bits(c, g) & m)) {
                insert_absent_run(c, g, m, nk);
                return;
            }
        }
    }
    for (uint32_t j = 0; j < n; j++)
        if (j != skip)
            insert_one(c, first + ((uint64_t)j << KEY_LOW_BITS));
}

void gx_fablock_flush(gx_fablock *c)
{
    memset(c->bucket, 0xff, (size_t)c->nbuckets * sizeof *c->bucket); /* NIL everywhere */
    for (uint32_t i = 0; i < c->entries; i++)
        c->free[i] = c->entries - 1 - i;
    c->nfree = c->entries;
    c->used = 0;
    c->head = c->tail = NIL;
}

uint32_t gx_fablock_count(const gx_fablock *c)
{
    return c->used;
}
