/* gen.c - synthetic trace generators: stream, stride, random and tile
 * (2-D tiled matrix walk), with SM assignment and a read/write/atomic mix.
 *
 * Notes:
 * - Three independent seeded streams (addresses, SMs, ops, all derived from
 *   cfg.seed) so that changing the write ratio or the SM assignment does not
 *   change the addresses of a random trace.
 * - stream and stride repeat their pass when count exceeds it: stream walks
 *   footprint/size elements, stride floor(footprint/stride) positions.
 * - random draws size-aligned offsets uniformly in [0, footprint/size).
 * - tile visits a rows x cols row-major matrix block by block; edge blocks
 *   are partial when tile does not divide rows or cols.
 * - pages (gen_pages.c) emits its MAP records first, then its accesses. */
#include <stdlib.h>
#include <string.h>

#include "gen_pages.h"
#include "gpuxray/trace.h"
#include "trace_io.h"

#define DEFAULT_RANDOM_COUNT 1000000ULL

void gx_gen_defaults(gx_gen_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->pattern = GX_GEN_STREAM;
    c->footprint_bytes = 64ULL << 20;
    c->stride_bytes = 128;
    c->size_bytes = 32;
    c->sms = 1;
    c->sm_assign = GX_SM_ROUNDROBIN;
    c->seed = 1;
    c->rows = 1024;
    c->cols = 1024;
    c->elem_bytes = 4;
    c->tile = 32;
    c->page_bytes = 4096;
    c->page_stride = 16;
}

static const char *const pattern_names[] = {"stream", "stride", "random", "tile", "pages"};
static const char *const assign_names[] = {"roundrobin", "block", "random"};

const char *gx_gen_pattern_name(gx_gen_pattern p)
{
    return (unsigned)p < 5 ? pattern_names[p] : "?";
}

int gx_gen_pattern_parse(const char *s, gx_gen_pattern *out)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, pattern_names[i])) {
            *out = (gx_gen_pattern)i;
            return GX_OK;
        }
    return GX_EINVAL;
}

int gx_page_order_parse(const char *s, gx_page_order *out)
{
    static const char *const names[] = {"sequential", "strided", "random"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (gx_page_order)i;
            return GX_OK;
        }
    return GX_EINVAL;
}

int gx_sm_assign_parse(const char *s, gx_sm_assign *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, assign_names[i])) {
            *out = (gx_sm_assign)i;
            return GX_OK;
        }
    return GX_EINVAL;
}

static uint64_t tile_elems(const gx_gen_cfg *c)
{
    return c->rows * c->cols;
}

uint64_t gx_gen_count(const gx_gen_cfg *c)
{
    if (c->count)
        return c->count;
    switch (c->pattern) {
    case GX_GEN_STREAM:
        return c->size_bytes ? c->footprint_bytes / c->size_bytes : 0;
    case GX_GEN_STRIDE:
        return c->stride_bytes ? c->footprint_bytes / c->stride_bytes : 0;
    case GX_GEN_TILE:
        return tile_elems(c);
    default:
        return DEFAULT_RANDOM_COUNT;
    }
}

static int check_tile(const gx_gen_cfg *c, gx_msg *msg)
{
    if (!c->rows || !c->cols)
        return gx_fail(msg, GX_EINVAL, "--rows and --cols must be > 0");
    if (c->elem_bytes < 1 || c->elem_bytes > GX_TRACE_MAX_SIZE)
        return gx_fail(msg, GX_EINVAL, "--elem %u: must be 1..%d bytes", c->elem_bytes,
                       GX_TRACE_MAX_SIZE);
    if (!c->tile)
        return gx_fail(msg, GX_EINVAL, "--tile must be > 0");
    if (c->rows > UINT64_MAX / c->cols || tile_elems(c) > UINT64_MAX / c->elem_bytes ||
        c->base > UINT64_MAX - tile_elems(c) * c->elem_bytes)
        return gx_fail(msg, GX_EINVAL, "--rows x --cols x --elem overflows the address space");
    return GX_OK;
}

int gx_gen_check(const gx_gen_cfg *c, gx_msg *msg)
{
    if ((unsigned)c->pattern > GX_GEN_PAGES)
        return gx_fail(msg, GX_EINVAL, "unknown pattern %d", (int)c->pattern);
    if ((unsigned)c->sm_assign > GX_SM_RANDOM)
        return gx_fail(msg, GX_EINVAL, "unknown SM assignment %d", (int)c->sm_assign);
    if (c->sms < 1)
        return gx_fail(msg, GX_EINVAL, "--sms must be >= 1");
    if (!(c->write_ratio >= 0 && c->write_ratio <= 1))
        return gx_fail(msg, GX_EINVAL, "--write-ratio %g: must be in [0, 1]", c->write_ratio);
    if (!(c->atomic_ratio >= 0 && c->atomic_ratio <= 1))
        return gx_fail(msg, GX_EINVAL, "--atomic-ratio %g: must be in [0, 1]", c->atomic_ratio);
    if (c->write_ratio + c->atomic_ratio > 1)
        return gx_fail(msg, GX_EINVAL, "--write-ratio + --atomic-ratio = %g: must be <= 1",
                       c->write_ratio + c->atomic_ratio);
    if (c->pattern == GX_GEN_TILE)
        return check_tile(c, msg);
    if (c->pattern == GX_GEN_PAGES)
        return gx_gen_pages_check(c, msg);
    if (c->size_bytes < 1 || c->size_bytes > GX_TRACE_MAX_SIZE)
        return gx_fail(msg, GX_EINVAL, "--size %u: must be 1..%d bytes", c->size_bytes,
                       GX_TRACE_MAX_SIZE);
    if (c->footprint_bytes < c->size_bytes)
        return gx_fail(msg, GX_EINVAL, "--footprint %llu: must be >= the access size %u",
                       (unsigned long long)c->footprint_bytes, c->size_bytes);
    if (c->base > UINT64_MAX - c->footprint_bytes)
        return gx_fail(msg, GX_EINVAL, "--base + --footprint overflows the address space");
    if (c->pattern == GX_GEN_STRIDE &&
        (!c->stride_bytes || c->stride_bytes > c->footprint_bytes))
        return gx_fail(msg, GX_EINVAL, "--stride %llu: must be 1..footprint (%llu) bytes",
                       (unsigned long long)c->stride_bytes,
                       (unsigned long long)c->footprint_bytes);
    if (gx_gen_count(c) == 0)
        return gx_fail(msg, GX_EINVAL, "the trace would be empty (--count)");
    return GX_OK;
}

