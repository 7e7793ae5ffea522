/* trace.c - the trace container, the text and binary readers and writers
 * (formats in include/gpuxray/trace.h).
 *
 * Notes:
 * - Readers take the whole input in memory and validate every record before
 *   the caller sees any: a malformed trace is rejected as a whole, named by
 *   its line number (text) or record index (binary).
 * - The text parser is hand-written (no strtoull / sscanf per field): one
 *   pass over the buffer, newlines counted first to size the array once.
 * - Binary records are decoded with explicit little-endian loads, which the
 *   compiler turns into plain loads on a little-endian host.
 * - Writers encode into a 64 KiB buffer; gx_trace_save writes a temporary
 *   file in the target's directory and renames it over the target. */
#include "gpuxray/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_io.h"

/* ------------------------------------------------------------------ */
/* container */

_Static_assert(sizeof(gx_trace_rec) == GX_TRACE_RECORD_BYTES, "record layout");
_Static_assert(offsetof(gx_trace_rec, sm) == 8 && offsetof(gx_trace_rec, size) == 12 &&
                   offsetof(gx_trace_rec, op) == 14 && offsetof(gx_trace_rec, reserved) == 15,
               "record layout");

#define HUGE_ALLOC_BYTES (8u << 20) /* arrays from this size on ask for huge pages */
#define HUGE_PAGE_BYTES (2u << 20)

void gx_trace_init(gx_trace *t)
{
    t->rec = NULL;
    t->n = t->cap = 0;
    t->map = NULL;
    t->map_bytes = 0;
}

void gx_trace_free(gx_trace *t)
{
    if (t->map)
        munmap(t->map, t->map_bytes);
    else
        free(t->rec);
    gx_trace_init(t);
}

/* Records of a big trace in transparent huge pages where the kernel offers
 * them (madvise mode): 512x fewer page faults filling a 100 MB array. */
static gx_trace_rec *alloc_records(size_t bytes)
{
    if (bytes < HUGE_ALLOC_BYTES)
        return malloc(bytes);
    size_t rounded = (bytes + HUGE_PAGE_BYTES - 1) & ~(size_t)(HUGE_PAGE_BYTES - 1);
    void *p = aligned_alloc(HUGE_PAGE_BYTES, rounded);
#ifdef MADV_HUGEPAGE
    if (p)
        (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

int gx_trace_reserve(gx_trace *t, uint64_t n, gx_msg *msg)
{
    if (n <= t->cap && !t->map)
        return GX_OK;
    if (n < t->n)
        n = t->n;
    if (n > SIZE_MAX / sizeof(gx_trace_rec))
        return gx_fail(msg, GX_ENOMEM, "trace: %llu records do not fit in memory",
                       (unsigned long long)n);
    size_t bytes = (size_t)n * sizeof(gx_trace_rec);
    gx_trace_rec *r;
    if (!t->map && bytes < HUGE_ALLOC_BYTES) {
        r = realloc(t->rec, bytes ? bytes : 1);
    } else {
        r = alloc_records(bytes);
        if (r && t->n)
            memcpy(r, t->rec, (size_t)t->n * sizeof *r);
        if (r) {
            uint64_t keep = t->n;
            gx_trace_free(t);
            t->n = keep;
        }
    }
    if (!r)
        return gx_fail(msg, GX_ENOMEM, "trace: out of memory for %llu records",
                       (unsigned long long)n);
    t->rec = r;
    t->cap = n;
    return GX_OK;
}

int gx_trace_push(gx_trace *t, uint64_t addr, uint32_t sm, gx_trace_op op, uint32_t size,
                  gx_msg *msg)
{
    if ((unsigned)op > GX_TRACE_ATOMIC)
        return gx_fail(msg, GX_EINVAL, "trace: bad op %d", (int)op);
    if (size < 1 || size > GX_TRACE_MAX_SIZE)
        return gx_fail(msg, GX_EINVAL, "trace: bad size %u (1..%d bytes)", size,
                       GX_TRACE_MAX_SIZE);
    if (t->n == t->cap || t->map) {
        int rc = gx_trace_reserve(t, t->cap ? t->cap * 2 : 1024, msg);
        if (rc)
            return rc;
    }
    gx_trace_rec *r = &t->rec[t->n++];
    r->addr = addr;
    r->sm = sm;
    r->size = (uint16_t)size;
    r->op = (uint8_t)op;
    r->reserved = 0;
    return GX_OK;
}

char gx_trace_op_char(int op)
{
    switch (op) {
    case GX_TRACE_READ:
        return 'R';
    case GX_TRACE_WRITE:
        return 'W';
    case GX_TRACE_ATOMIC:
        return 'A';
    default:
        return '?';
    }
}

/* ------------------------------------------------------------------ */
/* text reader */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* End of a field: blank, comment, end of line or of input. */
static int is_field_end(const char *p, const char *end)
{
    return p == end || is_blank(*p) || *p == '#' || *p == '\n';
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && is_blank(*p))
        p++;
    return p;
}

/* Length of the token at p (up to the next blank / comment / newline). */
static int token_len(const char *p, const char *end)
{
    const char *q = p;
    while (!is_field_end(q, end) && *q)
        q++;
    size_t n = (size_t)(q - p);
    return n > 40 ? 40 : (int)n;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

typedef struct text_ctx {
    const char *source;
    unsigned long long line;
    uint32_t sm_limit;
    gx_msg *msg;
} text_ctx;

static int line_fail(const text_ctx *c, const char *what, const char *tok, const char *end,
                     const char *expect)
{
    if (tok >= end || *tok == '\n' || *tok == '#')
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s: missing (%s expected)", c->source,
                       c->line, what, expect);
    if (!*tok)
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s: a NUL byte (not a text trace; a binary "
                       "one starts with %s)", c->source, c->line, what, GX_TRACE_MAGIC);
    return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s '%.*s' (%s expected)", c->source, c->line,
                   what, token_len(tok, end), tok, expect);
}

