/* advise_patterns.c - the advisor's drivers: the array patterns (row,
 * col, tile), the padding search, traces through the streaming reader,
 * and the persisting-window hit ratio. The engine is advise.c.
 *
 * Notes:
 * - Warp order of the patterns (what a kernel with one thread per element
 *   and consecutive threads in consecutive lanes does): row: element i of
 *   the row-major order is thread i; col: warp w reads column w % cols over
 *   rows 32 * (w / cols) .. + 31 (lane = row); tile: tiles in row-major
 *   order, thread i of a tile is (i / tile_w, i % tile_w).
 * - Padding candidates: the given pitch plus 0 .. max_pad elements; the
 *   search runs on a prefix (search_lanes) so that a large array costs
 *   little; the chosen pad and the unpadded layout are then evaluated on
 *   max_lanes. A tie keeps the smaller pad. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adv_int.h"
#include "gpuxray/trace.h"

#define ADV_SCORE_EPS 0.01 /* imbalance differences below this are ties (sampling noise) */
#define ADV_TRACE_BATCH 4096

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

int gx_adv_parse_array(const char *s, gx_adv_cfg *c, gx_msg *msg)
{
    uint64_t rows = 0, cols = 0, elem = 0, pitch = 0;
    const char *p = s;
    while (p && *p) {
        const char *e = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!eq || eq >= p + len)
            return gx_fail(msg, GX_EINVAL, "--array: '%.*s' is not key=value", (int)len, p);
        size_t kl = (size_t)(eq - p);
        uint64_t v;
        if (parse_u64(eq + 1, len - kl - 1, &v) != 0 || v == 0)
            return gx_fail(msg, GX_EINVAL, "--array: '%.*s' needs a positive integer", (int)len, p);
        if (kl == 4 && !strncmp(p, "rows", 4))
            rows = v;
        else if (kl == 4 && !strncmp(p, "cols", 4))
            cols = v;
        else if (kl == 4 && !strncmp(p, "elem", 4))
            elem = v;
        else if (kl == 5 && !strncmp(p, "pitch", 5))
            pitch = v;
        else
            return gx_fail(msg, GX_EINVAL, "--array: unknown key '%.*s' (rows, cols, elem, pitch)",
                           (int)kl, p);
        p = e ? e + 1 : NULL;
    }
    if (!rows || !cols || !elem)
        return gx_fail(msg, GX_EINVAL, "--array needs rows=, cols= and elem=");
    if (elem > 128)
        return gx_fail(msg, GX_EINVAL, "--array: elem=%llu bytes (at most 128)",
                       (unsigned long long)elem);
    if (pitch && pitch < cols)
        return gx_fail(msg, GX_EINVAL, "--array: pitch %llu < cols %llu", (unsigned long long)pitch,
                       (unsigned long long)cols);
    uint64_t pt = pitch ? pitch : cols;
    if (rows > (1ULL << 40) / pt || pt * rows > (1ULL << 46) / elem)
        return gx_fail(msg, GX_EINVAL, "--array: more than 64 TiB");
    c->rows = rows;
    c->cols = cols;
    c->elem_bytes = (uint32_t)elem;
    c->pitch = pitch;
    return GX_OK;
}

int gx_adv_parse_pattern(const char *s, gx_adv_cfg *c, gx_msg *msg)
{
    if (!strcmp(s, "row")) {
        c->pattern = GX_ADV_ROW;
    } else if (!strcmp(s, "col")) {
        c->pattern = GX_ADV_COL;
    } else if (!strncmp(s, "tile:", 5)) {
        const char *x = strchr(s + 5, 'x');
        uint64_t h, w;
        if (!x || parse_u64(s + 5, (size_t)(x - s - 5), &h) != 0 ||
            parse_u64(x + 1, strlen(x + 1), &w) != 0 || !h || !w || h > 65536 || w > 65536)
            return gx_fail(msg, GX_EINVAL, "--pattern '%s': need tile:HxW (1..65536)", s);
        c->pattern = GX_ADV_TILE;
        c->tile_h = (uint32_t)h;
        c->tile_w = (uint32_t)w;
    } else {
        return gx_fail(msg, GX_EINVAL, "--pattern '%s': row, col or tile:HxW", s);
    }
    return GX_OK;
}

