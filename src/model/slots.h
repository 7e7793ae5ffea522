/* slots.h - internal to src/model: a pool of identical servers (walkers,
 * queue slots, outstanding-miss slots), each busy until a cycle, as a
 * sorted window of those cycles: the earliest free one in O(1), taking it
 * (the earliest leaves, the new time goes to its sorted place) by a
 * binary search and a move of the later times, none for a time at least
 * the latest (a serial trace's times only grow).
 *
 * Notes:
 * - Servers are interchangeable, so only the multiset of free times
 *   matters: the window gives exactly what a scan for the smallest would.
 * - Layout: 2n cycles; the window is t[head .. head + n); it slides one up
 *   a take and moves back to 0 when it would pass the end (n - 1 cycles
 *   moved every n takes).
 * - Measured (callgrind, random 64 MiB over 4 KiB pages with gem5's Vega
 *   TLBs, 64 walkers and 64 outstanding misses a level): the linear scans
 *   cost ~800 instructions an access, a binary min-heap ~215 (~95 a take);
 *   this window: see docs/performance.md ("Translation: instructions per
 *   access"). */
#ifndef GX_MODEL_SLOTS_H
#define GX_MODEL_SLOTS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct gx_slots {
    uint32_t n;    /* 0: no pool (unlimited) */
    uint32_t head; /* the window's first (earliest) cycle, <= n */
    double *t;     /* 2n: the window t[head .. head + n), ascending */
} gx_slots;

/* n servers free at cycle 0; 0 on success. */
static inline int gx_slots_init(gx_slots *s, uint32_t n)
{
    s->n = n;
    s->head = 0;
    s->t = n ? calloc(2 * (size_t)n, sizeof *s->t) : NULL;
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
    return s->t[s->head];
}

/* Take the earliest server; it is busy until cycle `until`. */
static inline void gx_slots_take(gx_slots *s, double until)
{
    const uint32_t m = s->n - 1; /* the others */
    uint32_t h = s->head + 1;
    if (h > s->n) { /* the window would pass the end: back to 0 */
        memmove(s->t, s->t + h, (size_t)m * sizeof *s->t);
        h = 0;
    }
    s->head = h;
    double *b = s->t + h;
    if (!m || !(b[m - 1] > until)) {
        b[m] = until;
        return;
    }
    uint32_t lo = 0, hi = m - 1; /* the first later than until, in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b[mid] > until)
            hi = mid;
        else
            lo = mid + 1;
    }
    memmove(b + lo + 1, b + lo, (size_t)(m - lo) * sizeof *b);
    b[lo] = until;
}

#endif
