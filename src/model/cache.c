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
 * - One flat array, one block per set holding everything an access touches
 *   (the hot path's layout; separate tag / mask / state arrays cost one host
 *   cache miss per array per access): a fingerprint byte per way (see
 *   find_way), the sector masks (1 byte each up to 8 sectors, else 4), the
 *   policy state, the valid-way count, then from a 64-byte boundary the tags
 *   (uint64 line addresses; an invalid way holds GX_TAG_INVALID). A lookup
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
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "gpuxray/policy.h"

#define GX_TAG_INVALID UINT64_MAX

struct gx_cache {
    uint32_t line_bytes, sector_bytes, ways, sectors;
    uint64_t sets;
    uint8_t *mem;       /* sets * block bytes */
    size_t block;       /* bytes per set */
    size_t off_tags, off_masks, off_state, off_used;
    int wide;           /* masks are uint32 (more than 8 sectors), else uint8 */
    uint64_t way_mask;  /* bit w set for every way w */
    size_t stride;      /* bytes of policy state per set */
    gx_policy pol;
    gx_rng rng;
    gx_cache_stats st;
};

static inline uint8_t *set_fps(const gx_cache *c, uint64_t set)
{
    return c->mem + set * c->block;
}

static inline uint64_t *set_tags(const gx_cache *c, uint64_t set)
{
    return (uint64_t *)(void *)(c->mem + set * c->block + c->off_tags);
}

/* One byte of a line address's hash: candidates for a match are the ways
 * whose fingerprint is equal (about ways/256 false candidates per lookup). */
static inline uint8_t fingerprint(uint64_t line_addr)
{
    return (uint8_t)((line_addr * 0x9e3779b97f4a7c15ULL) >> 56);
}

static inline void *set_state(const gx_cache *c, uint64_t set)
{
    return c->mem + set * c->block + c->off_state;
}

static inline uint8_t *set_used(const gx_cache *c, uint64_t set)
{
    return c->mem + set * c->block + c->off_used;
}

static inline uint32_t mask_get(const gx_cache *c, uint64_t set, uint32_t w)
{
    const uint8_t *b = c->mem + set * c->block + c->off_masks;
    return c->wide ? ((const uint32_t *)(const void *)b)[w] : b[w];
}

static inline void mask_set(gx_cache *c, uint64_t set, uint32_t w, uint32_t m)
{
    uint8_t *b = c->mem + set * c->block + c->off_masks;
    if (c->wide)
        ((uint32_t *)(void *)b)[w] = m;
    else
        b[w] = (uint8_t)m;
}

static int is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static int check_cfg(const gx_cache_cfg *cfg, gx_msg *msg)
{
    if (!cfg)
        return gx_fail(msg, GX_EINVAL, "cache: no configuration");
    if (!is_pow2(cfg->line_bytes) || cfg->line_bytes < 32 || cfg->line_bytes > 256)
        return gx_fail(msg, GX_ECONFIG, "cache.line_bytes: %u is not a power of two in 32..256",
                       cfg->line_bytes);
    if (!is_pow2(cfg->sector_bytes) || cfg->sector_bytes > cfg->line_bytes)
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
        uint64_t *t = set_tags(c, s);
        for (uint32_t w = 0; w < c->ways; w++)
            t[w] = GX_TAG_INVALID;
        if (c->stride)
            c->pol.ops->init(set_state(c, s), c->ways, &c->pol.params);
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
    init_all_sets(c);
    *out = c;
    return GX_OK;
}

void gx_cache_free(gx_cache *c)
{
    if (!c)
        return;
    free(c->mem);
    free(c);
}

/* The way holding line in set, or -1.
 * Fingerprints (SwissTable's idea): one byte per way, compared 16 at a time
 * (SSE2), then the full tag of the rare candidates; without SSE2 a
 * conditional-move loop over the tags. A set holds a line at most once.
 * Measured on the seed profile (CPU time, one core of a loaded 2-core VM):
 * all-hit random trace 36 M accesses/s with a first-match loop over the
 * tags (its exit is mispredicted on nearly every hit), 45 M comparing two
 * tags per SSE2 step (~150 instructions an access), 60 M with fingerprints
 * (~55 instructions an access, callgrind). */
static inline int find_way(const gx_cache *c, uint64_t set, uint64_t line_addr)
{
    const uint64_t *t = set_tags(c, set);
#ifdef __SSE2__
    const uint8_t *fp = set_fps(c, set);
    const __m128i key = _mm_set1_epi8((char)fingerprint(line_addr));
    uint64_t cand = 0;
    for (uint32_t w = 0; w < c->ways; w += 16) {
        __m128i v = _mm_load_si128((const __m128i *)(const void *)(fp + w));
        cand |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, key)) << w;
    }
    cand &= c->way_mask;
    while (cand) {
        int w = __builtin_ctzll(cand);
        if (t[w] == line_addr)
            return w;
        cand &= cand - 1;
    }
    return -1;