/* Address of element (r, c). */
static uint64_t elem_addr(const gx_adv_cfg *c, uint64_t pitch, uint64_t r, uint64_t col)
{
    return c->base + (r * pitch + col) * c->elem_bytes;
}

/* Thread t of the pattern: its element, or 0 when t is past the end or
 * inactive (a lane past the row / tile edge). */
static int thread_elem(const gx_adv_cfg *c, uint64_t t, uint64_t *r, uint64_t *col, int *done)
{
    *done = 0;
    if (c->pattern == GX_ADV_ROW) {
        uint64_t wpr = (c->cols + 31) / 32, w = t / 32;
        *r = w / wpr;
        *col = (w % wpr) * 32 + t % 32;
        *done = *r >= c->rows;
        return !*done && *col < c->cols;
    }
    if (c->pattern == GX_ADV_COL) {
        uint64_t w = t / 32;
        *col = w % c->cols;
        *r = (w / c->cols) * 32 + t % 32;
        *done = (w / c->cols) * 32 >= c->rows;
        return !*done && *r < c->rows;
    }
    uint64_t per = (uint64_t)c->tile_h * c->tile_w, tiles_x = (c->cols + c->tile_w - 1) / c->tile_w;
    uint64_t tile = t / per, i = t % per;
    uint64_t ty = tile / tiles_x, tx = tile % tiles_x;
    *r = ty * c->tile_h + i / c->tile_w;
    *col = tx * c->tile_w + i % c->tile_w;
    *done = ty * c->tile_h >= c->rows;
    return !*done && *r < c->rows && *col < c->cols;
}

static int run_array(const gx_profile *p, const gx_adv_cfg *c, uint64_t pitch, uint64_t max_lanes,
                     gx_adv_result *r, gx_msg *msg)
{
    adv_state s;
    int rc = adv_init(&s, p, c->sms, msg);
    if (rc != GX_OK)
        return rc;
    uint64_t addr[ADV_MAX_LANES];
    uint32_t size[ADV_MAX_LANES];
    for (uint64_t t0 = 0;; t0 += ADV_MAX_LANES) {
        uint32_t n = 0;
        int done = 0;
        for (uint32_t l = 0; l < ADV_MAX_LANES; l++) {
            uint64_t row, col;
            if (thread_elem(c, t0 + l, &row, &col, &done)) {
                addr[n] = elem_addr(c, pitch, row, col);
                size[n++] = c->elem_bytes;
            }
            if (done)
                break;
        }
        adv_warp(&s, addr, size, n);
        if (done && n == 0)
            break;
        if (max_lanes && s.lanes >= max_lanes) {
            s.stopped = 1;
            break;
        }
    }
    adv_finish(&s, r);
    adv_free(&s);
    return GX_OK;
}

static int check_cfg(const gx_adv_cfg *c, gx_msg *msg)
{
    if (!c || !c->rows || !c->cols || !c->elem_bytes)
        return gx_fail(msg, GX_EINVAL, "advise: the array needs rows, cols and elem");
    if (c->pattern == GX_ADV_TILE && (!c->tile_h || !c->tile_w))
        return gx_fail(msg, GX_EINVAL, "advise: tile pattern needs its size");
    return GX_OK;
}

int gx_advise_array(const gx_profile *p, const gx_adv_cfg *c, gx_adv_result *r, gx_msg *msg)
{
    int rc = check_cfg(c, msg);
    if (rc != GX_OK)
        return rc;
    return run_array(p, c, c->pitch ? c->pitch : c->cols, c->max_lanes, r, msg);
}

/* Lower is better: wave slice balance, then sets over their ways. */
static int better(const gx_adv_result *a, const gx_adv_result *b)
{
    if (a->wave_slice_imbalance < b->wave_slice_imbalance - ADV_SCORE_EPS)
        return 1;
    if (a->wave_slice_imbalance > b->wave_slice_imbalance + ADV_SCORE_EPS)
        return 0;
    return a->sets_over_ways < b->sets_over_ways;
}

