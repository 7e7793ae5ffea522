/* slots.h - internal to src/model: a pool of identical servers (walkers,
 * queue slots, outstanding-miss slots), each busy until a cycle, as a
 * binary min-heap of those cycles: the earliest free one in O(1), taking it
 * in O(log n).
 *
 * Notes: servers are interchangeable, so only the multiset of free times
 * matters: the heap gives exactly what a scan for the smallest would.
 * Measured (callgrind, random 64 MiB over 4 KiB pages with gem5's Vega TLBs,
 * 64 walkers and 64 outstanding misses a level): the linear scans cost ~800
 * instructions an access. */
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

/* Take the earliest server; it is busy until cycle `until`. */
static inline void gx_slots_take(gx_slots *s, double until)
{
    uint32_t i = 0, n = s->n;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        double mv = until;
        if (l < n && s->t[l] < mv) {
            m = l;
            mv = s->t[l];
        }
        if (r < n && s->t[r] < mv)
            m = r;
        if (m == i)
            break;
        s->t[i] = s->t[m];
        i = m;
    }
    s->t[i] = until;
}

#endif