#else
    int r = -1;
    for (uint32_t w = 0; w < c->ways; w++)
        r = t[w] == line_addr ? (int)w : r;
    return r;
#endif
}

/* Allocate a way for a new line in set (invalid way first, else the policy's
 * victim) and fill it with mask. */
static void fill_line(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t mask,
                      gx_cache_victim *victim)
{
    uint64_t *t = set_tags(c, set);
    uint8_t *used = set_used(c, set);
    void *st = set_state(c, set);
    uint32_t w;
    if (*used < c->ways) {
        for (w = 0; w < c->ways && t[w] != GX_TAG_INVALID; w++)
            ;
        (*used)++;
    } else {
        w = c->pol.ops->victim(st, c->ways, &c->pol.params, &c->rng);
        if (w >= c->ways)
            w = 0; /* defensive: a policy bug must not corrupt memory */
        if (victim) {
            victim->valid = 1;
            victim->line_addr = t[w];
            victim->sector_mask = mask_get(c, set, w);
        }
        c->st.evictions++;
    }
    t[w] = line_addr;
    set_fps(c, set)[w] = fingerprint(line_addr);
    mask_set(c, set, w, mask);
    c->pol.ops->on_fill(st, c->ways, w, &c->pol.params);
}

gx_cache_outcome gx_cache_access(gx_cache *c, uint64_t set, uint64_t line_addr,
                                 uint32_t sector, int allocate, gx_cache_victim *victim)
{
    if (victim)
        victim->valid = 0;
    c->st.accesses++;
    uint32_t bit = 1u << sector;
    int w = find_way(c, set, line_addr);
    if (w >= 0) {
        uint32_t m = mask_get(c, set, (uint32_t)w);
        if (m & bit) {
            c->st.hits++;
            c->pol.ops->on_hit(set_state(c, set), c->ways, (uint32_t)w, &c->pol.params);
            return GX_CACHE_HIT;
        }
        c->st.sector_misses++;
        if (allocate) {
            mask_set(c, set, (uint32_t)w, m | bit);
            c->pol.ops->on_hit(set_state(c, set), c->ways, (uint32_t)w, &c->pol.params);
        }
        return GX_CACHE_SECTOR_MISS;
    }
    c->st.line_misses++;
    if (allocate)
        fill_line(c, set, line_addr, bit, victim);
    return GX_CACHE_LINE_MISS;
}

void gx_cache_prefetch(const gx_cache *c, uint64_t set)
{
    const uint8_t *b = c->mem + set * c->block;
    for (size_t o = 0; o < c->block; o += 64)
        __builtin_prefetch(b + o, 1, 3);
}

int gx_cache_contains(const gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector)
{
    int w = find_way(c, set, line_addr);
    return w >= 0 && (mask_get(c, set, (uint32_t)w) >> sector & 1u);
}

void gx_cache_insert(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector_mask,
                     gx_cache_victim *victim)
{
    if (victim)
        victim->valid = 0;
    if (!sector_mask)
        return;
    int w = find_way(c, set, line_addr);
    if (w >= 0) {
        mask_set(c, set, (uint32_t)w, mask_get(c, set, (uint32_t)w) | sector_mask);
        c->pol.ops->on_hit(set_state(c, set), c->ways, (uint32_t)w, &c->pol.params);
        return;
    }
    fill_line(c, set, line_addr, sector_mask, victim);
}

static void drop_way(gx_cache *c, uint64_t set, uint32_t w)
{
    set_tags(c, set)[w] = GX_TAG_INVALID;
    mask_set(c, set, w, 0);
    (*set_used(c, set))--;
    if (c->pol.ops->on_invalidate)
        c->pol.ops->on_invalidate(set_state(c, set), c->ways, w, &c->pol.params);
}

uint32_t gx_cache_invalidate(gx_cache *c, uint64_t set, uint64_t line_addr)
{
    int w = find_way(c, set, line_addr);
    if (w < 0)
        return 0;
    uint32_t m = mask_get(c, set, (uint32_t)w);
    drop_way(c, set, (uint32_t)w);
    return m;
}

void gx_cache_evict_random(gx_cache *c, gx_rng *rng)
{
    /* A few random sets; an empty cache simply loses nothing. */
    for (int tries = 0; tries < 8; tries++) {
        uint64_t set = gx_rng_below(rng, c->sets);
        if (!*set_used(c, set))
            continue;
        uint32_t start = (uint32_t)gx_rng_below(rng, c->ways);
        for (uint32_t k = 0; k < c->ways; k++) {
            uint32_t w = (start + k) % c->ways;
            if (set_tags(c, set)[w] != GX_TAG_INVALID) {
                drop_way(c, set, w);
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
    *s = c->st;
}

void gx_cache_reset_stats(gx_cache *c)
{
    memset(&c->st, 0, sizeof c->st);
}
