/* facache.c - fully associative LRU cache of 64-bit keys (see facache.h).
 *
 * Notes:
 * - Table cells hold (key, slot + 1); slot + 1 = 0 marks an empty cell.
 *   The home cell of a key is the top bits of key * 2^64/phi (Fibonacci
 *   hashing: consecutive PTE keys spread over the table).
 * - Slots are handed out in order until the cache is full; then the
 *   least recently used slot is reused (its key leaves the table).
 * - NIL ends the recency list (head: most recently used). */
#include "facache.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define FIB 0x9e3779b97f4a7c15ULL
#define MIN_TABLE_BITS 4 /* at least 16 cells */
/* Cells per entry, at least: a quarter full at most, so that the runs a
 * probe and a deletion walk stay short (measured: see docs/performance.md,
 * "Translation: instructions per access"). */
#define TABLE_PER_ENTRY 4u

typedef struct cell {
    uint64_t key;
    uint32_t slot1; /* slot + 1; 0: empty */
    uint32_t home;  /* the key's home cell (deletion reads it for every cell it passes) */
} cell;

typedef struct slot {
    uint32_t cell; /* where its key is in the table (kept up to date by deletion) */
    uint32_t prev, next;
} slot;

struct gx_facache {
    uint32_t entries, used;
    uint32_t head, tail;
    uint32_t shift, mask; /* table: 1 << (64 - shift) cells */
    cell *table;
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
    c->mask = (1u << bits) - 1;
    c->table = calloc((size_t)1 << bits, sizeof *c->table);
    c->slots = calloc(entries, sizeof *c->slots);
    if (!c->table || !c->slots) {
        gx_facache_free(c);
        return NULL;
    }
    c->head = c->tail = NIL;
    return c;
}

void gx_facache_free(gx_facache *c)
{
    if (!c)
        return;
    free(c->table);
    free(c->slots);
    free(c);
}

/* Keys of neighbouring PTEs differ in the bits from KEY_LOW_BITS up (the
 * page-table keys put the level and class below): rotated down first, so
 * that consecutive entries take cells 2^64/phi apart. A plain key * FIB
 * clustered them (measured: ~17 cells per probe at half load, ~1 rotated). */
#define KEY_LOW_BITS 6
static uint32_t home(const gx_facache *c, uint64_t key)
{
    uint64_t r = key >> KEY_LOW_BITS | key << (64 - KEY_LOW_BITS);
    return (uint32_t)((r * FIB) >> c->shift);
}

/* The cell holding key, or the empty cell where it would go. */
static uint32_t find_cell(const gx_facache *c, uint64_t key)
{
    uint32_t i = home(c, key);
    while (c->table[i].slot1 && c->table[i].key != key)
        i = (i + 1) & c->mask;
    return i;
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

/* Empty cell i and shift back the cells of its run that may move into it
 * (linear probing's deletion: every key stays reachable from its home). */
static void delete_cell(gx_facache *c, uint32_t i)
{
    uint32_t j = i;
    for (;;) {
        c->table[i].slot1 = 0;
        for (;;) {
            j = (j + 1) & c->mask;
            if (!c->table[j].slot1)
                return;
            uint32_t h = c->table[j].home;
            /* j's key may fill i when its home is not in the cyclic range (i, j] */
            if (i <= j ? (i >= h || h > j) : (i >= h && h > j))
                break;
        }
        c->table[i] = c->table[j];
        c->slots[c->table[i].slot1 - 1].cell = i;
        i = j;
    }
}

int gx_facache_probe(gx_facache *c, uint64_t key)
{
    const cell *e = &c->table[find_cell(c, key)];
    if (!e->slot1)
        return 0;
    touch(c, e->slot1 - 1);
    return 1;
}

static inline void insert_one(gx_facache *c, uint64_t key)
{
    uint32_t h = home(c, key), i = h;
    while (c->table[i].slot1 && c->table[i].key != key)
        i = (i + 1) & c->mask;
    if (c->table[i].slot1) {
        touch(c, c->table[i].slot1 - 1);
        return;
    }
    uint32_t s;
    if (c->used < c->entries) {
        s = c->used++;
    } else {
        s = c->tail;
        unlink_slot(c, s);
        delete_cell(c, c->slots[s].cell);
        for (i = h; c->table[i].slot1; i = (i + 1) & c->mask) /* the shift may move the run */
            ;
    }
    c->table[i].key = key;
    c->table[i].slot1 = s + 1;
    c->table[i].home = h;
    c->slots[s].cell = i;
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
    memset(c->table, 0, ((size_t)c->mask + 1) * sizeof *c->table);
    c->used = 0;
    c->head = c->tail = NIL;
}

uint32_t gx_facache_count(const gx_facache *c)
{
    return c->used;
}