/* Decimal unsigned number ending at a field end; 0 ok. */
static int parse_dec(const char **pp, const char *end, uint64_t max, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v = 0;
    if (p == end || *p < '0' || *p > '9')
        return -1;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > max)
            return -1;
        p++;
    }
    if (!is_field_end(p, end))
        return -1;
    *pp = p;
    *out = v;
    return 0;
}

static int parse_hex(const char **pp, const char *end, uint64_t *out)
{
    const char *p = *pp;
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    uint64_t v = 0;
    int digits = 0, h;
    while (p < end && (h = hex_value(*p)) >= 0) {
        if (++digits > 16)
            return -1;
        v = (v << 4) | (uint64_t)h;
        p++;
    }
    if (!digits || !is_field_end(p, end))
        return -1;
    *pp = p;
    *out = v;
    return 0;
}

/* Rest of the line from p (a comment or nothing): the next line's start. */
static const char *next_line(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

/* The line starting at p (end = the end of the whole buffer: fields stop at
 * a newline, so no separate search for it). *have = 1 when it holds an
 * access; *next = the next line's start. */
static int parse_line(const text_ctx *c, const char *p, const char *end, gx_trace_rec *r,
                      int *have, const char **next)
{
    *have = 0;
    p = skip_blanks(p, end);
    if (p == end || *p == '#' || *p == '\n') {
        *next = p < end && *p == '\n' ? p + 1 : next_line(p, end);
        return GX_OK;
    }
    uint64_t sm, size = GX_TRACE_DEFAULT_SIZE, addr;
    uint64_t sm_max = c->sm_limit ? (uint64_t)c->sm_limit - 1 : UINT32_MAX;
    const char *tok = p;
    if (parse_dec(&p, end, UINT32_MAX, &sm))
        return line_fail(c, "bad SM", tok, end, "a decimal SM number");
    if (sm > sm_max)
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: bad SM %llu (the profile has %u SMs: 0..%u)",
                       c->source, c->line, (unsigned long long)sm, c->sm_limit,
                       c->sm_limit - 1);
    p = skip_blanks(p, end);
    tok = p;
    int op;
    switch (p < end ? *p : 0) {
    case 'R':
    case 'r':
        op = GX_TRACE_READ;
        break;
    case 'W':
    case 'w':
        op = GX_TRACE_WRITE;
        break;
    case 'A':
    case 'a':
        op = GX_TRACE_ATOMIC;
        break;
    default:
        op = -1;
    }
    if (op < 0 || !is_field_end(p + 1, end))
        return line_fail(c, "bad op", tok, end, "R, W or A");
    p = skip_blanks(p + 1, end);
    tok = p;
    if (parse_hex(&p, end, &addr))
        return line_fail(c, "bad address", tok, end, "a hexadecimal address of 1-16 digits");
    p = skip_blanks(p, end);
    if (p < end && *p != '#' && *p != '\n') {
        tok = p;
        if (parse_dec(&p, end, 1u << 20, &size) || size < 1 || size > GX_TRACE_MAX_SIZE) {
            char expect[64];
            snprintf(expect, sizeof expect, "decimal bytes 1..%d", GX_TRACE_MAX_SIZE);
            return line_fail(c, "bad size", tok, end, expect);
        }
        p = skip_blanks(p, end);
    }
    if (p < end && *p != '#' && *p != '\n')
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: extra token '%.*s' (SM OP ADDRESS [SIZE])",
                       c->source, c->line, token_len(p, end), p);
    *next = p < end && *p == '\n' ? p + 1 : next_line(p, end);
    r->addr = addr;
    r->sm = (uint32_t)sm;
    r->size = (uint16_t)size;
    r->op = (uint8_t)op;
    r->reserved = 0;
    *have = 1;
    return GX_OK;
}

