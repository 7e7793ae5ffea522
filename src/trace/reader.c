/* reader.c - the streaming trace reader: opens a file, a pipe or a buffer,
 * tells the format apart by its first bytes, and hands records out in
 * batches from a bounded input buffer (formats in include/gpuxray/trace.h).
 *
 * Notes:
 * - Memory is the input buffer (GX_READER_BUF_BYTES) plus the caller's
 *   batch, whatever the trace's length; a pipe is read as it comes.
 * - The format is decided from the first bytes: GXTRACE1 / GXTRACE2 magic,
 *   an Accel-Sim header ("-kernel name" among the first lines), else text.
 * - On a malformed record the decoder's message names the line or record;
 *   the reader then refuses further calls (the trace cannot be resumed). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "reader_internal.h"

static int fill(gx_trace_reader *r, gx_msg *msg)
{
    if (r->eof)
        return GX_OK;
    size_t rest = (size_t)(r->end - r->p);
    if (rest && r->p != r->buf)
        memmove(r->buf, r->p, rest);
    r->p = r->buf;
    r->end = r->buf + rest;
    while ((size_t)(r->end - r->buf) < r->cap) {
        ssize_t k = read(r->fd, r->buf + (r->end - r->buf), r->cap - (size_t)(r->end - r->buf));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return gx_fail(msg, GX_EIO, "%s: read error: %s", r->source, strerror(errno));
        }
        if (k == 0) {
            r->eof = 1;
            break;
        }
        r->end += k;
    }
    return GX_OK;
}

static int detect(gx_trace_reader *r, gx_msg *msg)
{
    size_t len = (size_t)(r->end - r->p);
    if (len >= GX_TRACE_MAGIC_BYTES && !memcmp(r->p, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES))
        r->fmt = GX_TRACE_BINARY1;
    else if (len >= GX_TRACE_MAGIC_BYTES && !memcmp(r->p, GX_TRACE_MAGIC2, GX_TRACE_MAGIC_BYTES))
        r->fmt = GX_TRACE_BINARY;
    else if (gx_accelsim_detect(r->p, len))
        r->fmt = GX_TRACE_ACCELSIM;
    else
        r->fmt = GX_TRACE_TEXT;
    if (r->fmt != GX_TRACE_BINARY1 && r->fmt != GX_TRACE_BINARY)
        return GX_OK;
    if (len < GX_TRACE_HEADER_BYTES)
        return gx_fail(msg, GX_EPARSE, "%s: truncated header (%zu of %d bytes)", r->source, len,
                       GX_TRACE_HEADER_BYTES);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | r->p[GX_TRACE_MAGIC_BYTES + i];
    if (r->fmt == GX_TRACE_BINARY1)
        r->v1_count = v;
    else if (v)
        return gx_fail(msg, GX_EPARSE, "%s: header flags 0x%llx (0 expected: a later version?)",
                       r->source, (unsigned long long)v);
    r->p += GX_TRACE_HEADER_BYTES;
    return GX_OK;
}

static int reader_new(const char *source, uint32_t sm_limit, gx_trace_reader **out, gx_msg *msg)
{
    gx_trace_reader *r = calloc(1, sizeof *r);
    if (!r)
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", source);
    snprintf(r->source, sizeof r->source, "%s", source);
    r->sm_limit = sm_limit;
    r->fd = -1;
    r->prev.size = GX_TRACE_DEFAULT_SIZE;
    *out = r;
    return GX_OK;
}

int gx_trace_reader_open(const char *path, uint32_t sm_limit, gx_trace_reader **out,
                         gx_msg *msg)
{
    *out = NULL;
    int is_stdin = !strcmp(path, "-");
    gx_trace_reader *r = NULL;
    int rc = reader_new(is_stdin ? "<stdin>" : path, sm_limit, &r, msg);
    if (rc)
        return rc;
    r->fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        rc = gx_fail(msg, GX_EIO, "%s: cannot open: %s", path, strerror(errno));
        free(r);
        return rc;
    }
    r->own_fd = !is_stdin;
#ifdef POSIX_FADV_SEQUENTIAL
    if (r->own_fd)
        (void)posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    r->cap = GX_READER_BUF_BYTES;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        gx_trace_reader_close(r);
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    }
    r->p = r->end = r->buf;
    rc = fill(r, msg);
    if (rc == GX_OK)
        rc = detect(r, msg);
    if (rc) {
        gx_trace_reader_close(r);
        return rc;
    }
    *out = r;
    return GX_OK;
}

int gx_trace_reader_open_mem(const void *data, size_t len, const char *source, uint32_t sm_limit,
                             gx_trace_reader **out, gx_msg *msg)
{
    *out = NULL;
    gx_trace_reader *r = NULL;
    int rc = reader_new(source ? source : "trace", sm_limit, &r, msg);
    if (rc)
        return rc;
    r->p = data;
    r->end = r->p + len;
    r->eof = 1;
    rc = detect(r, msg);
    if (rc) {
        gx_trace_reader_close(r);
        return rc;
    }
    *out = r;
    return GX_OK;
}

/* Internal (trace.c): force a format on a buffer reader before the first
 * record (the whole-buffer parsers of one format). */
