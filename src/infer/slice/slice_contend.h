/* slice_contend.h - slice classes from contention alone (discovery stage 5,
 * internal; bench/contend_classes): the lines of a page that one hammered
 * line slows are the lines of its L2 slice (as the measuring SM sees it),
 * whatever their distance from the SMs, where latency fingerprints merge
 * slices that sit at the same distance from every SM.
 *
 * Method (gx_target_contend only):
 * - baseline: every line timed with no hammering, twice; the smaller value
 *   (one timer outlier cannot fake a slowdown);
 * - greedy partition: hammer the lowest line not yet in a class; the lines
 *   it slows in two launches by more than half its own slowdown join its
 *   class (the hammered line's own slowdown is the scale: no threshold in
 *   cycles); repeat until every line is in a class;
 * - check: every class hammered again from its second member over every
 *   line of the page must come back exactly;
 * - join: a line of another page joins the class whose first member slows
 *   it (the same rule); a line no class slows belongs to a slice absent from
 *   the first page.
 * A hammered line that slows itself by less than SC_MIN_SIGNAL_SPREADS
 * times the baseline's repeat noise (the spread of the two baselines'
 * differences) shows no contention: GX_EUNSURE.
 *
 * Cost: 2 + 2 x classes launches of n probes for a partition (the check as
 * much again), 2 + 2 x classes for a join; each probe reps + 1 loads. */
#ifndef GPUXRAY_INFER_SLICE_CONTEND_H
#define GPUXRAY_INFER_SLICE_CONTEND_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/target.h"

#define SC_MIN_SIGNAL_SPREADS 10.0 /* a slowdown below this many baseline spreads is noise */
#define SC_MAX_CLASSES 4096u

typedef struct sc_opts {
    uint32_t line_bytes; /* lines are line_bytes apart */
    uint32_t sm;         /* the measuring SM */
    uint32_t warps;      /* hammering warps an SM (1..GX_CONTEND_MAX_WARPS) */
    uint32_t reps;       /* timed loads a probe (1..GX_CONTEND_MAX_REPS) */
} sc_opts;

typedef struct sc_partition {
    uint32_t classes;
    uint64_t first[SC_MAX_CLASSES]; /* arena offset of each class's first line */
    double first_base[SC_MAX_CLASSES]; /* its unhammered cycles (the join's reference) */
    uint32_t checked, agreed;       /* classes checked from a second member, of them exact */
    size_t smallest, largest;       /* lines in the smallest / largest class */
    double slowdown_min;            /* the least slowdown of a member (cycles) */
    double other_max;               /* the most slowdown of a line outside the class */
} sc_partition;

/* Classes of the n lines at arena offsets lines[] (a page's, or a random
 * sample of them): cls[i] in 0..p->classes-1. GX_EUNSURE (message set)
 * when no contention shows or a class does not come back exactly from its
 * second member. */
int sc_partition_lines(gx_target *t, const sc_opts *o, const uint64_t *lines, size_t n,
                       int *cls, sc_partition *p, gx_msg *msg);

/* The n lines at lines[] joined to p's classes: cls[i] = the class whose
 * first line slows line i, -1 for none; *none and *twice count the lines
 * in no class and in two. */
int sc_join_lines(gx_target *t, const sc_opts *o, const sc_partition *p, const uint64_t *lines,
                  size_t n, int *cls, size_t *none, size_t *twice, gx_msg *msg);

/* lines[i] = page_off + i * line_bytes for i < n (a whole page). */
void sc_page_lines(uint64_t page_off, uint32_t line_bytes, size_t n, uint64_t *lines);

#endif
