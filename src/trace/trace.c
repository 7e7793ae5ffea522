/* trace.c - the trace container, record checks, op names, and whole-trace
 * reading on top of the streaming reader (formats in
 * include/gpuxray/trace.h; decoders in text.c and text_word.c, binary.c, accelsim.c).
 *
 * Notes:
 * - Whole-trace reads (gx_trace_parse*, gx_trace_read) keep the all-or-
 *   nothing contract: on a malformed record nothing is appended.
 * - Big record arrays ask for transparent huge pages (fewer page faults). */
#include "gpuxray/trace.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "reader_internal.h"

_Static_assert(sizeof(gx_trace_rec) == 40, "record layout");

#define HUGE_ALLOC_BYTES (8u << 20) /* arrays from this size on ask for huge pages */
#define HUGE_PAGE_BYTES (2u << 20)
#define READ_BATCH 4096             /* records per reader call in whole-trace reads */

void gx_trace_init(gx_trace *t)
{
    t->rec = NULL;
    t->n = t->cap = 0;
}

void gx_trace_free(gx_trace *t)
{
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
    if (n <= t->cap)
        return GX_OK;
    if (n > SIZE_MAX / sizeof(gx_trace_rec))
        return gx_fail(msg, GX_ENOMEM, "trace: %llu records do not fit in memory",
                       (unsigned long long)n);
    size_t bytes = (size_t)n * sizeof(gx_trace_rec);
    gx_trace_rec *r;
    if (bytes < HUGE_ALLOC_BYTES) {
        r = realloc(t->rec, bytes ? bytes : 1);
    } else {
        r = alloc_records(bytes);
        if (r && t->n)
            memcpy(r, t->rec, (size_t)t->n * sizeof *r);
        if (r)
            free(t->rec);
    }
    if (!r)
        return gx_fail(msg, GX_ENOMEM, "trace: out of memory for %llu records",
                       (unsigned long long)n);
    t->rec = r;
    t->cap = n;
    return GX_OK;
}

static int grow(gx_trace *t, gx_msg *msg)
{
    if (t->n < t->cap)
        return GX_OK;
    uint64_t want = t->cap < 1024 ? 1024 : t->cap * 2;
    return gx_trace_reserve(t, want, msg);
}

int gx_trace_append(gx_trace *t, const gx_trace_rec *r, gx_msg *msg)
{
    gx_msg m;
    if (gx_trace_check(r, 0, &m))
        return gx_fail(msg, GX_EINVAL, "trace: %s", m.text);
    int rc = grow(t, msg);
    if (rc)
        return rc;
    t->rec[t->n++] = *r;
    return GX_OK;
}

