/* setclass.h - the congruence classes (cache sets) of lines known to share
 * one L2 slice, from timing alone: minimal eviction sets and cyclic runs
 * through gx_target_seq (setclass.c's opening note says how).
 *
 * Assumptions: the lines all lie in one slice (found by contention); a set
 * holds `ways` lines from the measuring SM's view (a near-far L2 keeps its
 * near level's victims elsewhere: a reload past the near level counts as a
 * miss); LRU-like replacement, so a cyclic run over more than `ways` lines
 * of one set misses on each of them. When every line ends in a class, the
 * classes are the slice's sets that the lines reach. */
#ifndef GX_SETCLASS_H
#define GX_SETCLASS_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/rng.h"
#include "gpuxray/target.h"

typedef struct gx_setclass_result {
    size_t classes;    /* classes found (ids 0..classes-1, in the order found) */
    size_t unassigned; /* lines in no class */
    size_t unsure;     /* tries given up (their lines back among the unassigned) */
    size_t min_size, max_size; /* lines a class */
    double near_cycles, miss_cycles, threshold; /* a reload: hit, after every line; split */
    uint64_t launches; /* target calls made */
} gx_setclass_result;

/* Partitions lines[0..n) into at most max_classes classes from SM sm:
 * class_of[i] = the class of lines[i], or -1. GX_EUNSURE (message set) when
 * no reload misses after all the lines (no set overflows: too few lines);
 * target errors as they come. */
int gx_setclass_partition(gx_target *t, const uint64_t *lines, size_t n, uint32_t sm,
                          uint32_t ways, size_t max_classes, gx_rng *r, int32_t *class_of,
                          gx_setclass_result *res, gx_msg *msg);

#endif
