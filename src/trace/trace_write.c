/* trace_write.c - the trace writers: text, binary version 1 and version 2
 * (formats in include/gpuxray/trace.h) through one buffered writer.
 *
 * Notes:
 * - Records are encoded into a 64 KiB buffer; gx_trace_save and gx_tw_open
 *   write through gx_out (outfile.h: a temporary file renamed over a regular
 *   target on success, devices and FIFOs straight).
 * - Text output writes the KEY=VALUE fields only when non-zero, so a trace
 *   of plain accesses looks exactly as before these fields existed; reading
 *   back any written trace gives the same records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_io.h"

#define TW_RECORD_MAX 256 /* bytes: the longest encoded record (text, all fields) */

static void put_le64(unsigned char *o, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        o[i] = (unsigned char)(v >> (8 * i));
}

static void put_header(gx_tw *w)
{
    int v1 = w->fmt == GX_TRACE_BINARY1;
    if (w->fmt != GX_TRACE_BINARY && !v1)
        return;
    memcpy(w->buf, v1 ? GX_TRACE_MAGIC : GX_TRACE_MAGIC2, GX_TRACE_MAGIC_BYTES);
    put_le64(w->buf + GX_TRACE_MAGIC_BYTES, v1 && w->announced != GX_TW_COUNT_UNKNOWN
                                                ? w->announced : 0);
    w->len = GX_TRACE_HEADER_BYTES;
}

void gx_tw_open_file(gx_tw *w, FILE *f, gx_trace_format fmt, uint64_t count, gx_msg *msg)
{
    memset(w, 0, sizeof *w);
    w->fmt = fmt;
    w->f = f;
    w->path = "trace";
    w->msg = msg;
    w->announced = count;
    w->prev.size = GX_TRACE_DEFAULT_SIZE;
    put_header(w);
}

int gx_tw_open(gx_tw *w, const char *path, gx_trace_format fmt, uint64_t count, gx_msg *msg)
{
    gx_tw_open_file(w, NULL, fmt, count, msg);
    w->path = path;
    if (fmt == GX_TRACE_ACCELSIM)
        return gx_fail(msg, GX_EINVAL, "%s: Accel-Sim traces are read, not written", path);
    if (!strcmp(path, "-") && fmt == GX_TRACE_BINARY1 && count == GX_TW_COUNT_UNKNOWN)
        return gx_fail(msg, GX_EINVAL, "%s: binary version 1 to standard output needs the "
                       "record count up front: write version 2", "<stdout>");
    int rc = gx_out_open(&w->out, path, msg);
    if (rc != GX_OK)
        return rc;
    w->f = w->out.f;
    w->own = 1;
    return GX_OK;
}

static int tw_flush(gx_tw *w)
{
    if (w->len && fwrite(w->buf, 1, w->len, w->f) != w->len)
        w->failed = 1;
    w->len = 0;
    return w->failed ? GX_EIO : GX_OK;
}

static size_t fmt_u64_dec(char *o, uint64_t v)
{
    char t[24];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        o[i] = t[n - 1 - i];
    return n;
}

