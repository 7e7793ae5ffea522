/* smem_tile.c - advice for a shared-memory tile (`gpuxray advise
 * --smem-tile`): the bank conflicts of reading a row-major H x W tile of
 * B-byte elements row by row or transposed (column by column), through the
 * bank model, and the row padding that removes them, with the cycles saved.
 *
 * Model of the reads: the tile's element (r, c) lives at byte
 * r * pitch + c * B, pitch = (W + pad) * B. A warp instruction reads 32
 * consecutive elements in the read's order (row: r-major; transposed:
 * c-major, lane i of a column walk at row i mod H); the last instruction
 * of an order may have fewer active lanes. Each lane loads its whole
 * element (B = 1..16 bytes, the widest lane load).
 *
 * Notes: the padding searched is 0 .. one bank row in elements (banks x
 * bank_bytes / B): conflicts depend on the pitch modulo the bank row, so
 * larger pads repeat these. The smallest pad with the fewest cycles over
 * the asked reads wins. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/smem.h"

#define TILE_MAX_ELEMS (1u << 24) /* 16 M elements: far beyond any block's shared memory */

static int parse_u32(const char *s, size_t len, uint32_t *out)
{
    if (len == 0 || len > 10)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int gx_smem_tile_parse(const char *spec, gx_smem_tile *t, gx_msg *msg)
{
    memset(t, 0, sizeof *t);
    t->reads = GX_SMEM_READ_ROW | GX_SMEM_READ_COL;
    t->pad = -1;
    const char *x = spec ? strchr(spec, 'x') : NULL;
    const char *comma = spec ? strchr(spec, ',') : NULL;
    if (!spec || !x || (comma && comma < x))
        return gx_fail(msg, GX_EINVAL, "--smem-tile '%s': expected HxW,elem=B", spec ? spec : "");
    const char *wend = comma ? comma : spec + strlen(spec);
    if (parse_u32(spec, (size_t)(x - spec), &t->rows) || parse_u32(x + 1, (size_t)(wend - x - 1), &t->cols) ||
        !t->rows || !t->cols)
        return gx_fail(msg, GX_EINVAL, "--smem-tile '%s': H and W must be positive integers", spec);
    if ((uint64_t)t->rows * t->cols > TILE_MAX_ELEMS)
        return gx_fail(msg, GX_ERANGE, "--smem-tile '%s': more than %u elements", spec, TILE_MAX_ELEMS);
    for (const char *p = comma; p && *p;) {
        p++;
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        uint32_t v = 0;
        if (len > 5 && !strncmp(p, "elem=", 5)) {
            if (parse_u32(p + 5, len - 5, &v) || v == 0 || v > GX_SMEM_MAX_WIDTH)
                return gx_fail(msg, GX_EINVAL, "--smem-tile '%s': elem=B needs 1..%d bytes", spec,
                               GX_SMEM_MAX_WIDTH);
            t->elem_bytes = v;
        } else if (len > 4 && !strncmp(p, "pad=", 4)) {
            if (parse_u32(p + 4, len - 4, &v) || v > 1024)
                return gx_fail(msg, GX_EINVAL, "--smem-tile '%s': pad=N needs 0..1024 elements", spec);
            t->pad = (int)v;
        } else if (len == 8 && !strncmp(p, "read=row", 8)) {
            t->reads = GX_SMEM_READ_ROW;
        } else if ((len == 8 && !strncmp(p, "read=col", 8)) ||
                   (len == 15 && !strncmp(p, "read=transposed", 15))) {
            t->reads = GX_SMEM_READ_COL;
        } else if (len == 9 && !strncmp(p, "read=both", 9)) {
            t->reads = GX_SMEM_READ_ROW | GX_SMEM_READ_COL;
        } else {
            return gx_fail(msg, GX_EINVAL,
                           "--smem-tile '%s': unknown part '%.*s' (elem=B, read=row|col|both, pad=N)",
                           spec, (int)len, p);
        }
        p = e;
    }
    if (!t->elem_bytes)
        return gx_fail(msg, GX_EINVAL, "--smem-tile '%s': elem=B is required", spec);
    return GX_OK;
}

/* One read order of the tile at one pad: totals over its warp instructions. */
static int read_cost(const gx_smem_cfg *c, const gx_smem_tile *t, int col, uint32_t pad,
                     gx_smem_tile_read *out, gx_msg *msg)
{
    memset(out, 0, sizeof *out);
    const uint64_t n = (uint64_t)t->rows * t->cols, pitch = (uint64_t)(t->cols + pad) * t->elem_bytes;
    for (uint64_t k0 = 0; k0 < n; k0 += GX_SMEM_LANES) {
        uint32_t addr[GX_SMEM_LANES] = {0}, active = 0;
        for (uint32_t i = 0; i < GX_SMEM_LANES && k0 + i < n; i++) {
            uint64_t k = k0 + i, r = col ? k % t->rows : k / t->cols, cc = col ? k / t->rows : k % t->cols;
            addr[i] = (uint32_t)(r * pitch + cc * t->elem_bytes);
            active |= 1u << i;
        }
        gx_smem_cost k;
        int rc = gx_smem_warp_cost(c, addr, active, t->elem_bytes, &k, msg);
        if (rc != GX_OK)
            return rc;
        out->warp_accesses++;
        out->transfers += k.transfers;
        out->cycles += k.cycles;
        if (k.degree > out->max_degree)
            out->max_degree = k.degree;
    }
    return GX_OK;
}

static int analyze(const gx_smem_cfg *c, const gx_smem_tile *t, uint32_t pad,
                   gx_smem_tile_read out[2], double *cycles, gx_msg *msg)
{
    *cycles = 0;
    for (int col = 0; col < 2; col++) {
        memset(&out[col], 0, sizeof out[col]);
        if (!(t->reads & (col ? GX_SMEM_READ_COL : GX_SMEM_READ_ROW)))
            continue;
        int rc = read_cost(c, t, col, pad, &out[col], msg);
        if (rc != GX_OK)
            return rc;
        *cycles += out[col].cycles;
    }
    return GX_OK;
}

int gx_smem_tile_advise(const gx_smem_cfg *c, const gx_smem_tile *t, gx_smem_tile_advice *a,
                        gx_msg *msg)
{
    memset(a, 0, sizeof *a);
    int rc = gx_smem_cfg_validate(c, 1, msg);
    if (rc != GX_OK)
        return rc;
    a->tile = *t;
    a->pad_given = t->pad >= 0 ? (uint32_t)t->pad : 0;
    if ((rc = analyze(c, t, a->pad_given, a->before, &a->before_cycles, msg)) != GX_OK)
        return rc;
    const uint32_t max_pad = c->banks * c->bank_bytes / t->elem_bytes;
    a->best_pad = a->pad_given;
    a->after_cycles = a->before_cycles;
    memcpy(a->after, a->before, sizeof a->after);
    for (uint32_t p = 0; p <= max_pad; p++) {
        gx_smem_tile_read r[2];
        double cyc = 0;
        if ((rc = analyze(c, t, p, r, &cyc, msg)) != GX_OK)
            return rc;
        if (cyc < a->after_cycles - 1e-9) {
            a->after_cycles = cyc;
            a->best_pad = p;
            memcpy(a->after, r, sizeof a->after);
        }
    }
    a->saved_cycles = a->before_cycles - a->after_cycles;
    uint32_t addr[GX_SMEM_LANES];
    for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
        addr[i] = i * t->elem_bytes;
    gx_smem_cost k;
    if ((rc = gx_smem_warp_cost(c, addr, UINT32_MAX, t->elem_bytes, &k, msg)) != GX_OK)
        return rc;
    a->contiguous_transfers = k.transfers;
    a->extra_bytes = (uint64_t)t->rows * (a->best_pad > a->pad_given ? a->best_pad - a->pad_given : 0) *
                     t->elem_bytes;
    return GX_OK;
}

static void text_read(FILE *f, const char *name, uint32_t pad, const gx_smem_tile_read *r)
{
    if (!r->warp_accesses)
        return;
    fprintf(f, "  %-10s pad %-3u %2u-way at worst, %6.2f transfers and %7.2f cycles per warp access, "
               "%.0f cycles for the tile\n",
            name, pad, r->max_degree, (double)r->transfers / (double)r->warp_accesses,
            r->cycles / (double)r->warp_accesses, r->cycles);
}

int gx_smem_tile_write_text(const gx_smem_cfg *c, const gx_smem_tile_advice *a, FILE *f)
{
    const gx_smem_tile *t = &a->tile;
    fprintf(f, "shared-memory tile %ux%u of %u-byte elements, row-major (banks: %u x %u B, %u-byte "
               "lane groups, broadcast %s)\n",
            t->rows, t->cols, t->elem_bytes, c->banks, c->bank_bytes, c->transfer_bytes,
            c->broadcast ? "on" : "off");
    fprintf(f, "  (32 lanes on consecutive elements take %u transfer%s: the least this width allows)\n",
            a->contiguous_transfers, a->contiguous_transfers == 1 ? "" : "s");
    text_read(f, "row read", a->pad_given, &a->before[0]);
    text_read(f, "transposed", a->pad_given, &a->before[1]);
    if (a->best_pad == a->pad_given) {
        fprintf(f, "advice: no padding reads it with fewer cycles%s\n",
                a->before[0].max_degree > 1 || a->before[1].max_degree > 1
                    ? " (the conflicts that remain are not a matter of the row pitch)"
                    : " (conflict-free)");
    } else {
        text_read(f, "row read", a->best_pad, &a->after[0]);
        text_read(f, "transposed", a->best_pad, &a->after[1]);
        fprintf(f, "advice: pad each row by %u element%s (row pitch %u B): saves %.0f of %.0f cycles "
                   "per tile read (%.1f%%) for %llu more bytes\n",
                a->best_pad - a->pad_given, a->best_pad - a->pad_given == 1 ? "" : "s",
                (t->cols + a->best_pad) * t->elem_bytes, a->saved_cycles, a->before_cycles,
                100 * a->saved_cycles / a->before_cycles, (unsigned long long)a->extra_bytes);
    }
    return ferror(f) ? GX_EIO : GX_OK;
}

static void json_read(FILE *f, const gx_smem_tile_read *r)
{
    fprintf(f, "{\"warp_accesses\": %llu, \"max_degree\": %u, \"transfers\": %llu, \"cycles\": %.3f}",
            (unsigned long long)r->warp_accesses, r->max_degree, (unsigned long long)r->transfers,
            r->cycles);
}

int gx_smem_tile_write_json(const gx_smem_tile_advice *a, FILE *f)
{
    const gx_smem_tile *t = &a->tile;
    fprintf(f, "{\"rows\": %u, \"cols\": %u, \"elem_bytes\": %u, \"pad\": %u, \"before\": {\"row\": ",
            t->rows, t->cols, t->elem_bytes, a->pad_given);
    json_read(f, &a->before[0]);
    fprintf(f, ", \"transposed\": ");
    json_read(f, &a->before[1]);
    fprintf(f, ", \"cycles\": %.3f}, \"best_pad\": %u, \"after\": {\"row\": ", a->before_cycles,
            a->best_pad);
    json_read(f, &a->after[0]);
    fprintf(f, ", \"transposed\": ");
    json_read(f, &a->after[1]);
    fprintf(f, ", \"cycles\": %.3f}, \"saved_cycles\": %.3f, \"extra_bytes\": %llu, "
               "\"contiguous_transfers\": %u}",
            a->after_cycles, a->saved_cycles, (unsigned long long)a->extra_bytes,
            a->contiguous_transfers);
    return ferror(f) ? GX_EIO : GX_OK;
}