int gx_trace_push(gx_trace *t, uint64_t addr, uint32_t sm, gx_trace_op op, uint32_t size,
                  gx_msg *msg)
{
    if (!gx_trace_op_is_global((int)op))
        return gx_fail(msg, GX_EINVAL, "trace: bad op %d", (int)op);
    if (size < 1 || size > GX_TRACE_MAX_SIZE)
        return gx_fail(msg, GX_EINVAL, "trace: bad size %u (1..%d bytes)", size,
                       GX_TRACE_MAX_SIZE);
    gx_trace_rec r;
    memset(&r, 0, sizeof r);
    r.addr = addr;
    r.sm = sm;
    r.size = (uint16_t)size;
    r.op = (uint8_t)op;
    return gx_trace_append(t, &r, msg);
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

const char *gx_trace_op_name(int op)
{
    static const char *const names[GX_TRACE_OPS] = {"R", "W", "A", "SR", "SW", "MAP", "INV"};
    return (unsigned)op < GX_TRACE_OPS ? names[op] : "?";
}

int gx_trace_check(const gx_trace_rec *r, uint32_t sm_limit, gx_msg *msg)
{
    if (r->op >= GX_TRACE_OPS)
        return gx_fail(msg, GX_EINVAL, "bad op %u (0-6: R W A SR SW MAP INV)", r->op);
    if (sm_limit && r->sm >= sm_limit)
        return gx_fail(msg, GX_EINVAL, "bad SM %u (the profile has %u SMs: 0..%u)", r->sm,
                       sm_limit, sm_limit - 1);
    if (r->lane >= GX_TRACE_LANES)
        return gx_fail(msg, GX_EINVAL, "bad lane %u (0..%d)", r->lane, GX_TRACE_LANES - 1);
    if (r->reserved)
        return gx_fail(msg, GX_EINVAL, "reserved field is %u (0 expected)", r->reserved);
    if (r->op == GX_TRACE_MAP) {
        if (r->size < 12 || r->size > 39)
            return gx_fail(msg, GX_EINVAL, "MAP: bad page size 2^%u (2^12 .. 2^39 bytes)",
                           r->size);
        if (!r->arg)
            return gx_fail(msg, GX_EINVAL, "MAP: bytes is 0 (> 0 expected)");
    } else if (r->op == GX_TRACE_INVALIDATE) {
        if (r->size)
            return gx_fail(msg, GX_EINVAL, "INV: size %u (0 expected)", r->size);
    } else {
        if (r->size < 1 || r->size > GX_TRACE_MAX_SIZE)
            return gx_fail(msg, GX_EINVAL, "bad size %u (1..%d bytes)", r->size,
                           GX_TRACE_MAX_SIZE);
        if (r->arg)
            return gx_fail(msg, GX_EINVAL, "arg %llu on a %s record (MAP / INV only)",
                           (unsigned long long)r->arg, gx_trace_op_name(r->op));
        if (r->addr > UINT64_MAX - (r->size - 1u))
            return gx_fail(msg, GX_EINVAL,
                           "address 0x%llx + size %u wraps past 2^64", (unsigned long long)r->addr,
                           r->size);
        return GX_OK;
    }
    if (r->arg && r->addr > UINT64_MAX - (r->arg - 1))
        return gx_fail(msg, GX_EINVAL, "%s: address 0x%llx + bytes %llu wraps past 2^64",
                       gx_trace_op_name(r->op), (unsigned long long)r->addr,
                       (unsigned long long)r->arg);
    return GX_OK;
}

/* ------------------------------------------------------------------ */
/* whole-trace reading */

void gx_reader_force_text(gx_trace_reader *r); /* reader.c */

/* Every record of rd appended to out; on failure out->n is restored. */
static int drain(gx_trace_reader *rd, gx_trace *out, gx_msg *msg)
{
    uint64_t n0 = out->n;
    int rc = GX_OK;
    for (;;) {
        if (out->cap - out->n < READ_BATCH &&
            (rc = gx_trace_reserve(out, out->cap < READ_BATCH ? 2 * READ_BATCH : out->cap * 2,
                                   msg)))
            break;
        size_t k;
        rc = gx_trace_reader_next(rd, out->rec + out->n, READ_BATCH, &k, msg);
        if (rc || !k)
            break;
        out->n += k;
    }
    if (rc) {
        out->n = n0;
        if (!n0) /* nothing was there: leave the trace as it was (empty) */
            gx_trace_free(out);
    }
    gx_trace_reader_close(rd);
    return rc;
}

int gx_trace_is_binary(const void *data, size_t len)
{
    return len >= GX_TRACE_MAGIC_BYTES && (!memcmp(data, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES) ||
                                           !memcmp(data, GX_TRACE_MAGIC2, GX_TRACE_MAGIC_BYTES));
}

int gx_trace_parse_text(const char *text, size_t len, const char *source, uint32_t sm_limit,
                        gx_trace *out, gx_msg *msg)
{
    gx_trace_reader *rd = NULL;
    int rc = gx_trace_reader_open_mem(text, len, source, sm_limit, &rd, msg);
    if (rc)
        return rc;
    if (gx_trace_reader_format(rd) == GX_TRACE_BINARY ||
        gx_trace_reader_format(rd) == GX_TRACE_BINARY1) {
        gx_trace_reader_close(rd); /* the magic: parse it as text from byte 0 */
        rc = gx_trace_reader_open_mem("", 0, source, sm_limit, &rd, msg);
        if (rc)
            return rc;
        rd->p = (const unsigned char *)text;
        rd->end = rd->p + len;
    }
    gx_reader_force_text(rd);
    return drain(rd, out, msg);
}

int gx_trace_parse_binary(const void *data, size_t len, const char *source, uint32_t sm_limit,
                          gx_trace *out, gx_msg *msg)
{
    if (!gx_trace_is_binary(data, len))
        return gx_fail(msg, GX_EPARSE, "%s: not a binary trace (no %s or %s magic)",
                       source ? source : "trace", GX_TRACE_MAGIC, GX_TRACE_MAGIC2);
    return gx_trace_parse(data, len, source, sm_limit, out, msg);
}

int gx_trace_parse(const void *data, size_t len, const char *source, uint32_t sm_limit,
                   gx_trace *out, gx_msg *msg)
{
    gx_trace_reader *rd = NULL;
    int rc = gx_trace_reader_open_mem(data, len, source, sm_limit, &rd, msg);
    return rc ? rc : drain(rd, out, msg);
}

int gx_trace_read(const char *path, uint32_t sm_limit, gx_trace *out, gx_msg *msg)
{
    gx_trace_reader *rd = NULL;
    int rc = gx_trace_reader_open(path, sm_limit, &rd, msg);
    return rc ? rc : drain(rd, out, msg);
}
