/* cache_internal.h - the cache model's layout and its hot path as inline
 * functions, private to src/model/: cache.c wraps them as the cache.h API,
 * l2.c calls them directly so that an L2 access is one inlined path.
 *
 * Models: see cache.c (sectored set-associative cache, one policy state per
 * set, a miss fills only the missed sector).
 *
 * Notes:
 * - Layout: one flat array, one block per set holding everything an access
 *   touches: a fingerprint byte per way (see gx_cv_find), the sector masks
 *   (1 byte each up to 8 sectors, else 4), the policy state, the valid-way
 *   count, then from a 64-byte boundary the tags (uint64 line addresses; an
 *   invalid way holds GX_TAG_INVALID).
 * - Replacement: policy_fast.h for tree PLRU and plru-rand (what the
 *   reference profiles use), the registry's ops for every other family.
 * - Every function taking `spec` is written once and compiled twice: spec =
 *   0 reads the way count, mask width, layout and policy kind from the
 *   cache; spec = GX_CSPEC_PLRU16 (after gx_cspec_plru16) makes them
 *   constants. Both give the same results (bench/bench_hotpath.c --digest).
 * - Statistics: one counter per outcome (accesses is their sum).
 * - Measured (callgrind, seed-ampere-6mb, random 64 MiB trace, instructions
 *   per access of the whole trace-driven run; the model's share in
 *   brackets): 500 [437] with out-of-line cache calls and the ops table,
 *   322 [~258] inlined into l2.c with policy_fast.h, 297 with the spec
 *   instance, 281 with the per-access view (gx_cview) instead of offsets
 *   re-read after every byte store. */
#ifndef GX_CACHE_INTERNAL_H
#define GX_CACHE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "gpuxray/cache.h"
#include "gpuxray/policy.h"
#include "policies/policy_fast.h"

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
    uint64_t outcomes[3]; /* accesses by gx_cache_outcome */
    uint64_t evictions;
    gx_rng rng;           /* the stream when rng_groups <= 1 */
    gx_rng *rngs;         /* rng_groups > 1: one stream per run of sets_per_rng sets */
    uint64_t sets_per_rng;
    gx_policy pol;
    gx_policy_fast pf;
};

/* The parts of one set's block, computed once per access: the hot path
 * works on these locals (stores through the byte arrays may alias anything,
 * so re-deriving them from the cache after a store costs reloads; measured
 * 293 -> 281 instructions per access, see the top). */
typedef struct gx_cview {
    uint8_t *fps;    /* a fingerprint byte per way (16-byte padded) */
    uint8_t *masks;  /* sector masks: uint8 per way, uint32 when wide */
    void *st;        /* policy state */
    uint8_t *used;   /* valid-way count */
    uint64_t *tags;  /* line addresses, GX_TAG_INVALID when invalid */
    uint64_t set;    /* the set's index (its random stream, rng_groups) */
} gx_cview;

/* The block layout cache.c builds for 16 ways, byte sector masks and an
 * 8-byte policy state (the specialised instance; gx_cspec_plru16 checks
 * that the cache has it). */
#define GX_CSPEC_BLOCK 192
#define GX_CSPEC_OFF_MASKS 16
#define GX_CSPEC_OFF_STATE 32
#define GX_CSPEC_OFF_USED 40
#define GX_CSPEC_OFF_TAGS 64

static inline __attribute__((always_inline)) gx_cview gx_cview_of_s(const gx_cache *c,
                                                                   uint64_t set, int spec)
{
    if (spec) {
        uint8_t *b = c->mem + set * GX_CSPEC_BLOCK;
        gx_cview v = {b, b + GX_CSPEC_OFF_MASKS, b + GX_CSPEC_OFF_STATE, b + GX_CSPEC_OFF_USED,
                      (uint64_t *)(void *)(b + GX_CSPEC_OFF_TAGS), set};
        return v;
    }
    uint8_t *b = c->mem + set * c->block;
    gx_cview v = {b, b + c->off_masks, b + c->off_state, b + c->off_used,
                  (uint64_t *)(void *)(b + c->off_tags), set};
    return v;
}

static inline gx_cview gx_cview_of(const gx_cache *c, uint64_t set)
{
    return gx_cview_of_s(c, set, 0);
}