int gx_trace_parse_text(const char *text, size_t len, const char *source, uint32_t sm_limit,
                        gx_trace *out, gx_msg *msg)
{
    if (!source)
        source = "trace";
    /* upper bound on records: lines */
    uint64_t lines = 1;
    for (const char *q = text, *e = text + len; (q = memchr(q, '\n', (size_t)(e - q))); q++)
        lines++;
    uint64_t n0 = out->n;
    int rc = gx_trace_reserve(out, n0 + lines, msg);
    if (rc)
        return rc;
    text_ctx c = {source, 0, sm_limit, msg};
    const char *p = text, *end = text + len;
    gx_trace_rec *r = out->rec + n0;
    while (p < end) {
        c.line++;
        int have;
        rc = parse_line(&c, p, end, r, &have, &p);
        if (rc)
            return rc; /* out->n unchanged */
        r += have;
    }
    out->n = (uint64_t)(r - out->rec);
    return GX_OK;
}

/* ------------------------------------------------------------------ */
/* binary reader */

static uint64_t load_le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static uint32_t load_le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int gx_trace_is_binary(const void *data, size_t len)
{
    return len >= GX_TRACE_MAGIC_BYTES && !memcmp(data, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES);
}

static int check_record(const gx_trace_rec *r, uint64_t i, const char *source,
                        uint32_t sm_limit, gx_msg *msg)
{
    if (r->op > GX_TRACE_ATOMIC)
        return gx_fail(msg, GX_EPARSE, "%s: record %llu: bad op %u (0 R, 1 W, 2 A expected)",
                       source, (unsigned long long)i, r->op);
    if (r->size < 1 || r->size > GX_TRACE_MAX_SIZE)
        return gx_fail(msg, GX_EPARSE, "%s: record %llu: bad size %u (1..%d bytes expected)",
                       source, (unsigned long long)i, r->size, GX_TRACE_MAX_SIZE);
    if (r->reserved)
        return gx_fail(msg, GX_EPARSE, "%s: record %llu: reserved byte is %u (0 expected)",
                       source, (unsigned long long)i, r->reserved);
    if (sm_limit && r->sm >= sm_limit)
        return gx_fail(msg, GX_EPARSE, "%s: record %llu: bad SM %u (the profile has %u SMs: 0..%u)",
                       source, (unsigned long long)i, r->sm, sm_limit, sm_limit - 1);
    return GX_OK;
}