int gx_advise_padding(const gx_profile *p, const gx_adv_cfg *c, uint32_t max_pad,
                      uint64_t search_lanes, uint32_t *best_pad, gx_adv_result *before,
                      gx_adv_result *after, gx_msg *msg)
{
    int rc = check_cfg(c, msg);
    if (rc != GX_OK)
        return rc;
    uint64_t pitch = c->pitch ? c->pitch : c->cols;
    gx_adv_result best, cur;
    *best_pad = 0;
    if ((rc = run_array(p, c, pitch, search_lanes, &best, msg)) != GX_OK)
        return rc;
    for (uint32_t pad = 1; pad <= max_pad; pad++) {
        if ((rc = run_array(p, c, pitch + pad, search_lanes, &cur, msg)) != GX_OK)
            return rc;
        if (better(&cur, &best)) {
            best = cur;
            *best_pad = pad;
        }
    }
    if ((rc = run_array(p, c, pitch, c->max_lanes, before, msg)) != GX_OK)
        return rc;
    if (*best_pad == 0) {
        *after = *before;
        return GX_OK;
    }
    if ((rc = run_array(p, c, pitch + *best_pad, c->max_lanes, after, msg)) != GX_OK)
        return rc;
    if (!better(after, before)) { /* the prefix misled: the whole pattern says no */
        *best_pad = 0;
        *after = *before;
    }
    return GX_OK;
}

int gx_advise_trace(const gx_profile *p, const char *path, uint32_t sms, uint64_t max_lanes,
                    gx_adv_result *r, gx_msg *msg)
{
    gx_trace_reader *rd = NULL;
    int rc = gx_trace_reader_open(path, 0, &rd, msg);
    if (rc != GX_OK)
        return rc;
    adv_state s;
    if ((rc = adv_init(&s, p, sms, msg)) != GX_OK) {
        gx_trace_reader_close(rd);
        return rc;
    }
    gx_trace_rec *buf = malloc(ADV_TRACE_BATCH * sizeof *buf);
    uint64_t addr[ADV_MAX_LANES];
    uint32_t size[ADV_MAX_LANES], n = 0, cur_sm = 0, cur_warp = 0;
    if (!buf)
        rc = gx_fail(msg, GX_ENOMEM, "advise: out of memory");
    while (rc == GX_OK) {
        size_t got = 0;
        if ((rc = gx_trace_reader_next(rd, buf, ADV_TRACE_BATCH, &got, msg)) != GX_OK || !got)
            break;
        for (size_t i = 0; i < got; i++) {
            const gx_trace_rec *t = &buf[i];
            if (!gx_trace_op_is_global(t->op))
                continue;
            int same = n && t->warp && t->warp == cur_warp && t->sm == cur_sm && n < ADV_MAX_LANES;
            if (!same && n) {
                adv_warp(&s, addr, size, n);
                n = 0;
            }
            addr[n] = t->addr;
            size[n++] = t->size;
            cur_sm = t->sm;
            cur_warp = t->warp;
        }
        if (max_lanes && s.lanes >= max_lanes) {
            s.stopped = 1;
            break;
        }
    }
    if (rc == GX_OK && n)
        adv_warp(&s, addr, size, n);
    if (rc == GX_OK)
        adv_finish(&s, r);
    free(buf);
    adv_free(&s);
    gx_trace_reader_close(rd);
    return rc;
}

int gx_advise_persist(const gx_profile *p, uint64_t bytes, gx_persist *r, gx_msg *msg)
{
    if (!p || !r || !bytes)
        return gx_fail(msg, GX_EINVAL, "advise persist: need a profile and --bytes > 0");
    memset(r, 0, sizeof *r);
    r->window_bytes = bytes;
    if (p->l2.persisting_carveout_bytes) {
        r->known = 1;
        r->carveout_bytes = p->l2.persisting_carveout_bytes;
        r->hit_ratio = r->carveout_bytes >= bytes ? 1.0 : (double)r->carveout_bytes / (double)bytes;
    }
    return GX_OK;
}
