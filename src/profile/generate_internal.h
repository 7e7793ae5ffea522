/* generate_internal.h - what the generator's parts share (generate.c: the
 * classic draws; generate_wide.c: the widened draws of real GPUs' shapes;
 * generate_tlb.c: the hidden translation hierarchy).
 *
 * Notes: the helpers are static inline so each mode's file keeps its own
 * copy without exported names; every draw comes from the caller's gx_rng. */
#ifndef GX_GENERATE_INTERNAL_H
#define GX_GENERATE_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "gpuxray/generate.h"
#include "gpuxray/profile.h"
#include "gpuxray/rng.h"

#define OBS_HI 20     /* highest observable bit: 2 MiB pages */
#define HIGH_LO 21    /* unobservable bits drawn from 21..33 */
#define HIGH_HI 33
#define PAGE_BYTES (2u << 20)


typedef struct shape {
    uint32_t line, sector, ways, slices, partitions, sets;
    gx_topology topo;
    int k_slice, n_set, modulo;
    int copy_to_near, victims_to_far; /* near-far only */
} shape;

static inline uint64_t urange(gx_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + gx_rng_below(r, hi - lo + 1);
}

static inline double drange(gx_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gx_rng_uniform(r);
}

/* Insert v into an XOR basis indexed by leading bit; 0 when dependent. */
static inline int basis_add(uint64_t basis[64], uint64_t v)
{
    for (int b = 63; b >= 0; b--) {
        if (!(v >> b & 1))
            continue;
        if (!basis[b]) {
            basis[b] = v;
            return 1;
        }
        v ^= basis[b];
    }
    return 0;
}

static inline uint64_t random_bits(gx_rng *r, int lo, int hi, int weight)
{
    uint64_t m = 0;
    int span = hi - lo + 1;
    if (weight > span)
        weight = span;
    while (__builtin_popcountll(m) < weight)
        m |= (uint64_t)1 << urange(r, (uint64_t)lo, (uint64_t)hi);
    return m;
}

/* The balanced slice table of a non-power-of-two slice count (generate.c):
 * 2^k entries, shuffled with r. 0, or -1 out of memory. */
int gx_gen_slice_table(gx_rng *r, uint32_t slices, int k, gx_hash_fn *sh);
/* The slice count (and a uniform card's partitions) of s (generate.c). */
void gx_gen_slice_count(gx_rng *r, uint32_t maxs, shape *s);
/* The widened mode (generate_wide.c): 0 = constraint broken (redraw),
 * 1 = drawn, -1 = out of memory (make_hashes). */
int gx_gen_wide_shape(gx_rng *r, const gx_generate_opts *o, shape *s);
int gx_gen_wide_hashes(gx_rng *r, const shape *s, gx_profile *p);
/* Near-far without copies: the levels one SM sees (one, at the mean). */
void gx_gen_wide_levels(const shape *s, gx_profile *p);

/* Draw p->tlb (present) from the seed's translation stream; p's device and
 * l2 are already drawn. 0 when no hierarchy fits (never for valid ranges). */
int gx_generate_tlb(uint64_t seed, gx_profile *p);

#endif