int gx_trace_parse_binary(const void *data, size_t len, const char *source, uint32_t sm_limit,
                          gx_trace *out, gx_msg *msg)
{
    if (!source)
        source = "trace";
    const unsigned char *b = data;
    if (!gx_trace_is_binary(data, len))
        return gx_fail(msg, GX_EPARSE, "%s: not a binary trace (no %s magic)", source,
                       GX_TRACE_MAGIC);
    if (len < GX_TRACE_HEADER_BYTES)
        return gx_fail(msg, GX_EPARSE, "%s: truncated header (%zu of %d bytes)", source, len,
                       GX_TRACE_HEADER_BYTES);
    uint64_t n = load_le64(b + GX_TRACE_MAGIC_BYTES);
    size_t body = len - GX_TRACE_HEADER_BYTES;
    uint64_t have = body / GX_TRACE_RECORD_BYTES;
    if (have < n)
        return gx_fail(msg, GX_EPARSE,
                       "%s: record %llu: truncated (the header announces %llu records, the file "
                       "holds %llu whole ones and %zu more bytes)",
                       source, (unsigned long long)have, (unsigned long long)n,
                       (unsigned long long)have, body % GX_TRACE_RECORD_BYTES);
    if (have > n || body % GX_TRACE_RECORD_BYTES)
        return gx_fail(msg, GX_EPARSE,
                       "%s: record %llu: trailing bytes after the %llu records the header announces",
                       source, (unsigned long long)n, (unsigned long long)n);
    uint64_t n0 = out->n;
    int rc = gx_trace_reserve(out, n0 + n, msg);
    if (rc)
        return rc;
    const unsigned char *p = b + GX_TRACE_HEADER_BYTES;
    gx_trace_rec *dst = out->rec + n0;
    for (uint64_t i = 0; i < n; i++, p += GX_TRACE_RECORD_BYTES) {
        gx_trace_rec *r = &dst[i];
        r->addr = load_le64(p);
        r->sm = load_le32(p + 8);
        r->size = (uint16_t)(p[12] | p[13] << 8);
        r->op = p[14];
        r->reserved = p[15];
        rc = check_record(r, i, source, sm_limit, msg);
        if (rc)
            return rc; /* out->n unchanged */
    }
    out->n = n0 + n;
    return GX_OK;
}

int gx_trace_parse(const void *data, size_t len, const char *source, uint32_t sm_limit,
                   gx_trace *out, gx_msg *msg)
{
    if (gx_trace_is_binary(data, len))
        return gx_trace_parse_binary(data, len, source, sm_limit, out, msg);
    return gx_trace_parse_text(data, len, source, sm_limit, out, msg);
}

/* ------------------------------------------------------------------ */
/* whole-file input */

static int slurp_stream(FILE *f, size_t hint, char **buf, size_t *len)
{
    size_t cap = hint ? hint + 1 : 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b)
        return GX_ENOMEM;
    for (;;) {
        if (n == cap) {
            if (cap > SIZE_MAX / 2) {
                free(b);
                return GX_ENOMEM;
            }
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return GX_ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                free(b);
                return GX_EIO;
            }
            break;
        }
    }
    *buf = b;
    *len = n;
    return GX_OK;
}

/* A binary trace used in place: the mapping's records are validated and
 * become the trace (little-endian hosts; out must be empty). */
static int adopt_mapping(void *map, size_t len, const char *source, uint32_t sm_limit,
                         gx_trace *out, gx_msg *msg)
{
    gx_trace probe;
    gx_trace_init(&probe);
    /* header and length checks; on a mismatch the decoding reader names it */
    const unsigned char *b = map;
    uint64_t n = load_le64(b + GX_TRACE_MAGIC_BYTES);
    size_t body = len - GX_TRACE_HEADER_BYTES;
    if (body % GX_TRACE_RECORD_BYTES || body / GX_TRACE_RECORD_BYTES != n) {
        int rc = gx_trace_parse_binary(map, len, source, sm_limit, &probe, msg); /* the error */
        gx_trace_free(&probe);
        return rc ? rc : gx_fail(msg, GX_EPARSE, "%s: inconsistent length", source);
    }
    gx_trace_rec *rec = (gx_trace_rec *)(void *)(b + GX_TRACE_HEADER_BYTES);
    for (uint64_t i = 0; i < n; i++) {
        int rc = check_record(&rec[i], i, source, sm_limit, msg);
        if (rc)
            return rc;
    }
    out->rec = rec;
    out->n = out->cap = n;
    out->map = map;
    out->map_bytes = len;
    return GX_OK;
}

