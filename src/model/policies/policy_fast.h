/* policy_fast.h - the hot-path form of the replacement policies the
 * reference profiles use (tree PLRU and plru-rand:P), for the cache model
 * (src/model/cache_internal.h); every other family goes through the
 * registered ops.
 *
 * Models: exactly the rules of plru.c. The per-way-count constants are
 * DERIVED from plru.c's own helpers (gx_tree_touch, the pruned-tree rule of
 * gx_tree_victim, gx_plru_rand_threshold) when the cache is built, so the
 * registry stays the single source of truth; only the per-access arithmetic
 * is precomputed:
 * - touch: (bits & ~clear[way]) | set[way], the masks of gx_tree_touch;
 * - victim: the root-to-leaf walk over bits & walk (walk: node n's bit is 1
 *   when its right subtree holds a way), as two leaf-mask table lookups up
 *   to 16 ways, else unrolled by a fall-through switch on the depth (no
 *   loop, no data-dependent branch);
 * - plru-rand draws exactly as plru_rand_victim (one raw rng word compared
 *   with the integer threshold, then gx_rng_below on a random victim), so
 *   seeded runs are identical draw for draw.
 * Measured (callgrind, seed-ampere-6mb, random 64 MiB trace, ~86% of the
 * accesses evict): a touch 71 -> 5 instructions, a victim with its
 * threshold draw 103 -> 36 (ops table, loops and gx_rng_next before).
 *
 * Notes:
 * - kind GX_PF_OPS: the caller must call the registered ops.
 * - Private to src/model/ (the cache). */
#ifndef GX_POLICY_FAST_H
#define GX_POLICY_FAST_H

#include <stdint.h>

#include "gpuxray/policy.h"
#include "gpuxray/rng.h"

typedef enum gx_pf_kind {
    GX_PF_OPS = 0, /* call the registered ops */
    GX_PF_PLRU = 1 /* plru, plru-rand:P */
} gx_pf_kind;

typedef struct gx_policy_fast {
    gx_pf_kind kind;
    uint32_t depth;       /* tree depth, 0..6 */
    uint64_t walk;        /* node n's bit: its right subtree holds a way */
    uint64_t rand_thr;    /* random victim when a raw draw < rand_thr */
    int rand_on;          /* plru-rand with P > 0 */
    int rand_always;      /* P = 1: random victim without the threshold draw */
    uint32_t leaf_shift;  /* 4 - depth when depth <= 4 (the leaf-mask victim) */
    uint64_t clear[GX_POLICY_MAX_WAYS], set[GX_POLICY_MAX_WAYS]; /* touch masks */
    /* Leaf masks of a depth-4 tree (16 leaves, bit i = leaf i): lm_top[x]
     * for the bits of nodes 1..7 (x = bits >> 1 & 0x7f), lm_low[y] for
     * nodes 8..15 (y = bits >> 8 & 0xff): the leaves every node on their
     * path points to. */
    uint16_t lm_top[128], lm_low[256];
} gx_policy_fast;

/* Fill f for policy p over sets of `ways` ways (1..64). */
void gx_policy_fast_init(gx_policy_fast *f, const gx_policy *p, uint32_t ways);

/* Tree touch (hit or fill) of way. */
static inline void gx_pf_plru_touch(const gx_policy_fast *f, uint64_t *bits, uint32_t way)
{
    *bits = (*bits & ~f->clear[way]) | f->set[way];
}

/* Tree victim: the leaf gx_tree_victim's walk reaches over bits.
 * Up to 16 ways (depth <= 4): the walk's leaf is the one leaf that every
 * node points to, the AND of two leaf-mask tables (upper three levels,
 * lowest level) indexed by the node bits, so the four dependent steps of
 * the walk become two independent loads. A tree of depth d < 4 is the top
 * of a depth-4 tree whose lower nodes point left (their bits are 0): its
 * leaf L is leaf L << (4 - d) there. Deeper trees walk, unrolled.
 * Measured (callgrind, seed-ampere-6mb random trace): ~35 instructions per
 * victim for the unrolled walk, 7 for the two tables (16 ways). */
