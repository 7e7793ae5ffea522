/* cache.c - a sectored, set-associative cache: one level of storage of the
 * model (see cache.h).
 *
 * Models: tags of whole lines, a valid-sector mask per line, one replacement
 * policy state per set (policy.h registry). A miss fills only the missed
 * sector; a line miss allocates a way (lowest invalid way first, else the
 * policy's victim); a sector miss on a present line fills the sector and is
 * a policy hit for the line.
 *
 * Notes:
 * - The caller gives the set index (index functions live in hash.h); the set
 *   count may be any number >= 1, so there is no division in the hot path.
 * - The layout and the hot path (lookup, fill, policy fast path) are inline
 *   in cache_internal.h, shared with l2.c; this file holds the set-up and
 *   the cache.h API.
 * - One flat array, one block per set holding everything an access touches
 *   (the hot path's layout; separate tag / mask / state arrays cost one host
 *   cache miss per array per access): fingerprints, sector masks, policy
 *   state, valid-way count, then the tags from a 64-byte boundary. A lookup
 *   that misses reads one host cache line, a fill one more. Blocks of more
 *   than 64 bytes are 64-byte multiples (measured on hopper-like 16-80 MiB
 *   chases: 10% fewer host cache misses, ~6% faster than 16-byte blocks
 *   that straddle lines).
 * - At most 32 sectors per line (sector mask is 32 bits).
 * - Statistics count gx_cache_access() calls only; insert, invalidate and
 *   background evictions change contents but not the statistics, except that
 *   an eviction caused by an insert counts in `evictions`. */
#include "gpuxray/cache.h"

#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"
#include "gpuxray/policy.h"
#include "gpuxray/bits.h"

static int check_cfg(const gx_cache_cfg *cfg, gx_msg *msg)
{
    if (!cfg)
        return gx_fail(msg, GX_EINVAL, "cache: no configuration");
    if (!gx_is_pow2_u64(cfg->line_bytes) || cfg->line_bytes < 32 || cfg->line_bytes > 256)
        return gx_fail(msg, GX_ECONFIG, "cache.line_bytes: %u is not a power of two in 32..256",
                       cfg->line_bytes);
    if (!gx_is_pow2_u64(cfg->sector_bytes) || cfg->sector_bytes > cfg->line_bytes)
        return gx_fail(msg, GX_ECONFIG,
                       "cache.sector_bytes: %u is not a power of two <= line_bytes (%u)",
                       cfg->sector_bytes, cfg->line_bytes);
    if (cfg->line_bytes / cfg->sector_bytes > 32)
        return gx_fail(msg, GX_ECONFIG, "cache.sector_bytes: %u gives more than 32 sectors per line",
                       cfg->sector_bytes);
    if (cfg->ways < 1 || cfg->ways > 64)
        return gx_fail(msg, GX_ECONFIG, "cache.ways: %u is not in 1..64", cfg->ways);
    if (cfg->sets < 1 || cfg->sets > ((uint64_t)1 << 32))
        return gx_fail(msg, GX_ECONFIG, "cache.sets: %llu is not in 1..2^32",
                       (unsigned long long)cfg->sets);
    return GX_OK;
}

static void init_all_sets(gx_cache *c)
{
    memset(c->mem, 0, c->sets * c->block);
    for (uint64_t s = 0; s < c->sets; s++) {
        uint64_t *t = gx_cset_tags(c, s);
        for (uint32_t w = 0; w < c->ways; w++)
            t[w] = GX_TAG_INVALID;
        if (c->stride)
            c->pol.ops->init(gx_cset_state(c, s), c->ways, &c->pol.params);
    }
}

static size_t round8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}