static inline uint64_t *gx_cset_tags(const gx_cache *c, uint64_t set)
{
    return (uint64_t *)(void *)(c->mem + set * c->block + c->off_tags);
}

static inline void *gx_cset_state(const gx_cache *c, uint64_t set)
{
    return c->mem + set * c->block + c->off_state;
}

static inline uint8_t *gx_cset_used(const gx_cache *c, uint64_t set)
{
    return c->mem + set * c->block + c->off_used;
}

static inline uint32_t gx_cv_mask_get(const gx_cview *v, uint32_t w, int wide)
{
    return wide ? ((const uint32_t *)(const void *)v->masks)[w] : v->masks[w];
}

static inline void gx_cv_mask_set(const gx_cview *v, uint32_t w, uint32_t m, int wide)
{
    if (wide)
        ((uint32_t *)(void *)v->masks)[w] = m;
    else
        v->masks[w] = (uint8_t)m;
}

static inline uint32_t gx_cmask_get(const gx_cache *c, uint64_t set, uint32_t w)
{
    gx_cview v = gx_cview_of(c, set);
    return gx_cv_mask_get(&v, w, c->wide);
}

/* One byte of a line address's hash: candidates for a match are the ways
 * whose fingerprint is equal (about ways/256 false candidates per lookup). */
static inline uint8_t gx_cfingerprint(uint64_t line_addr)
{
    return (uint8_t)((line_addr * 0x9e3779b97f4a7c15ULL) >> 56);
}

/* The specialised instance (see the notes at the top): 16 ways, byte
 * sector masks, the PLRU fast path and the GX_CSPEC_ layout, checked by
 * gx_cspec_plru16 when the caller is built. Measured (callgrind,
 * seed-ampere-6mb random trace): 322 -> 297 instructions per access for the
 * constants alone, 247 -> 224 with the constant layout. */
#define GX_CSPEC_PLRU16 1

static inline int gx_cspec_plru16(const gx_cache *c)
{
    return c->ways == 16 && !c->wide && c->pf.kind == GX_PF_PLRU && c->pf.depth == 4 &&
           c->block == GX_CSPEC_BLOCK && c->off_masks == GX_CSPEC_OFF_MASKS &&
           c->off_state == GX_CSPEC_OFF_STATE && c->off_used == GX_CSPEC_OFF_USED &&
           c->off_tags == GX_CSPEC_OFF_TAGS;
}

/* The way holding line_addr (fingerprint fp) in the set, or -1.
 * Fingerprints (SwissTable's idea): one byte per way, compared 16 at a time
 * (SSE2), then the full tag of the rare candidates; without SSE2 a
 * conditional-move loop over the tags. A set holds a line at most once.
 * Measured on the seed profile (CPU time, one core of a loaded 2-core VM):
 * all-hit random trace 36 M accesses/s with a first-match loop over the
 * tags (its exit is mispredicted on nearly every hit), 45 M comparing two
 * tags per SSE2 step (~150 instructions an access), 60 M with fingerprints
 * (~55 instructions an access, callgrind). */
static inline __attribute__((always_inline)) int
gx_cv_find(const gx_cview *v, uint32_t ways, uint64_t way_mask, uint64_t line_addr, uint8_t fp,
           int spec)
{
#ifdef __SSE2__
    const __m128i key = _mm_set1_epi8((char)fp);
    uint64_t cand = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_load_si128((const __m128i *)(const void *)v->fps), key));
    if (!spec)
        for (uint32_t w = 16; w < ways; w += 16) {
            __m128i x = _mm_load_si128((const __m128i *)(const void *)(v->fps + w));
            cand |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, key)) << w;
        }
    cand &= spec ? 0xffffu : way_mask;
    while (cand) {
        int w = __builtin_ctzll(cand);
        if (v->tags[w] == line_addr)
            return w;
        cand &= cand - 1;
    }
    return -1;
#else
    (void)fp;
    (void)way_mask;
    (void)spec;
    int r = -1;
    for (uint32_t w = 0; w < ways; w++)
        r = v->tags[w] == line_addr ? (int)w : r;
    return r;
#endif
}

static inline int gx_cfind_way(const gx_cache *c, uint64_t set, uint64_t line_addr)
{
    gx_cview v = gx_cview_of(c, set);
    return gx_cv_find(&v, c->ways, c->way_mask, line_addr, gx_cfingerprint(line_addr), 0);
}

