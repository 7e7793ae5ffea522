/* placement.c - virtual-to-physical placement of pages (see placement.h).
 *
 * Models: the driver's choice of physical frames, unknown to the program:
 * each virtual page gets, on first touch, a frame drawn uniformly at random
 * (seeded) among the frames not yet used, so PA bits above the page are
 * random per page and hash bits there are no more visible than on a GPU;
 * or, in contiguous mode, the frame that follows its virtual predecessor's.
 *
 * Notes:
 * - page_bytes must be a power of two; phys_bytes a multiple of it.
 * - Mapping: an open-addressing hash table vpn -> frame; used frames in a
 *   bitmap. When every frame is taken (more pages than phys_bytes holds) a
 *   frame is reused: placement stays deterministic, uniqueness is lost
 *   (never the case for arenas below phys_bytes).
 * - Offsets within the page are preserved.
 * - Contiguous mode (gx_placement_set_contiguous, the profile's
 *   sim.contiguous_frames): virtual page vpn gets frame (vpn + shift) mod
 *   nframes, shift a seeded draw below nframes / 2 made at each reset, a
 *   multiple of 1 GiB of frames (CONTIG_ALIGN_BYTES), so
 *   consecutive virtual pages get consecutive frames, as an H200's large
 *   allocations do (bench/slice_capacity: the knee of one slice's capacity
 *   curve is as sharp as consecutive frames make it). A region aligned to
 *   phys_bytes and at most phys_bytes / 2 long (every sim-target arena:
 *   1 TiB apart, 64 GiB of frames) never wraps past the last frame. A
 *   frame already taken (aliasing vpns) falls back to the next free one.
 *   The default mode draws nothing extra: its frames are unchanged. */
#include "gpuxray/placement.h"

#include <stdlib.h>
#include <string.h>

#include "gpuxray/rng.h"

#define EMPTY_KEY UINT64_MAX
/* Contiguous mode: an allocation's first frame is aligned to this (a power
 * of two): on the H200 two fresh allocations, on two chips, began at the
 * same place of the slice and set indexes (docs/nvidia-h200.md, "The knee
 * from the measured sets"); aligned, every index whose pattern repeats
 * within 1 GiB starts an arena at the same place. */
#define CONTIG_ALIGN_BYTES (1ULL << 30)

struct gx_placement {
    uint64_t page_bytes, page_shift, nframes, used_frames;
    uint64_t *used;      /* bitmap of nframes bits */
    uint64_t *keys;      /* vpn, EMPTY_KEY when empty */
    uint64_t *vals;      /* frame */
    uint64_t cap, count; /* table capacity (power of two), entries */
    int contiguous;      /* contiguous mode (see Notes) */
    uint64_t shift;      /* contiguous mode: frame = (vpn + shift) mod nframes */
    gx_rng rng;
};

static int alloc_table(gx_placement *pl, uint64_t cap)
{
    uint64_t *k = malloc((size_t)cap * sizeof *k);
    uint64_t *v = malloc((size_t)cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return GX_ENOMEM;
    }
    for (uint64_t i = 0; i < cap; i++)
        k[i] = EMPTY_KEY;
    free(pl->keys);
    free(pl->vals);
    pl->keys = k;
    pl->vals = v;
    pl->cap = cap;
    pl->count = 0;
    return GX_OK;
}

int gx_placement_new(uint64_t page_bytes, uint64_t phys_bytes, uint64_t seed,
                     gx_placement **out, gx_msg *msg)
{
    *out = NULL;
    if (!page_bytes || (page_bytes & (page_bytes - 1)))
        return gx_fail(msg, GX_EINVAL, "placement: page_bytes %llu is not a power of two",
                       (unsigned long long)page_bytes);
    if (phys_bytes < page_bytes || phys_bytes % page_bytes)
        return gx_fail(msg, GX_EINVAL,
                       "placement: phys_bytes %llu is not a positive multiple of page_bytes %llu",
                       (unsigned long long)phys_bytes, (unsigned long long)page_bytes);
    gx_placement *pl = calloc(1, sizeof *pl);
    if (!pl)
        return gx_fail(msg, GX_ENOMEM, "placement: out of memory");
    pl->page_bytes = page_bytes;
    pl->page_shift = (uint64_t)__builtin_ctzll(page_bytes);
    pl->nframes = phys_bytes / page_bytes;
    pl->used = calloc((size_t)((pl->nframes + 63) / 64), sizeof *pl->used);
    if (!pl->used || alloc_table(pl, 1024) != GX_OK) {
        gx_placement_free(pl);
        return gx_fail(msg, GX_ENOMEM, "placement: out of memory");
    }
    gx_rng_seed(&pl->rng, seed);
    *out = pl;
    return GX_OK;
}

