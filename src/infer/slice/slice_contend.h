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
 * - grow: lines of other pages joined; the lines no class slows are
 *   partitioned again (the same rules) into new classes appended to the
 *   old ones, and the old classes' first lines must not be slowed by a new
 *   one (a new class that is an old slice missed by the join shows there).
 * - label (sc_labeller): a labelling callback over a partition for the
 *   slice predictor (slicepredict.h): labels already known (memoised by
 *   offset) are answered at once, the rest joined in one call.
 *
 * Cost: 2 + 2 x classes launches of n probes for a partition (the check as
 * much again), 2 + 2 x classes for a join (and so for a labelling call that
 * misses the memo); a grow adds a partition of the new lines and a join of
 * the old first lines to the new classes; each probe reps + 1 loads (a
 * launch is one primitive call: the target's call counter counts them). */
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

#define SC_IN_TWO (-2) /* a joined line that two classes slow */

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
 * first line slows line i, -1 for none, SC_IN_TWO for two or more; *none
 * and *twice count the lines in no class and in two. */
int sc_join_lines(gx_target *t, const sc_opts *o, const sc_partition *p, const uint64_t *lines,
                  size_t n, int *cls, size_t *none, size_t *twice, gx_msg *msg);

/* The n lines joined to p's classes, and those in none grouped into new
 * classes appended to p (cls[] as sc_join_lines, new classes numbered from
 * the old count on); *added = the new classes, *twice = lines in two.
 * GX_EUNSURE (message set) when a new class does not come back from its
 * second member or slows an old class's first line. */
int sc_grow_lines(gx_target *t, const sc_opts *o, sc_partition *p, const uint64_t *lines,
                  size_t n, int *cls, uint32_t *added, size_t *twice, gx_msg *msg);

/* ---- the labeller (slice_contend_label.c) ---- */
typedef struct sc_labeller sc_labeller;

/* A labeller over p's classes (copied), measuring on t with o (copied; its
 * launch counter stays the caller's). NULL when out of memory. */
sc_labeller *sc_labeller_new(gx_target *t, const sc_opts *o, const sc_partition *p);
void sc_labeller_free(sc_labeller *l);
/* Remember labels measured elsewhere (cls[i] < 0: not remembered). */
int sc_labeller_put(sc_labeller *l, const uint64_t *lines, const int *cls, size_t n);
/* The labelling callback (gx_slicepred_labeller; user = the labeller):
 * labels[i] = the class of the line at arena offset offs[i], -1 when no
 * class or two slow it. One join for the lines not remembered. */
int sc_labeller_label(void *user, const uint64_t *offs, size_t n, int *labels, gx_msg *msg);
/* Lines joined by the labeller so far (its own measurements). */
uint64_t sc_labeller_joined(const sc_labeller *l);

/* lines[i] = page_off + i * line_bytes for i < n (a whole page). */
void sc_page_lines(uint64_t page_off, uint32_t line_bytes, size_t n, uint64_t *lines);

#endif