/* Policy hooks: the fast form when there is one, else the registry's ops. */
static inline __attribute__((always_inline)) void gx_cpol_hit_s(gx_cache *c, void *st,
                                                                uint32_t w, int spec)
{
    if (spec || c->pf.kind == GX_PF_PLRU)
        gx_pf_plru_touch(&c->pf, st, w);
    else
        c->pol.ops->on_hit(st, c->ways, w, &c->pol.params);
}

static inline __attribute__((always_inline)) void gx_cpol_fill_s(gx_cache *c, void *st,
                                                                 uint32_t w, int spec)
{
    if (spec || c->pf.kind == GX_PF_PLRU)
        gx_pf_plru_touch(&c->pf, st, w);
    else
        c->pol.ops->on_fill(st, c->ways, w, &c->pol.params);
}

static inline __attribute__((always_inline)) uint32_t gx_cpol_victim_s(gx_cache *c, void *st,
                                                                       uint64_t set, int spec)
{
    gx_rng *rng = c->rngs ? &c->rngs[set / c->sets_per_rng] : &c->rng;
    if (spec || c->pf.kind == GX_PF_PLRU)
        return gx_pf_plru_victim_s(&c->pf, *(const uint64_t *)st, c->ways, rng, spec);
    uint32_t w = c->pol.ops->victim(st, c->ways, &c->pol.params, rng);
    return w < c->ways ? w : 0; /* defensive: a policy bug must not corrupt memory */
}

/* Allocate a way for a new line in the set (invalid way first, else the
 * policy's victim) and fill it with mask. Counts an eviction when the set
 * was full. */
static inline __attribute__((always_inline)) void
gx_cv_fill(gx_cache *c, const gx_cview *v, uint64_t line_addr, uint8_t fp, uint32_t mask,
           gx_cache_victim *victim, int spec)
{
    const uint32_t ways = spec ? 16 : c->ways;
    const int wide = spec ? 0 : c->wide;
    uint32_t w;
    if (__builtin_expect(*v->used < ways, 0)) {
        for (w = 0; w < ways && v->tags[w] != GX_TAG_INVALID; w++)
            ;
        (*v->used)++;
    } else {
        w = gx_cpol_victim_s(c, v->st, v->set, spec);
        c->evictions++;
        if (victim) {
            victim->valid = 1;
            victim->line_addr = v->tags[w];
            victim->sector_mask = gx_cv_mask_get(v, w, wide);
        }
    }
    gx_cpol_fill_s(c, v->st, w, spec);
    v->tags[w] = line_addr;
    v->fps[w] = fp;
    gx_cv_mask_set(v, w, mask, wide);
}

/* gx_caccess_s with allocate, no victim and WITHOUT counting the outcome
 * (the caller counts it in c->outcomes itself: a batch keeps the counts
 * in locals). */
static inline __attribute__((always_inline)) gx_cache_outcome
gx_caccess_nc_s(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector, int spec)
{
    const gx_cview v = gx_cview_of_s(c, set, spec);
    const int wide = spec ? 0 : c->wide;
    const uint32_t bit = 1u << sector;
    const uint8_t fp = gx_cfingerprint(line_addr);
    int w = gx_cv_find(&v, spec ? 16 : c->ways, c->way_mask, line_addr, fp, spec);
    if (w >= 0) {
        uint32_t m = gx_cv_mask_get(&v, (uint32_t)w, wide);
        gx_cpol_hit_s(c, v.st, (uint32_t)w, spec);
        if (m & bit)
            return GX_CACHE_HIT;
        gx_cv_mask_set(&v, (uint32_t)w, m | bit, wide);
        return GX_CACHE_SECTOR_MISS;
    }
    gx_cv_fill(c, &v, line_addr, fp, bit, NULL, spec);
    return GX_CACHE_LINE_MISS;
}

