/* rbuf.c - a growing text buffer, base64, and a minimal PNG encoder for
 * the report's heat maps (see rbuf.h).
 *
 * Notes: the PNG uses deflate "stored" blocks (no compression): a 128 x 128
 * picture is 49 KiB, well inside the report's 1 MB budget, and no zlib is
 * needed. CRC-32 (PNG chunks) and Adler-32 (zlib stream) are computed here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbuf.h"

void rb_init(gx_rbuf *b)
{
    memset(b, 0, sizeof *b);
}

void rb_free(gx_rbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

static int grow(gx_rbuf *b, size_t need)
{
    if (b->failed)
        return -1;
    if (b->len + need + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + need + 1) {
        if (cap > ((size_t)1 << 40)) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void rb_put(gx_rbuf *b, const void *p, size_t n)
{
    if (grow(b, n) != 0)
        return;
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = 0;
}

void rb_puts(gx_rbuf *b, const char *s)
{
    rb_put(b, s, strlen(s));
}

void rb_printf(gx_rbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof tmp) {
        rb_put(b, tmp, (size_t)n);
        return;
    }
    if (grow(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void rb_esc(gx_rbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': rb_puts(b, "&amp;"); break;
        case '<': rb_puts(b, "&lt;"); break;
        case '>': rb_puts(b, "&gt;"); break;
        case '"': rb_puts(b, "&quot;"); break;
        case '\'': rb_puts(b, "&#39;"); break;
        default: rb_put(b, s, 1);
        }
    }
}

void rb_base64(gx_rbuf *b, const uint8_t *d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)d[i + 1] << 8;
        if (i + 2 < n)
            v |= d[i + 2];
        char q[4] = {tab[(v >> 18) & 63], tab[(v >> 12) & 63],
                     i + 1 < n ? tab[(v >> 6) & 63] : '=', i + 2 < n ? tab[v & 63] : '='};
        rb_put(b, q, 4);
    }
}

/* ---- PNG ---------------------------------------------------------------- */

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put_be32(gx_rbuf *b, uint32_t v)
{
    uint8_t q[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    rb_put(b, q, 4);
}

static void chunk(gx_rbuf *out, const char type[4], const uint8_t *data, size_t n)
{
    put_be32(out, (uint32_t)n);
    size_t at = out->len;
    rb_put(out, type, 4);
    if (n)
        rb_put(out, data, n);
    if (out->failed)
        return;
    put_be32(out, crc32_update(0, (const uint8_t *)out->s + at, n + 4));
}

int png_encode(const uint8_t *rgb, uint32_t w, uint32_t h, gx_rbuf *out)
{
    if (!w || !h || w > 4096 || h > 4096)
        return -1;
    size_t row = (size_t)w * 3 + 1, raw_n = row * h;
    uint8_t *raw = malloc(raw_n);
    if (!raw)
        return -1;
    for (uint32_t y = 0; y < h; y++) {
        raw[y * row] = 0; /* filter: none */
        memcpy(raw + y * row + 1, rgb + (size_t)y * w * 3, (size_t)w * 3);
    }
    /* zlib stream: header, stored blocks of at most 65535 bytes, Adler-32 */
    size_t nblk = (raw_n + 65534) / 65535;
    size_t zn = 2 + nblk * 5 + raw_n + 4;
    uint8_t *z = malloc(zn);
    if (!z) {
        free(raw);
        return -1;
    }
    size_t k = 0;
    z[k++] = 0x78;
    z[k++] = 0x01;
    uint32_t a1 = 1, a2 = 0;
    for (size_t i = 0; i < raw_n; i += 65535) {
        size_t len = raw_n - i < 65535 ? raw_n - i : 65535;
        z[k++] = i + len >= raw_n ? 1 : 0;
        z[k++] = (uint8_t)len;
        z[k++] = (uint8_t)(len >> 8);
        z[k++] = (uint8_t)~len;
        z[k++] = (uint8_t)(~len >> 8);
        memcpy(z + k, raw + i, len);
        for (size_t j = 0; j < len; j++) {
            a1 = (a1 + raw[i + j]) % 65521u;
            a2 = (a2 + a1) % 65521u;
        }
        k += len;
    }
    uint32_t adler = a2 << 16 | a1;
    z[k++] = (uint8_t)(adler >> 24);
    z[k++] = (uint8_t)(adler >> 16);
    z[k++] = (uint8_t)(adler >> 8);
    z[k++] = (uint8_t)adler;
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    rb_put(out, sig, 8);
    uint8_t ihdr[13] = {(uint8_t)(w >> 24), (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w,
                        (uint8_t)(h >> 24), (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h,
                        8, 2, 0, 0, 0};
    chunk(out, "IHDR", ihdr, sizeof ihdr);
    chunk(out, "IDAT", z, k);
    chunk(out, "IEND", NULL, 0);
    free(raw);
    free(z);
    return out->failed ? -1 : 0;
}
