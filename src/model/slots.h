/* slots.h - internal to src/model: a pool of identical servers (walkers,
 * queue slots, outstanding-miss slots), each busy until a cycle, as a
 * binary min-heap of those cycles: the earliest free one in O(1), taking it
 * in O(log n).
 *
 * Notes: servers are interchangeable, so only the multiset of free times
 * matters: the heap gives exactly what a scan for the smallest would.
 * Measured (callgrind, random 64 MiB over 4 KiB pages with gem5's Vega TLBs,
 * 64 walkers and 64 outstanding misses a level): the linear scans cost ~800
 * instructions an access.
 * - Times are finite (cycles): the heap's order holds for any layout. */
#ifndef GX_MODEL_SLOTS_H
#define GX_MODEL_SLOTS_H

#include <stdint.h>
#include <stdlib.h>

typedef struct gx_slots {
    uint32_t n; /* 0: no pool (unlimited) */
    double *t;  /* n free-at cycles, a min-heap */
} gx_slots;

/* n servers free at cycle 0; 0 on success. */
static inline int gx_slots_init(gx_slots *s, uint32_t n)
{
    s->n = n;
    s->t = n ? calloc(n, sizeof *s->t) : NULL;
    return n && !s->t ? -1 : 0;
}

static inline void gx_slots_free(gx_slots *s)
{
    free(s->t);
    s->t = NULL;
    s->n = 0;
}

/* The cycle the earliest server frees. */
static inline double gx_slots_earliest(const gx_slots *s)
{
    return s->t[0];
}

/* Take the earliest server; it is busy until cycle `until`. Bottom-up
 * (Floyd): the hole left by the earliest goes down along the smaller
 * children to a leaf (one comparison a level), then `until` rises from
 * there to its place (a late `until`, the common case, rises little); the
 * heap's layout may differ from a top-down sift, never its multiset.
 * Measured: see docs/performance.md ("Translation: instructions per
 * access"). */
static inline void gx_slots_take(gx_slots *s, double until)
{
    double *t = s->t;
    uint32_t i = 0, n = s->n;
    for (uint32_t l = 1; l < n; l = 2 * i + 1) {
        uint32_t m = l + 1 < n && t[l + 1] < t[l] ? l + 1 : l;
        t[i] = t[m];
        i = m;
    }
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!(t[p] > until))
            break;
        t[i] = t[p];
        i = p;
    }
    t[i] = until;
}

#endif
