/* policy_set.c - one simulated cache set holding line ids, driven by a
 * registered policy: the reference the tests replay sequences on and the
 * engine policy inference simulates candidates with.
 *
 * Notes:
 * - Same protocol as the cache model: a miss fills the lowest-index invalid
 *   way while one exists, else the policy's victim(); on_fill follows; a hit
 *   calls on_hit.
 * - Linear tag search over the valid ways (<= 64): cheaper than hashing at
 *   these sizes.
 * - The rng is seeded from the seed given at creation and re-seeded by
 *   reset, so a (spec, ways, seed, sequence) always replays identically. */
#include <stdlib.h>
#include <string.h>

#include "policy_internal.h"

struct gx_policy_set {
    gx_policy pol;
    uint32_t ways;
    uint64_t valid; /* bit w: way w holds a line */
    uint64_t seed;
    gx_rng rng;
    uint64_t line[GX_POLICY_MAX_WAYS];
    uint64_t state[GX_POLICY_MAX_WAYS / 8 + 1]; /* <= 64 bytes, 8-aligned */
};

int gx_policy_set_new(const char *spec, uint32_t ways, uint64_t seed, gx_policy_set **out,
                      gx_msg *msg)
{
    *out = NULL;
    if (ways < 1 || ways > GX_POLICY_MAX_WAYS)
        return gx_fail(msg, GX_EINVAL, "policy set: ways = %u, want 1..%d", ways,
                       GX_POLICY_MAX_WAYS);
    gx_policy pol;
    int rc = gx_policy_from_spec(spec, &pol, msg);
    if (rc != GX_OK)
        return rc;
    size_t need = pol.ops->state_bytes(ways, &pol.params);
    if (need > sizeof((gx_policy_set *)0)->state)
        return gx_fail(msg, GX_EINVAL, "policy \"%s\": %zu bytes of state for %u ways "
                                       "(more than this set holds)", pol.spec, need, ways);
    gx_policy_set *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(msg, GX_ENOMEM, "policy set: out of memory");
    s->pol = pol;
    s->ways = ways;
    s->seed = seed;
    gx_policy_set_reset(s);
    *out = s;
    return GX_OK;
}

void gx_policy_set_reset(gx_policy_set *s)
{
    s->valid = 0;
    memset(s->line, 0, sizeof s->line);
    memset(s->state, 0, sizeof s->state);
    s->pol.ops->init(s->state, s->ways, &s->pol.params);
    gx_rng_seed(&s->rng, s->seed);
}

int gx_policy_set_access(gx_policy_set *s, uint64_t line)
{
    const gx_policy_ops *ops = s->pol.ops;
    uint64_t v = s->valid;
    while (v) {
        uint32_t w = gx_ctz64(v);
        v &= v - 1;
        if (s->line[w] == line) {
            ops->on_hit(s->state, s->ways, w, &s->pol.params);
            return 1;
        }
    }
    uint64_t full = gx_way_mask(s->ways);
    uint32_t way;
    if (s->valid != full)
        way = gx_ctz64(~s->valid & full);
    else
        way = ops->victim(s->state, s->ways, &s->pol.params, &s->rng);
    s->line[way] = line;
    s->valid |= 1ULL << way;
    ops->on_fill(s->state, s->ways, way, &s->pol.params);
    return 0;
}

void gx_policy_set_free(gx_policy_set *s)
{
    free(s);
}

int gx_policy_set_invalidate(gx_policy_set *s, uint64_t line)
{
    uint64_t v = s->valid;
    while (v) {
        uint32_t w = gx_ctz64(v);
        v &= v - 1;
        if (s->line[w] == line) {
            s->valid &= ~(1ULL << w);
            if (s->pol.ops->on_invalidate)
                s->pol.ops->on_invalidate(s->state, s->ways, w, &s->pol.params);
            return 1;
        }
    }
    return 0;
}
