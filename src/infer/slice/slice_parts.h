/* slice_parts.h - partitions of a uniform L2 from the slice classes'
 * fingerprints (discovery stage 5, internal).
 *
 * Models: on a uniform L2 split into P partitions, an SM reaches the slices
 * of its own partition directly and the others one crossbar hop away, so
 * its latency to a slice is base(SM) + skew(SM, slice) + step * [the
 * slice's partition is not the SM's]. The classes' fingerprint centers
 * (classes x SM slots) then carry a block pattern: the classes fall into P
 * equal groups, the SM slots into P "sides", and from each side one group
 * is fast and the others slow.
 *
 * Method, for P = 4, then 2 (the largest that fits wins):
 * - group the classes: P equal groups of the centered fingerprints
 *   (k-means, several seeded restarts; one class per group when classes ==
 *   P); unequal groups reject P;
 * - the side of each SM slot is the group with the lowest mean there; for
 *   P = 4 the fastest group must stand out from the runner-up more than the
 *   runner-up from the third (two fast groups: a partition was split);
 * - P is accepted when the cheapest split of the slots (in SM id order) into
 *   P contiguous runs of fair length (half to 1.5 x slots / P), one group
 *   per run, disagrees with the sides on at most slots / 16 slots, each a
 *   tie (within 0.05 x the median fastest-to-runner-up margin). Random skew
 *   gives a random side per slot: P clean runs have a chance of about
 *   P! (slots choose P-1) / P^slots (2 classes over 16 slots: ~5e-4).
 * - structure test (classes >= 8): the explained fraction of the best
 *   2-group clustering against clusterings of the same centers with each
 *   slot's column shuffled over the classes (the skew of one SM is
 *   exchangeable over slices when there is no partition structure).
 * Decision: an accepted P -> P partitions (confidence 0.99 with a
 * significant structure, 0.95 when too few classes to test it); none and
 * no structure -> one partition (0.95; 0.9 when untestable); none but a
 * significant structure (e.g. sides not contiguous in SM ids) -> not
 * established (0).
 *
 * Notes: pure code (unit-tested on synthetic centers). Assumes SMs near one
 * partition have neighbouring SM ids (true of the model; the H200 probe data
 * shows SM 0-49 and SM 66-115 as the two halves). */
#ifndef GPUXRAY_INFER_SLICE_PARTS_H
#define GPUXRAY_INFER_SLICE_PARTS_H

#include <stdint.h>

#define SPARTS_MAX_CLASSES 1024
#define SPARTS_MAX_SLOTS 32

typedef struct sparts_result {
    uint32_t partitions;  /* 0 = not established */
    double conf;
    int structure;        /* 1 significant, 0 none, -1 not testable (< 8 classes) */
    double explained;     /* 2-group explained fraction of the centers' variance */
    double null_mean, null_sd; /* the same over shuffled centers */
    uint32_t runs;        /* side runs over the slots for the accepted P (or P = 2) */
    char how[160];
} sparts_result;

/* centers: nc rows of S values (row j = class j, slot order = SM id order).
 * group[j] receives class j's partition (0..P-1, numbered in slot order)
 * when partitions > 1, else 0. 0 on success, -1 on bad arguments or out of
 * memory. */
int sparts_uniform(const double *centers, uint32_t nc, uint32_t S, uint64_t seed,
                   uint32_t *group, sparts_result *r);

#endif