static int little_endian_host(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Regular files are mapped (no copy into a buffer); a binary trace on a
 * little-endian host into an empty trace is used in place. Measured on a
 * 10M-record binary trace (160 MB), read + validate: 0.71-0.90 s with read()
 * into a buffer and a decode into a new array (page faults of two 160 MB
 * buffers dominate), 0.03-0.10 s mapped in place. */
static int read_mapped(int fd, size_t len, const char *source, uint32_t sm_limit,
                       gx_trace *out, gx_msg *msg)
{
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE;
#endif
    /* Read-only while populating (a writable private mapping would be
     * populated by copying every page), then writable: a page is copied
     * only if a caller ever writes to a record. */
    void *map = mmap(NULL, len, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED)
        return GX_EUNSUPPORTED; /* fall back to reading */
    if (mprotect(map, len, PROT_READ | PROT_WRITE)) {
        munmap(map, len);
        return GX_EUNSUPPORTED;
    }
    int rc;
    if (gx_trace_is_binary(map, len) && len >= GX_TRACE_HEADER_BYTES && little_endian_host() &&
        !out->n && !out->rec) {
        rc = adopt_mapping(map, len, source, sm_limit, out, msg);
        if (rc == GX_OK)
            return GX_OK;
    } else {
        rc = gx_trace_parse(map, len, source, sm_limit, out, msg);
    }
    munmap(map, len);
    return rc;
}

int gx_trace_read(const char *path, uint32_t sm_limit, gx_trace *out, gx_msg *msg)
{
    int is_stdin = !strcmp(path, "-");
    const char *source = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return gx_fail(msg, GX_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t hint = 0;
    struct stat st;
    int regular = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
    if (regular && st.st_size > 0)
        hint = (size_t)st.st_size;
    if (!is_stdin && hint) {
        int rc = read_mapped(fileno(f), hint, source, sm_limit, out, msg);
        if (rc != GX_EUNSUPPORTED) {
            fclose(f);
            return rc;
        }
    }
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp_stream(f, hint, &buf, &len);
    int err = errno;
    if (!is_stdin)
        fclose(f);
    if (rc == GX_ENOMEM)
        return gx_fail(msg, rc, "%s: out of memory reading the trace", source);
    if (rc)
        return gx_fail(msg, rc, "%s: read error: %s", source, strerror(err));
    rc = gx_trace_parse(buf, len, source, sm_limit, out, msg);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------ */
/* output */

int gx_tw_open(gx_tw *w, const char *path, gx_trace_format fmt, uint64_t count, gx_msg *msg)
{
    memset(w, 0, sizeof *w);
    w->fmt = fmt;
    w->path = path;
    w->msg = msg;
    if (!strcmp(path, "-")) {
        w->f = stdout;
    } else {
        size_t n = strlen(path);
        w->tmp = malloc(n + 16);
        if (!w->tmp)
            return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
        snprintf(w->tmp, n + 16, "%s.tmp.XXXXXX", path);
        int fd = mkstemp(w->tmp);
        if (fd < 0) {
            int e = errno;
            free(w->tmp);
            w->tmp = NULL;
            return gx_fail(msg, GX_EIO, "%s: cannot create a temporary file: %s", path,
                           strerror(e));
        }
        (void)fchmod(fd, 0644);
        w->f = fdopen(fd, "wb");
        if (!w->f) {
            close(fd);
            unlink(w->tmp);
            free(w->tmp);
            w->tmp = NULL;
            return gx_fail(msg, GX_EIO, "%s: cannot open for writing", path);
        }
    }
    if (fmt == GX_TRACE_BINARY) {
        memcpy(w->buf, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES);
        for (int i = 0; i < 8; i++)
            w->buf[GX_TRACE_MAGIC_BYTES + i] = (unsigned char)(count >> (8 * i));
        w->len = GX_TRACE_HEADER_BYTES;
    }
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

int gx_tw_put(gx_tw *w, const gx_trace_rec *r)
{
    if (w->len + 64 > sizeof w->buf && tw_flush(w))
        return GX_EIO;
    unsigned char *o = w->buf + w->len;
    if (w->fmt == GX_TRACE_BINARY) {
        for (int i = 0; i < 8; i++)
            o[i] = (unsigned char)(r->addr >> (8 * i));
        for (int i = 0; i < 4; i++)
            o[8 + i] = (unsigned char)(r->sm >> (8 * i));
        o[12] = (unsigned char)(r->size & 0xff);
        o[13] = (unsigned char)(r->size >> 8);
        o[14] = r->op;
        o[15] = 0;
        w->len += GX_TRACE_RECORD_BYTES;
    } else {
        char *c = (char *)o;
        size_t k = fmt_u64_dec(c, r->sm);
        c[k++] = ' ';
        c[k++] = gx_trace_op_char(r->op);
        c[k++] = ' ';
        k += fmt_u64_hex(c + k, r->addr);
        c[k++] = ' ';
        k += fmt_u64_dec(c + k, r->size);
        c[k++] = '\n';
        w->len += k;
    }
    w->count++;
    return GX_OK;
}

int gx_tw_close(gx_tw *w, int ok)
{
    int rc = GX_OK;
    if (ok && tw_flush(w))
        rc = gx_fail(w->msg, GX_EIO, "%s: write error: %s", w->path, strerror(errno));
    if (w->f == stdout) {
        if (fflush(stdout) && rc == GX_OK && ok)
            rc = gx_fail(w->msg, GX_EIO, "<stdout>: write error");
        return ok ? rc : GX_OK;
    }
    int cerr = fclose(w->f);
    if (ok && rc == GX_OK && cerr)
        rc = gx_fail(w->msg, GX_EIO, "%s: write error: %s", w->path, strerror(errno));
    if (ok && rc == GX_OK && rename(w->tmp, w->path))
        rc = gx_fail(w->msg, GX_EIO, "%s: cannot rename the temporary file: %s", w->path,
                     strerror(errno));
    if (!ok || rc != GX_OK)
        unlink(w->tmp);
    free(w->tmp);
    w->tmp = NULL;
    return rc;
}

int gx_trace_write(const gx_trace *t, FILE *f, gx_trace_format fmt, gx_msg *msg)
{
    gx_tw w;
    memset(&w, 0, sizeof w);
    w.fmt = fmt;
    w.f = f;
    w.path = "trace";
    w.msg = msg;
    if (fmt == GX_TRACE_BINARY) {
        memcpy(w.buf, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES);
        for (int i = 0; i < 8; i++)
            w.buf[GX_TRACE_MAGIC_BYTES + i] = (unsigned char)(t->n >> (8 * i));
        w.len = GX_TRACE_HEADER_BYTES;
    }
    for (uint64_t i = 0; i < t->n; i++)
        if (gx_tw_put(&w, &t->rec[i]))
            return gx_fail(msg, GX_EIO, "trace: write error");
    if (tw_flush(&w))
        return gx_fail(msg, GX_EIO, "trace: write error");
    return GX_OK;
}

int gx_trace_save(const gx_trace *t, const char *path, gx_trace_format fmt, gx_msg *msg)
{
    gx_tw w;
    int rc = gx_tw_open(&w, path, fmt, t->n, msg);
    if (rc)
        return rc;
    for (uint64_t i = 0; i < t->n && rc == GX_OK; i++)
        rc = gx_tw_put(&w, &t->rec[i]);
    if (rc) {
        gx_tw_close(&w, 0);
        return gx_fail(msg, GX_EIO, "%s: write error: %s", path, strerror(errno));
    }
    return gx_tw_close(&w, 1);
}