void gx_reader_force_text(gx_trace_reader *r);
void gx_reader_force_text(gx_trace_reader *r)
{
    r->fmt = GX_TRACE_TEXT;
}

static int decode(gx_trace_reader *r, gx_trace_rec *buf, size_t max, size_t *n, gx_msg *msg)
{
    switch (r->fmt) {
    case GX_TRACE_BINARY:
        return gx_v2_decode(r, buf, max, n, msg);
    case GX_TRACE_BINARY1:
        return gx_v1_decode(r, buf, max, n, msg);
    case GX_TRACE_ACCELSIM:
        return gx_accelsim_decode(r, buf, max, n, msg);
    default:
        return gx_text_decode(r, buf, max, n, msg);
    }
}

/* A decoder's error ends the stream: the file closed, later calls refused
 * (fd -2: no resuming). Returns rc. */
static int stop_after_error(gx_trace_reader *r, int rc)
{
    if (r->own_fd)
        close(r->fd);
    r->own_fd = 0;
    r->fd = -2;
    return rc;
}

int gx_trace_reader_next(gx_trace_reader *r, gx_trace_rec *buf, size_t max, size_t *n,
                         gx_msg *msg)
{
    *n = 0;
    if (r->done || !max)
        return GX_OK;
    if (r->fd == -2)
        return gx_fail(msg, GX_EPARSE, "%s: the trace failed to read earlier", r->source);
    size_t got = 0;
    while (got < max && !r->done) {
        size_t k = 0;
        int rc = decode(r, buf + got, max - got, &k, msg);
        if (rc)
            return stop_after_error(r, rc);
        got += k;
        r->index += k;
        if (got == max || r->done)
            break;
        if (k == 0 && r->eof && !r->done)
            return gx_fail(msg, GX_EPARSE, "%s: internal: the decoder made no progress",
                           r->source);
        int frc = fill(r, msg);
        if (frc)
            return frc;
    }
    *n = got;
    return GX_OK;
}

/* ---- column batches ---- */

int gx_trace_cols_init(gx_trace_cols *c, size_t cap)
{
    memset(c, 0, sizeof *c);
    if (!cap)
        cap = 1;
    c->addr = malloc(cap * sizeof *c->addr);
    c->sm = malloc(cap * sizeof *c->sm);
    c->size = malloc(cap * sizeof *c->size);
    c->op = malloc(cap * sizeof *c->op);
    c->rep = malloc(cap * sizeof *c->rep);
    c->rec = malloc(cap * sizeof *c->rec);
    c->cap = cap;
    if (c->addr && c->sm && c->size && c->op && c->rep && c->rec)
        return GX_OK;
    gx_trace_cols_free(c);
    return GX_ENOMEM;
}

void gx_trace_cols_free(gx_trace_cols *c)
{
    free(c->addr);
    free(c->sm);
    free(c->size);
    free(c->op);
    free(c->rep);
    free(c->rec);
    memset(c, 0, sizeof *c);
}

