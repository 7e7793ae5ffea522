/* policy_internal.h - shared pieces of the replacement-policy modules: the
 * registered ops tables and small bit tricks over one set's state.
 *
 * Notes:
 * - Private to src/model/policies/. Everything else goes through
 *   include/gpuxray/policy.h.
 * - Way masks: bit w of a uint64_t is way w (ways <= 64).
 * - 2-bit ages (SRRIP RRPV, QLRU age) are packed 32 to a uint64_t word, way w
 *   in bits 2*(w%32)..2*(w%32)+1 of word w/32, so every "find the first way
 *   with age 3" or "age every way" is a few word operations (SWAR), not a
 *   loop over the ways.
 * - Tree PLRU: heap-numbered nodes (root 1, children 2n and 2n+1, leaves
 *   P..2P-1 for P = the next power of two >= ways), node n's bit in bit n of
 *   one uint64_t; a bit points to the child the next victim comes from
 *   (0 left, 1 right). */
#ifndef GX_POLICY_INTERNAL_H
#define GX_POLICY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/policy.h"

extern const gx_policy_ops gx_policy_lru_ops;
extern const gx_policy_ops gx_policy_fifo_ops;
extern const gx_policy_ops gx_policy_plru_ops;
extern const gx_policy_ops gx_policy_plru_rand_ops;
extern const gx_policy_ops gx_policy_mru_ops;
extern const gx_policy_ops gx_policy_nru_ops;
extern const gx_policy_ops gx_policy_srrip_hp_ops;
extern const gx_policy_ops gx_policy_srrip_fp_ops;
extern const gx_policy_ops gx_policy_qlru_ops;
extern const gx_policy_ops gx_policy_random_ops;

/* Shared parse helper (registry.c): fails when a family that takes no
 * arguments is given some. */
int gx_policy_parse_none(const char *family, const char *args, gx_msg *msg);
/* Parse a probability in [0,1] (the whole of args) into *p. */
int gx_policy_parse_prob(const char *family, const char *args, double *p, gx_msg *msg);
/* Shortest decimal text that reads back as exactly p. */
int gx_policy_format_prob(double p, char *buf, size_t n);

/* Recency-rank state shared by lru.c and fifo.c (defined in lru.c). */
size_t gx_rank_state_bytes(uint32_t ways, const gx_policy_params *p);
void gx_rank_init(void *st, uint32_t ways, const gx_policy_params *p);
void gx_rank_touch(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p);
uint32_t gx_rank_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng);
void gx_rank_invalidate(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p);

/* ---- way masks ---- */

static inline uint64_t gx_way_mask(uint32_t ways)
{
    return ways >= 64 ? ~0ULL : ((1ULL << ways) - 1ULL);
}

static inline uint32_t gx_ctz64(uint64_t x)
{
    return (uint32_t)__builtin_ctzll(x);
}

/* ---- packed 2-bit ages: state is uint64_t a[2] ---- */

#define GX_AGE_LO 0x5555555555555555ULL /* low bit of every 2-bit lane */

/* Low-bit lane mask of the ways present in word j (0 or 1). */
static inline uint64_t gx_age_lanes(uint32_t ways, uint32_t j)
{
    uint32_t n = j == 0 ? (ways > 32 ? 32 : ways) : (ways > 32 ? ways - 32 : 0);
    return n >= 32 ? GX_AGE_LO : (GX_AGE_LO & ((1ULL << (2 * n)) - 1ULL));
}

static inline uint32_t gx_age_words(uint32_t ways)
{
    return ways > 32 ? 2u : 1u;
}

static inline uint32_t gx_age_get(const uint64_t *a, uint32_t way)
{
    return (uint32_t)(a[way >> 5] >> (2 * (way & 31))) & 3u;
}

static inline void gx_age_set(uint64_t *a, uint32_t way, uint32_t age)
{
    uint32_t sh = 2 * (way & 31);
    a[way >> 5] = (a[way >> 5] & ~(3ULL << sh)) | ((uint64_t)age << sh);
}

/* Low-bit lanes (within lanes lo) whose age is 3. */
static inline uint64_t gx_age_is3(uint64_t x, uint64_t lo)
{
    return x & (x >> 1) & lo;
}

/* Largest age among the lanes lo of the words (lo[] per word), 0..3;
 * returns 3 when no lane is selected (nothing to age). */
static inline uint32_t gx_age_max(const uint64_t *a, const uint64_t *lo, uint32_t nw)
{
    uint64_t any = 0, nz = 0, has2 = 0, has3 = 0;
    for (uint32_t j = 0; j < nw; j++) {
        uint64_t x = a[j];
        any |= lo[j];
        has3 |= x & (x >> 1) & lo[j];
        has2 |= (x >> 1) & lo[j];
        nz |= (x | (x >> 1)) & lo[j];
    }
    if (!any || has3)
        return 3;
    return has2 ? 2u : (nz ? 1u : 0u);
}

/* Add d to every lane in lo (caller guarantees no lane exceeds 3). */
static inline void gx_age_add(uint64_t *a, const uint64_t *lo, uint32_t nw, uint32_t d)
{
    for (uint32_t j = 0; j < nw; j++)
        a[j] += (uint64_t)d * lo[j];
}

/* ---- tree PLRU over the next power of two ---- */

/* Tree depth D = ceil(log2(ways)); P = 1 << D leaves. */
static inline uint32_t gx_tree_depth(uint32_t ways)
{
    return ways <= 1 ? 0u : (uint32_t)(64 - __builtin_clzll((uint64_t)(ways - 1)));
}

/* Make every node on way's path point away from it. */
static inline uint64_t gx_tree_touch(uint64_t bits, uint32_t ways, uint32_t way)
{
    uint32_t depth = gx_tree_depth(ways);
    uint64_t node = (1ULL << depth) + way; /* the leaf */
    uint64_t clear = 0, set = 0;
    for (uint32_t d = 0; d < depth; d++) {
        uint64_t right = node & 1ULL; /* 1 when we came from the right */
        node >>= 1;
        clear |= 1ULL << node;
        set |= (right ^ 1ULL) << node;
    }
    return (bits & ~clear) | set;
}

/* Follow the bits from the root to a leaf. With a non-power-of-two way count
 * the right half of some nodes holds no way at all; such a node is walked
 * to the left whatever its bit says, so no nonexistent way is ever chosen
 * (PLRU over the pruned tree). */
static inline uint32_t gx_tree_victim(uint64_t bits, uint32_t ways)
{
    uint32_t depth = gx_tree_depth(ways);
    uint64_t leaves = 1ULL << depth;
    uint64_t node = 1;
    for (uint32_t d = 0; d < depth; d++) {
        uint64_t right = 2 * node + 1;
        /* first leaf under `right`, as a way number */
        uint64_t first = (right << (depth - d - 1)) - leaves;
        uint64_t b = (bits >> node) & (uint64_t)(first < ways);
        node = 2 * node + b;
    }
    return (uint32_t)(node - leaves);
}

/* ---- plru-rand:P parameters (set by plru.c's parser) ---- */

/* The 64-bit threshold P * 2^64 held in i[0] (low) and i[1] (high 32 bits):
 * a raw rng word below it picks a random victim. */
static inline uint64_t gx_plru_rand_threshold(const gx_policy_params *p)
{
    return (uint64_t)(uint32_t)p->i[0] | ((uint64_t)(uint32_t)p->i[1] << 32);
}

/* 1 when P = 1 (a random victim without the threshold draw). */
static inline int gx_plru_rand_always(const gx_policy_params *p)
{
    return p->i[2] != 0;
}

#endif
