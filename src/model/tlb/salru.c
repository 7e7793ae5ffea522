/* salru.c - set-associative true-LRU cache of tags with valid masks (see
 * salru.h).
 *
 * Notes:
 * - A chained hash table: a bucket holds the first slot of its chain, a
 *   slot the next one; at least TABLE_PER_LINE buckets per line, so that
 *   a chain holds about one line. An evicted line is unlinked from its
 *   (short) chain: no tombstones, nothing moves.
 * - The bucket of (set, tag) is the top bits of (tag + set * SET_MIX)
 *   times 2^64/phi (Fibonacci hashing, gx_salru_home).
 * - A set hands out its slots in order until full; then its least
 *   recently used slot is reused (its line leaves the table).
 * - NIL ends the recency lists (head: most recently used) and the chains. */
#include "salru.h"

#include <stdlib.h>
#include <string.h>

#define MIN_TABLE_BITS 4  /* at least 16 buckets */
#define TABLE_PER_LINE 4u /* buckets per line, at least: chains of ~1 line */

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

void gx_salru_insert(gx_salru *c, uint32_t set, uint64_t tag, uint32_t mask)
{
    uint32_t b = gx_salru_home(c, set, tag), s = gx_salru_find(c, b, set, tag);
    if (s != GX_SALRU_NIL) {
        c->slots[s].mask |= mask;
        gx_salru_touch(c, &c->hdr[set], s);
        return;
    }
    gx_salru_add_absent(c, b, set, tag, mask);
}

void gx_salru_insert_absent(gx_salru *c, uint32_t set, uint64_t tag, uint32_t mask)
{
    gx_salru_add_absent(c, gx_salru_home(c, set, tag), set, tag, mask);
}

void gx_salru_flush(gx_salru *c)
{
    memset(c->bucket, 0xff, (size_t)c->nbuckets * sizeof *c->bucket); /* NIL everywhere */
    for (uint32_t i = 0; i < c->sets; i++)
        c->hdr[i] = (gx_salru_set){GX_SALRU_NIL, GX_SALRU_NIL, 0};
}