/* Formats without a column decoder: records, then columns. */
static int next_cols_records(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg)
{
    if (r->tmp_cap < c->cap) {
        gx_trace_rec *t = realloc(r->tmp, c->cap * sizeof *t);
        if (!t)
            return gx_fail(msg, GX_ENOMEM, "%s: out of memory", r->source);
        r->tmp = t;
        r->tmp_cap = c->cap;
    }
    size_t k = 0;
    int rc = gx_trace_reader_next(r, r->tmp, c->cap, &k, msg);
    for (size_t i = 0; rc == GX_OK && i < k; i++)
        gx_cols_put(c, &r->tmp[i]);
    return rc;
}

/* The repeat column to 0 before a batch, 16 bytes a store: glibc's memset
 * clears a batch's 32 KiB by `rep stosb`, which costs the host about as
 * little but counts one instruction a byte under callgrind (4 a record),
 * the measure of docs/performance.md. */
static void clear_reps(uint32_t *rep, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128i z = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        _mm_storeu_si128((__m128i *)(void *)(rep + i), z);
        _mm_storeu_si128((__m128i *)(void *)(rep + i + 4), z);
        _mm_storeu_si128((__m128i *)(void *)(rep + i + 8), z);
        _mm_storeu_si128((__m128i *)(void *)(rep + i + 12), z);
    }
#endif
    for (; i < n; i++)
        rep[i] = 0;
}

int gx_trace_reader_next_cols(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg)
{
    c->n = c->n_rec = c->n_wide = 0;
    c->sm_bound = r->sm_limit; /* the reader rejects any SM at or above it */
    c->records = 0;
    c->ops[0] = c->ops[1] = c->ops[2] = c->bytes = 0;
    if (r->fmt != GX_TRACE_BINARY && r->fmt != GX_TRACE_TEXT)
        return next_cols_records(r, c, msg);
    if (r->done)
        return GX_OK;
    if (r->fd == -2)
        return gx_fail(msg, GX_EPARSE, "%s: the trace failed to read earlier", r->source);
    clear_reps(c->rep, c->cap); /* the decoders store no 0 for a new entry */
    while (c->n < c->cap && !r->done) {
        uint64_t before = c->records;
        int rc = r->fmt == GX_TRACE_BINARY ? gx_v2_decode_cols(r, c, msg)
                                           : gx_text_decode_cols(r, c, msg);
        r->index += c->records - before;
        if (rc)
            return stop_after_error(r, rc);
        if (c->n == c->cap || r->done)
            break;
        if (c->records == before && r->eof && !r->done)
            return gx_fail(msg, GX_EPARSE, "%s: internal: the decoder made no progress",
                           r->source);
        int frc = fill(r, msg);
        if (frc)
            return frc;
    }
    return GX_OK;
}

gx_trace_format gx_trace_reader_format(const gx_trace_reader *r)
{
    return r->fmt;
}

uint64_t gx_trace_reader_records(const gx_trace_reader *r)
{
    return r->index;
}

size_t gx_trace_reader_footprint(const gx_trace_reader *r)
{
    return sizeof *r + r->cap;
}

void gx_trace_reader_close(gx_trace_reader *r)
{
    if (!r)
        return;
    if (r->own_fd)
        close(r->fd);
    gx_accelsim_free(r);
    free(r->tmp);
    free(r->buf);
    free(r);
}

int gx_reader_check(const gx_trace_reader *r, const gx_trace_rec *rec, uint64_t index,
                    gx_msg *msg)
{
    gx_msg m;
    gx_msg_clear(&m);
    if (gx_trace_check(rec, r->sm_limit, &m) == GX_OK)
        return GX_OK;
    if (r->fmt == GX_TRACE_BINARY || r->fmt == GX_TRACE_BINARY1)
        return gx_fail(msg, GX_EPARSE, "%s: record %llu: %s", r->source,
                       (unsigned long long)index, m.text);
    return gx_fail(msg, GX_EPARSE, "%s:%llu: %s", r->source, (unsigned long long)r->line,
                   m.text);
}