int gx_cache_new(const gx_cache_cfg *cfg, gx_cache **out, gx_msg *msg)
{
    *out = NULL;
    int rc = check_cfg(cfg, msg);
    if (rc != GX_OK)
        return rc;
    gx_cache *c = calloc(1, sizeof *c);
    if (!c)
        return gx_fail(msg, GX_ENOMEM, "cache: out of memory");
    rc = gx_policy_from_spec(cfg->policy ? cfg->policy : "lru", &c->pol, msg);
    if (rc != GX_OK) {
        free(c);
        return rc;
    }
    c->line_bytes = cfg->line_bytes;
    c->sector_bytes = cfg->sector_bytes;
    c->ways = cfg->ways;
    c->sectors = cfg->line_bytes / cfg->sector_bytes;
    c->sets = cfg->sets;
    c->way_mask = c->ways >= 64 ? ~0ULL : (1ULL << c->ways) - 1;
    c->stride = round8(c->pol.ops->state_bytes(c->ways, &c->pol.params));
    c->wide = c->sectors > 8;
    /* fingerprints, masks, policy state and count first (what a lookup and
     * a fill read), the tags after them from a host cache line boundary */
    c->off_masks = ((size_t)c->ways + 15) & ~(size_t)15;
    c->off_state = c->off_masks + round8((size_t)c->ways * (c->wide ? 4 : 1));
    c->off_used = c->off_state + c->stride;
    size_t head = c->off_used + 8;
    c->off_tags = head <= 64 ? 64 : (head + 63) & ~(size_t)63;
    c->block = c->off_tags + (size_t)c->ways * 8;
    c->block = c->block <= 64 ? c->block : (c->block + 63) & ~(size_t)63;
    if (c->ways * 8 + head <= 64) { /* small sets: one compact block */
        c->off_tags = (head + 15) & ~(size_t)15;
        c->block = (c->off_tags + (size_t)c->ways * 8 + 15) & ~(size_t)15;
    }
    if (c->sets > SIZE_MAX / c->block ||
        !(c->mem = aligned_alloc(64, (c->sets * c->block + 63) & ~(size_t)63))) {
        gx_cache_free(c);
        return gx_fail(msg, GX_ENOMEM, "cache: out of memory for %llu sets x %u ways",
                       (unsigned long long)cfg->sets, cfg->ways);
    }
    gx_rng_seed(&c->rng, cfg->seed);
    if (cfg->rng_groups > 1) {
        if (c->sets % cfg->rng_groups != 0) {
            gx_cache_free(c);
            return gx_fail(msg, GX_EINVAL, "cache: %llu sets do not split into %llu random streams",
                           (unsigned long long)cfg->sets, (unsigned long long)cfg->rng_groups);
        }
        if (!(c->rngs = malloc(cfg->rng_groups * sizeof *c->rngs))) {
            gx_cache_free(c);
            return gx_fail(msg, GX_ENOMEM, "cache: out of memory");
        }
        c->sets_per_rng = c->sets / cfg->rng_groups;
        for (uint64_t g = 0; g < cfg->rng_groups; g++)
            gx_rng_seed(&c->rngs[g], gx_mix64(cfg->seed ^ gx_mix64(g + 1)));
    }
    gx_policy_fast_init(&c->pf, &c->pol, c->ways);
    init_all_sets(c);
    *out = c;
    return GX_OK;
}

void gx_cache_free(gx_cache *c)
{
    if (!c)
        return;
    free(c->mem);
    free(c->rngs);
    free(c);
}

gx_cache_outcome gx_cache_access(gx_cache *c, uint64_t set, uint64_t line_addr,
                                 uint32_t sector, int allocate, gx_cache_victim *victim)
{
    return gx_caccess(c, set, line_addr, sector, allocate, victim);
}

int gx_cache_contains(const gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector)
{
    int w = gx_cfind_way(c, set, line_addr);
    return w >= 0 && (gx_cmask_get(c, set, (uint32_t)w) >> sector & 1u);
}

void gx_cache_insert(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector_mask,
                     gx_cache_victim *victim)
{
    gx_cinsert_s(c, set, line_addr, sector_mask, victim, 0);
}

uint32_t gx_cache_invalidate(gx_cache *c, uint64_t set, uint64_t line_addr)
{
    return gx_cinvalidate_s(c, set, line_addr, 0);
}

void gx_cache_evict_random(gx_cache *c, gx_rng *rng)
{
    /* A few random sets; an empty cache simply loses nothing. */
    for (int tries = 0; tries < 8; tries++) {
        uint64_t set = gx_rng_below(rng, c->sets);
        if (!*gx_cset_used(c, set))
            continue;
        uint32_t start = (uint32_t)gx_rng_below(rng, c->ways);
        for (uint32_t k = 0; k < c->ways; k++) {
            uint32_t w = (start + k) % c->ways;
            if (gx_cset_tags(c, set)[w] != GX_TAG_INVALID) {
                gx_cview v = gx_cview_of(c, set);
                gx_cv_drop(c, &v, w, 0);
                return;
            }
        }
    }
}

void gx_cache_flush(gx_cache *c)
{
    init_all_sets(c);
}

void gx_cache_get_stats(const gx_cache *c, gx_cache_stats *s)
{
    s->hits = c->outcomes[GX_CACHE_HIT];
    s->sector_misses = c->outcomes[GX_CACHE_SECTOR_MISS];
    s->line_misses = c->outcomes[GX_CACHE_LINE_MISS];
    s->accesses = s->hits + s->sector_misses + s->line_misses;
    s->evictions = c->evictions;
}

void gx_cache_reset_stats(gx_cache *c)
{
    memset(c->outcomes, 0, sizeof c->outcomes);
    c->evictions = 0;
}
