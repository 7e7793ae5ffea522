/* policy_fast.c - the per-way-count constants of the policy fast path (see
 * policy_fast.h), derived from the registered policies' own helpers.
 *
 * Notes:
 * - Only plru and plru-rand have a fast form; everything else gets
 *   GX_PF_OPS (the caller uses the ops table), and so does a policy whose
 *   fast form disagrees with its registered ops on a sample of 256 states
 *   (touch, victim and rng draws), or the inline generator with
 *   gx_rng_next: the registry stays the reference at run time.
 * - Touch masks come from gx_tree_touch itself: set = touch(0), clear =
 *   ~touch(~0) (the path's nodes; set is a subset of clear). The walk mask
 *   is gx_tree_victim's pruning rule evaluated once per node. The leaf-mask
 *   tables follow the heap numbering of policy_internal.h. */
#include "policy_fast.h"

#include <string.h>

#include "policy_internal.h"

/* 1 when gx_pf_rng_next draws exactly what gx_rng_next draws, and
 * gx_pf_rng_below16 what gx_rng_below(16) draws. */
static int inline_rng_ok(void)
{
    gx_rng a, b;
    gx_rng_seed(&a, 0x5eed5eedULL);
    b = a;
    for (int i = 0; i < 64; i++)
        if (gx_rng_next(&a) != gx_pf_rng_next(&b))
            return 0;
    for (int i = 0; i < 64; i++)
        if (gx_rng_below(&a, 16) != gx_pf_rng_below16(&b))
            return 0;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The leaves (bit i = leaf i of 16) whose path agrees with the bits of
 * the nodes n in [lo, hi) of a depth-4 heap tree; node n's bit is bit
 * (n - lo) of x. A node's bit picks its right (1) or left (0) child. */
static uint16_t agreeing_leaves(uint32_t x, uint32_t lo, uint32_t hi)
{
    uint16_t m = 0;
    for (uint32_t leaf = 0; leaf < 16; leaf++) {
        int ok = 1;
        for (uint32_t n = 16 + leaf; n > 1; n >>= 1) {
            uint32_t parent = n >> 1;
            if (parent >= lo && parent < hi && ((x >> (parent - lo)) & 1u) != (n & 1u))
                ok = 0;
        }
        m = (uint16_t)(m | (ok ? 1u << leaf : 0u));
    }
    return m;
}

static void build_leaf_masks(gx_policy_fast *f)
{
    for (uint32_t x = 0; x < 128; x++)
        f->lm_top[x] = agreeing_leaves(x, 1, 8);
    for (uint32_t y = 0; y < 256; y++)
        f->lm_low[y] = agreeing_leaves(y, 8, 16);
}

/* 1 when the fast path does what the registered ops do on a sample of
 * states: touch (on_hit, on_fill) and victim, the rng draws included. */
static int agrees_with_ops(const gx_policy_fast *f, const gx_policy *p, uint32_t ways)
{
    uint32_t nodes = 1u << f->depth; /* node bits 1 .. nodes - 1 */
    uint64_t mask = nodes >= 64 ? ~1ULL : ((1ULL << nodes) - 1) & ~1ULL;
    for (uint64_t i = 0; i < 256; i++) {
        uint64_t st = gx_mix64(i) & mask;
        uint32_t w = (uint32_t)(i % ways);
        uint64_t a = st, b = st;
        p->ops->on_hit(&a, ways, w, &p->params);
        gx_pf_plru_touch(f, &b, w);
        if (a != b)
            return 0;
        a = st;
        p->ops->on_fill(&a, ways, w, &p->params);
        if (a != b)
            return 0;
        gx_rng r1, r2;
        gx_rng_seed(&r1, i);
        r2 = r1;
        a = st;
        uint32_t v1 = p->ops->victim(&a, ways, &p->params, &r1);
        uint32_t v2 = gx_pf_plru_victim(f, st, ways, &r2);
        if (v1 != v2 || a != st || memcmp(&r1, &r2, sizeof r1) != 0)
            return 0;
    }
    return 1;
}

void gx_policy_fast_init(gx_policy_fast *f, const gx_policy *p, uint32_t ways)
{
    memset(f, 0, sizeof *f);
    f->kind = GX_PF_OPS;
    if (ways < 1 || ways > GX_POLICY_MAX_WAYS || !inline_rng_ok())
        return;
    int rand = p->ops == &gx_policy_plru_rand_ops;
    if ((p->ops != &gx_policy_plru_ops && !rand) || p->ops->on_invalidate)
        return;
    f->kind = GX_PF_PLRU;
    f->depth = gx_tree_depth(ways);
    uint64_t leaves = 1ULL << f->depth;
    /* node n at depth d (n in [2^d, 2^(d+1))): its right child's first leaf
     * as a way number, as in gx_tree_victim */
    for (uint32_t d = 0; d < f->depth; d++)
        for (uint64_t n = 1ULL << d; n < 2ULL << d; n++) {
            uint64_t first = ((2 * n + 1) << (f->depth - d - 1)) - leaves;
            f->walk |= (uint64_t)(first < ways) << n;
        }
    for (uint32_t w = 0; w < ways; w++) {
        f->set[w] = gx_tree_touch(0, ways, w);
        f->clear[w] = ~gx_tree_touch(~0ULL, ways, w);
    }
    f->leaf_shift = f->depth <= 4 ? 4 - f->depth : 0;
    build_leaf_masks(f);
    if (rand) {
        f->rand_thr = gx_plru_rand_threshold(&p->params);
        f->rand_always = gx_plru_rand_always(&p->params);
        f->rand_on = f->rand_thr != 0 || f->rand_always;
    }
    if (!agrees_with_ops(f, p, ways))
        f->kind = GX_PF_OPS; /* never seen: plru.c and this file disagree */
}