static inline uint32_t gx_pf_tree_victim(const gx_policy_fast *f, uint64_t bits)
{
    uint64_t e = bits & f->walk, n = 1;
    if (f->depth <= 4) {
        uint32_t m = (uint32_t)f->lm_top[(e >> 1) & 0x7f] & f->lm_low[(e >> 8) & 0xff];
        return (uint32_t)__builtin_ctz(m) >> f->leaf_shift;
    }
    switch (f->depth) {
    case 6: n = 2 * n + ((e >> n) & 1u); /* fall through */
    case 5: n = 2 * n + ((e >> n) & 1u); /* fall through */
    case 4: n = 2 * n + ((e >> n) & 1u); /* fall through */
    case 3: n = 2 * n + ((e >> n) & 1u); /* fall through */
    case 2: n = 2 * n + ((e >> n) & 1u); /* fall through */
    case 1: n = 2 * n + ((e >> n) & 1u); /* fall through */
    default: break;
    }
    return (uint32_t)(n - (1ULL << f->depth));
}

/* The same for exactly 16 ways (depth 4, no pruning): constants only. */
static inline uint32_t gx_pf_tree_victim16(const gx_policy_fast *f, uint64_t bits)
{
    uint32_t m = (uint32_t)f->lm_top[(bits >> 1) & 0x7f] & f->lm_low[(bits >> 8) & 0xff];
    return (uint32_t)__builtin_ctz(m);
}

/* gx_rng_next (rng.h: xoshiro256**), inline on the same state: the call
 * and the registers it clobbers cost more than the generator itself.
 * gx_policy_fast_init checks it against gx_rng_next and leaves the fast
 * path off (GX_PF_OPS) if the two ever differ, so a change of generator in
 * rng.c cannot make the cache's draws diverge from the registry's.
 * Measured (callgrind, seed-ampere-6mb random trace, draw and threshold
 * test): 43 instructions per victim through gx_rng_next, 28 inline. */
static inline uint64_t gx_pf_rng_next(gx_rng *r)
{
    /* the steps of xoshiro256** in the order of the stores, so that no more
     * than five values are live (the compiler spilled the state otherwise:
     * 37 -> 22 instructions a draw in the L2's batch run) */
    const uint64_t s0 = r->s[0], s1 = r->s[1];
    const uint64_t x = s1 * 5;
    const uint64_t s2 = r->s[2] ^ s0, s3 = r->s[3] ^ s1;
    r->s[0] = s0 ^ s3;
    r->s[1] = s1 ^ s2;
    r->s[2] = s2 ^ (s1 << 17);
    r->s[3] = (s3 << 45) | (s3 >> 19);
    return ((x << 7) | (x >> 57)) * 9;
}

/* gx_rng_below(r, 16) (rng.c), inline: for a power of two n its
 * rejection test never rejects (the low word of draw * n is >= 0 =
 * 2^64 mod n), so it is one draw's top 4 bits. gx_policy_fast_init checks
 * the two agree and leaves the fast path off if they ever differ. */
static inline uint32_t gx_pf_rng_below16(gx_rng *r)
{
    return (uint32_t)(gx_pf_rng_next(r) >> 60);
}

/* plru / plru-rand victim of a full set (the rng draws of plru_rand_victim);
 * ways16: the set has exactly 16 ways (a compile-time constant for the
 * caller's specialised path). */
static inline __attribute__((always_inline)) uint32_t
gx_pf_plru_victim_s(const gx_policy_fast *f, uint64_t bits, uint32_t ways, gx_rng *rng,
                    int ways16)
{
    if (f->rand_on && (f->rand_always || gx_pf_rng_next(rng) < f->rand_thr))
        return ways16 ? gx_pf_rng_below16(rng) : (uint32_t)gx_rng_below(rng, ways);
    return ways16 ? gx_pf_tree_victim16(f, bits) : gx_pf_tree_victim(f, bits);
}

static inline uint32_t gx_pf_plru_victim(const gx_policy_fast *f, uint64_t bits, uint32_t ways,
                                         gx_rng *rng)
{
    return gx_pf_plru_victim_s(f, bits, ways, rng, 0);
}

#endif