/* gx_cache_access (cache.h), inline; spec: GX_CSPEC_PLRU16 or 0 (see above). */
static inline __attribute__((always_inline)) gx_cache_outcome
gx_caccess_s(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector, int allocate,
             gx_cache_victim *victim, int spec)
{
    if (victim)
        victim->valid = 0;
    const gx_cview v = gx_cview_of_s(c, set, spec);
    const int wide = spec ? 0 : c->wide;
    const uint32_t bit = 1u << sector;
    const uint8_t fp = gx_cfingerprint(line_addr);
    int w = gx_cv_find(&v, spec ? 16 : c->ways, c->way_mask, line_addr, fp, spec);
    gx_cache_outcome o;
    if (w >= 0) {
        uint32_t m = gx_cv_mask_get(&v, (uint32_t)w, wide);
        o = (m & bit) ? GX_CACHE_HIT : GX_CACHE_SECTOR_MISS;
        if (o == GX_CACHE_HIT || allocate) {
            gx_cpol_hit_s(c, v.st, (uint32_t)w, spec);
            if (o != GX_CACHE_HIT)
                gx_cv_mask_set(&v, (uint32_t)w, m | bit, wide);
        }
    } else {
        o = GX_CACHE_LINE_MISS;
        if (allocate)
            gx_cv_fill(c, &v, line_addr, fp, bit, victim, spec);
    }
    c->outcomes[o]++;
    return o;
}

/* gx_cache_insert (cache.h), inline. */
static inline __attribute__((always_inline)) void
gx_cinsert_s(gx_cache *c, uint64_t set, uint64_t line_addr, uint32_t sector_mask,
             gx_cache_victim *victim, int spec)
{
    if (victim)
        victim->valid = 0;
    if (!sector_mask)
        return;
    const gx_cview v = gx_cview_of_s(c, set, spec);
    const int wide = spec ? 0 : c->wide;
    const uint8_t fp = gx_cfingerprint(line_addr);
    int w = gx_cv_find(&v, spec ? 16 : c->ways, c->way_mask, line_addr, fp, spec);
    if (w >= 0) {
        gx_cpol_hit_s(c, v.st, (uint32_t)w, spec);
        gx_cv_mask_set(&v, (uint32_t)w, gx_cv_mask_get(&v, (uint32_t)w, wide) | sector_mask,
                       wide);
        return;
    }
    gx_cv_fill(c, &v, line_addr, fp, sector_mask, victim, spec);
}

/* Empty way w of the set (the policy hears of it, if it listens). */
static inline __attribute__((always_inline)) void gx_cv_drop(gx_cache *c, const gx_cview *v,
                                                             uint32_t w, int spec)
{
    v->tags[w] = GX_TAG_INVALID;
    gx_cv_mask_set(v, w, 0, spec ? 0 : c->wide);
    (*v->used)--;
    /* the fast policy kinds have no on_invalidate (gx_policy_fast_init) */
    if (!spec && c->pol.ops->on_invalidate)
        c->pol.ops->on_invalidate(v->st, c->ways, w, &c->pol.params);
}

/* gx_cache_invalidate (cache.h), inline. */
static inline __attribute__((always_inline)) uint32_t
gx_cinvalidate_s(gx_cache *c, uint64_t set, uint64_t line_addr, int spec)
{
    const gx_cview v = gx_cview_of_s(c, set, spec);
    int w = gx_cv_find(&v, spec ? 16 : c->ways, c->way_mask, line_addr,
                       gx_cfingerprint(line_addr), spec);
    if (w < 0)
        return 0;
    uint32_t m = gx_cv_mask_get(&v, (uint32_t)w, spec ? 0 : c->wide);
    gx_cv_drop(c, &v, (uint32_t)w, spec);
    return m;
}

/* Prefetch hint, inline: every host cache line of the set into the host's
 * caches; no model state change. */
static inline __attribute__((always_inline)) void gx_cprefetch_s(const gx_cache *c,
                                                                 uint64_t set, int spec)
{
    const uint8_t *b = c->mem + set * (spec ? GX_CSPEC_BLOCK : c->block);
    if (spec) {
        for (size_t o = 0; o < GX_CSPEC_BLOCK; o += 64)
            __builtin_prefetch(b + o, 1, 3);
        return;
    }
    for (size_t o = 0; o < c->block; o += 64)
        __builtin_prefetch(b + o, 1, 3);
}

static inline gx_cache_outcome gx_caccess(gx_cache *c, uint64_t set, uint64_t line_addr,
                                          uint32_t sector, int allocate,
                                          gx_cache_victim *victim)
{
    return gx_caccess_s(c, set, line_addr, sector, allocate, victim, 0);
}

#endif