int gx_gen_init(gx_gen *g, const gx_gen_cfg *c, gx_msg *msg)
{
    int rc = gx_gen_check(c, msg);
    if (rc)
        return rc;
    memset(g, 0, sizeof *g);
    g->cfg = *c;
    g->n = gx_gen_count(c);
    gx_rng_seed(&g->rng_addr, c->seed);
    gx_rng_seed(&g->rng_sm, gx_mix64(c->seed ^ 0x5350ULL));
    gx_rng_seed(&g->rng_op, gx_mix64(c->seed ^ 0x4f50ULL));
    if (c->pattern == GX_GEN_PAGES)
        g->n = gx_gen_pages_records(c);
    return GX_OK;
}

/* Offset of the current tile-walk element, then advance. */
static uint64_t tile_next(gx_gen *g)
{
    const gx_gen_cfg *c = &g->cfg;
    uint64_t row = g->tr * c->tile + g->ri, col = g->tc * c->tile + g->ci;
    uint64_t off = (row * c->cols + col) * c->elem_bytes;
    uint64_t w = c->cols - g->tc * c->tile, h = c->rows - g->tr * c->tile;
    if (w > c->tile)
        w = c->tile;
    if (h > c->tile)
        h = c->tile;
    if (++g->ci < w)
        return off;
    g->ci = 0;
    if (++g->ri < h)
        return off;
    g->ri = 0;
    if (++g->tc * c->tile < c->cols)
        return off;
    g->tc = 0;
    if (++g->tr * c->tile >= c->rows)
        g->tr = 0;
    return off;
}

static uint32_t next_sm(gx_gen *g)
{
    const gx_gen_cfg *c = &g->cfg;
    switch (c->sm_assign) {
    case GX_SM_BLOCK:
        return (uint32_t)(((unsigned __int128)g->i * c->sms) / g->n);
    case GX_SM_RANDOM:
        return (uint32_t)gx_rng_below(&g->rng_sm, c->sms);
    default:
        return (uint32_t)(g->i % c->sms);
    }
}

static uint8_t next_op(gx_gen *g)
{
    const gx_gen_cfg *c = &g->cfg;
    if (c->write_ratio <= 0 && c->atomic_ratio <= 0)
        return GX_TRACE_READ;
    double u = gx_rng_uniform(&g->rng_op);
    if (u < c->write_ratio)
        return GX_TRACE_WRITE;
    if (u < c->write_ratio + c->atomic_ratio)
        return GX_TRACE_ATOMIC;
    return GX_TRACE_READ;
}

int gx_gen_next(gx_gen *g, gx_trace_rec *r)
{
    if (g->i >= g->n)
        return 0;
    const gx_gen_cfg *c = &g->cfg;
    if (c->pattern == GX_GEN_PAGES) {
        gx_gen_pages_next(g, r);
        if (r->op != GX_TRACE_MAP) {
            r->sm = next_sm(g);
            r->op = next_op(g);
        }
        g->i++;
        return 1;
    }
    uint64_t off;
    uint32_t size = c->size_bytes;
    switch (c->pattern) {
    case GX_GEN_STREAM:
        off = (g->i % (c->footprint_bytes / size)) * size;
        break;
    case GX_GEN_STRIDE:
        off = (g->i % (c->footprint_bytes / c->stride_bytes)) * c->stride_bytes;
        break;
    case GX_GEN_RANDOM:
        off = gx_rng_below(&g->rng_addr, c->footprint_bytes / size) * size;
        break;
    default:
        off = tile_next(g);
        size = c->elem_bytes;
        break;
    }
    memset(r, 0, sizeof *r);
    r->addr = c->base + off;
    r->sm = next_sm(g);
    r->size = (uint16_t)size;
    r->op = next_op(g);
    g->i++;
    return 1;
}

int gx_trace_generate(const gx_gen_cfg *c, gx_trace *out, gx_msg *msg)
{
    gx_gen g;
    int rc = gx_gen_init(&g, c, msg);
    if (rc)
        return rc;
    rc = gx_trace_reserve(out, out->n + g.n, msg);
    if (rc)
        return rc;
    while (gx_gen_next(&g, &out->rec[out->n]))
        out->n++;
    return GX_OK;
}

int gx_gen_save(const gx_gen_cfg *c, const char *path, gx_trace_format fmt, gx_msg *msg)
{
    gx_gen g;
    int rc = gx_gen_init(&g, c, msg);
    if (rc)
        return rc;
    gx_tw *w = malloc(sizeof *w);
    if (!w)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    rc = gx_tw_open(w, path, fmt, g.n, msg);
    if (rc) {
        free(w);
        return rc;
    }
    gx_trace_rec r;
    while (rc == GX_OK && gx_gen_next(&g, &r))
        rc = gx_tw_put(w, &r);
    rc = gx_tw_end(w, rc);
    free(w);
    return rc;
}