static size_t fmt_u64_hex(char *o, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char t[16];
    size_t n = 0;
    do {
        t[n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    o[0] = '0';
    o[1] = 'x';
    for (size_t i = 0; i < n; i++)
        o[2 + i] = t[n - 1 - i];
    return n + 2;
}

static size_t fmt_key(char *o, const char *key, uint64_t v, int hex)
{
    size_t k = 0;
    o[k++] = ' ';
    for (; *key; key++)
        o[k++] = *key;
    o[k++] = '=';
    return k + (hex ? fmt_u64_hex(o + k, v) : fmt_u64_dec(o + k, v));
}

static size_t put_text(char *c, const gx_trace_rec *r)
{
    size_t k = fmt_u64_dec(c, r->sm);
    c[k++] = ' ';
    for (const char *n = gx_trace_op_name(r->op); *n; n++)
        c[k++] = *n;
    c[k++] = ' ';
    k += fmt_u64_hex(c + k, r->addr);
    if (r->op == GX_TRACE_MAP) {
        k += fmt_key(c + k, "bytes", r->arg, 1);
        k += fmt_key(c + k, "page", 1ULL << r->size, 1);
    } else if (r->op == GX_TRACE_INVALIDATE) {
        if (r->arg)
            k += fmt_key(c + k, "bytes", r->arg, 1);
    } else {
        c[k++] = ' ';
        k += fmt_u64_dec(c + k, r->size);
    }
    if (r->cycle)
        k += fmt_key(c + k, "cycle", r->cycle, 0);
    if (r->warp)
        k += fmt_key(c + k, "warp", r->warp, 0);
    if (r->lane)
        k += fmt_key(c + k, "lane", r->lane, 0);
    c[k++] = '\n';
    return k;
}

static size_t put_varint(unsigned char *o, uint64_t v)
{
    size_t k = 0;
    while (v >= 0x80) {
        o[k++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    o[k++] = (unsigned char)v;
    return k;
}

static uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

/* One version 2 record against the encoder state (see trace.h). */
static size_t put_v2(unsigned char *o, gx_trace_rec *prev, const gx_trace_rec *r)
{
    uint64_t z = zigzag(r->addr - prev->addr);
    unsigned len = 0;
    while (len < 8 && (z >> (8 * len)))
        len++;
    unsigned ext = (r->sm != prev->sm ? 0x01u : 0) | (r->size != prev->size ? 0x02u : 0) |
                   (r->cycle != prev->cycle ? 0x04u : 0) | (r->warp != prev->warp ? 0x08u : 0) |
                   (r->lane != prev->lane ? 0x10u : 0);
    size_t k = 0;
    o[k++] = (unsigned char)(len | (ext ? 0x10u : 0) | (unsigned)r->op << 5);
    if (ext)
        o[k++] = (unsigned char)ext;
    for (unsigned i = 0; i < len; i++)
        o[k++] = (unsigned char)(z >> (8 * i));
    if (ext & 0x01u)
        k += put_varint(o + k, r->sm);
    if (ext & 0x02u)
        k += put_varint(o + k, r->size);
    if (ext & 0x04u)
        k += put_varint(o + k, zigzag(r->cycle - prev->cycle));
    if (ext & 0x08u)
        k += put_varint(o + k, zigzag((uint64_t)(int64_t)(int32_t)(r->warp - prev->warp)));
    if (ext & 0x10u)
        o[k++] = r->lane;
    if (r->op == GX_TRACE_MAP || r->op == GX_TRACE_INVALIDATE)
        k += put_varint(o + k, r->arg);
    *prev = *r;
    return k;
}

static int put_v1(gx_tw *w, unsigned char *o, const gx_trace_rec *r)
{
    if (!gx_trace_op_is_global(r->op) || r->cycle || r->warp || r->lane)
        return gx_fail(w->msg, GX_EINVAL,
                       "%s: record %llu: binary version 1 holds only R, W, A without cycle / "
                       "warp / lane: write version 2", w->path, (unsigned long long)w->count);
    put_le64(o, r->addr);
    for (int i = 0; i < 4; i++)
        o[8 + i] = (unsigned char)(r->sm >> (8 * i));
    o[12] = (unsigned char)(r->size & 0xff);
    o[13] = (unsigned char)(r->size >> 8);
    o[14] = r->op;
    o[15] = 0;
    return GX_OK;
}

int gx_tw_put(gx_tw *w, const gx_trace_rec *r)
{
    if (w->len + TW_RECORD_MAX > sizeof w->buf && tw_flush(w))
        return GX_EIO;
    unsigned char *o = w->buf + w->len;
    if (w->fmt == GX_TRACE_BINARY1) {
        int rc = put_v1(w, o, r);
        if (rc)
            return rc;
        w->len += GX_TRACE_RECORD_BYTES;
    } else if (w->fmt == GX_TRACE_BINARY) {
        w->len += put_v2(o, &w->prev, r);
    } else {
        w->len += put_text((char *)o, r);
    }
    w->count++;
    return GX_OK;
}

/* The end of the stream: version 2's end marker; version 1's count check
 * (or its header patched when the count was unknown). */
static int tw_finish(gx_tw *w)
{
    if (w->fmt == GX_TRACE_BINARY) {
        w->buf[w->len++] = GX_TRACE_V2_END;
        put_le64(w->buf + w->len, w->count);
        w->len += 8;
    }
    if (tw_flush(w))
        return gx_fail(w->msg, GX_EIO, "%s: write error: %s", w->path, strerror(errno));
    if (w->fmt != GX_TRACE_BINARY1 || w->announced == w->count)
        return GX_OK;
    if (w->announced != GX_TW_COUNT_UNKNOWN)
        return gx_fail(w->msg, GX_EINVAL, "%s: %llu records written, %llu announced", w->path,
                       (unsigned long long)w->count, (unsigned long long)w->announced);
    unsigned char c[8];
    put_le64(c, w->count);
    if (fflush(w->f) || fseek(w->f, GX_TRACE_MAGIC_BYTES, SEEK_SET) || fwrite(c, 1, 8, w->f) != 8)
        return gx_fail(w->msg, GX_EIO, "%s: cannot write the record count into the header",
                       w->path);
    return GX_OK;
}

int gx_tw_close(gx_tw *w, int ok)
{
    int rc = ok ? tw_finish(w) : GX_OK;
    if (!w->own) {
        if (fflush(w->f) && rc == GX_OK && ok)
            rc = gx_fail(w->msg, GX_EIO, "%s: write error", w->f == stdout ? "<stdout>" : w->path);
        return ok ? rc : GX_OK;
    }
    w->own = 0;
    if (ok && (rc == GX_OK || gx_out_failed(&w->out)))
        return gx_out_commit(&w->out, w->msg); /* a failed write: its reason */
    gx_out_abort(&w->out);
    return ok ? rc : GX_OK;
}

int gx_tw_end(gx_tw *w, int rc)
{
    if (rc == GX_OK)
        return gx_tw_close(w, 1);
    int e = w->own ? gx_out_failed(&w->out) : 0;
    gx_tw_close(w, 0);
    return e ? gx_fail(w->msg, GX_EIO, "%s: write error: %s", w->path, strerror(e)) : rc;
}

int gx_trace_write(const gx_trace *t, FILE *f, gx_trace_format fmt, gx_msg *msg)
{
    gx_tw *w = malloc(sizeof *w);
    if (!w)
        return gx_fail(msg, GX_ENOMEM, "trace: out of memory");
    gx_tw_open_file(w, f, fmt, t->n, msg);
    int rc = GX_OK;
    for (uint64_t i = 0; i < t->n && rc == GX_OK; i++)
        rc = gx_tw_put(w, &t->rec[i]);
    rc = rc ? rc : gx_tw_close(w, 1);
    free(w);
    return rc;
}

int gx_trace_save(const gx_trace *t, const char *path, gx_trace_format fmt, gx_msg *msg)
{
    gx_tw *w = malloc(sizeof *w);
    if (!w)
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    int rc = gx_tw_open(w, path, fmt, t->n, msg);
    if (rc) {
        free(w);
        return rc;
    }
    for (uint64_t i = 0; i < t->n && rc == GX_OK; i++)
        rc = gx_tw_put(w, &t->rec[i]);
    rc = gx_tw_end(w, rc);
    free(w);
    return rc;
}

int gx_trace_convert(const char *in, const char *out, gx_trace_format fmt, gx_msg *msg)
{
    enum { BATCH = 4096 };
    gx_trace_reader *rd = NULL;
    int rc = gx_trace_reader_open(in, 0, &rd, msg);
    if (rc)
        return rc;
    gx_tw *w = malloc(sizeof *w);
    gx_trace_rec *buf = malloc(BATCH * sizeof *buf);
    if (!w || !buf)
        rc = gx_fail(msg, GX_ENOMEM, "%s: out of memory", out);
    else
        rc = gx_tw_open(w, out, fmt, GX_TW_COUNT_UNKNOWN, msg);
    int opened = rc == GX_OK;
    while (rc == GX_OK) {
        size_t k;
        rc = gx_trace_reader_next(rd, buf, BATCH, &k, msg);
        if (rc || !k)
            break;
        for (size_t i = 0; i < k && rc == GX_OK; i++)
            rc = gx_tw_put(w, &buf[i]);
    }
    if (opened)
        rc = gx_tw_end(w, rc);
    gx_trace_reader_close(rd);
    free(buf);
    free(w);
    return rc;
}