void gx_placement_free(gx_placement *pl)
{
    if (!pl)
        return;
    free(pl->used);
    free(pl->keys);
    free(pl->vals);
    free(pl);
}

static uint64_t slot_of(const gx_placement *pl, uint64_t vpn)
{
    return gx_mix64(vpn) & (pl->cap - 1);
}

static void put(gx_placement *pl, uint64_t vpn, uint64_t frame)
{
    uint64_t i = slot_of(pl, vpn);
    while (pl->keys[i] != EMPTY_KEY)
        i = (i + 1) & (pl->cap - 1);
    pl->keys[i] = vpn;
    pl->vals[i] = frame;
    pl->count++;
}

static void grow(gx_placement *pl)
{
    uint64_t *ok = pl->keys, *ov = pl->vals, ocap = pl->cap;
    pl->keys = pl->vals = NULL;
    if (alloc_table(pl, ocap * 2) != GX_OK) {
        /* keep the old table (it still works, just fuller) */
        pl->keys = ok;
        pl->vals = ov;
        pl->cap = ocap;
        return;
    }
    for (uint64_t i = 0; i < ocap; i++)
        if (ok[i] != EMPTY_KEY)
            put(pl, ok[i], ov[i]);
    free(ok);
    free(ov);
}

static uint64_t new_frame(gx_placement *pl, uint64_t vpn)
{
    uint64_t f = pl->contiguous ? (vpn % pl->nframes + pl->shift) % pl->nframes
                                : gx_rng_below(&pl->rng, pl->nframes);
    if (pl->used_frames >= pl->nframes)
        return f; /* physical space exhausted: reuse (documented) */
    while (pl->used[f / 64] >> (f % 64) & 1u)
        f = (f + 1) % pl->nframes;
    pl->used[f / 64] |= (uint64_t)1 << (f % 64);
    pl->used_frames++;
    return f;
}

uint64_t gx_placement_translate(gx_placement *pl, uint64_t va)
{
    uint64_t vpn = va >> pl->page_shift;
    uint64_t off = va & (pl->page_bytes - 1);
    uint64_t i = slot_of(pl, vpn);
    while (pl->keys[i] != EMPTY_KEY) {
        if (pl->keys[i] == vpn)
            return (pl->vals[i] << pl->page_shift) | off;
        i = (i + 1) & (pl->cap - 1);
    }
    uint64_t f = new_frame(pl, vpn);
    if ((pl->count + 1) * 2 > pl->cap)
        grow(pl);
    put(pl, vpn, f);
    return (f << pl->page_shift) | off;
}

/* Contiguous mode: the start of the frames, below nframes / 2 and a
 * multiple of CONTIG_ALIGN_BYTES (see Notes); the default mode draws
 * nothing. */
static void draw_shift(gx_placement *pl)
{
    pl->shift = 0;
    if (!pl->contiguous)
        return;
    const uint64_t align = CONTIG_ALIGN_BYTES > pl->page_bytes ? CONTIG_ALIGN_BYTES / pl->page_bytes : 1;
    const uint64_t starts = pl->nframes / 2 / align;
    pl->shift = gx_rng_below(&pl->rng, starts ? starts : 1) * align;
}

void gx_placement_reset(gx_placement *pl, uint64_t seed)
{
    for (uint64_t i = 0; i < pl->cap; i++)
        pl->keys[i] = EMPTY_KEY;
    pl->count = 0;
    memset(pl->used, 0, (size_t)((pl->nframes + 63) / 64) * sizeof *pl->used);
    pl->used_frames = 0;
    gx_rng_seed(&pl->rng, seed);
    draw_shift(pl);
}

void gx_placement_set_contiguous(gx_placement *pl, int on)
{
    pl->contiguous = on ? 1 : 0;
    draw_shift(pl);
}

void gx_placement_usage(const gx_placement *pl, uint64_t *pages, uint64_t *frames)
{
    *pages = pl->count;
    *frames = pl->nframes;
}
