/* accelsim.c - the Accel-Sim trace decoder: the NVBit tracer's
 * kernel-N.traceg (tracer versions 3 and later) into records, one warp
 * instruction's memory requests at a time.
 *
 * Accepted input (as Accel-Sim's tracer writes it):
 *   header lines `-key = value` (kernel name, grid dim = (x,y,z), block dim,
 *   accelsim tracer version, ...), `#` comments, then blocks:
 *     #BEGIN_TB / thread block = X,Y,Z / warp = W / insts = N / lines /
 *     ... / #END_TB
 *   an instruction line (version >= 3):
 *     PC MASK DEST_NUM [DEST...] OPCODE SRC_NUM [SRC...] MEM_WIDTH
 *       [ADDRESS_MODE ADDRESSES...] [IMMEDIATE]
 *   PC and MASK hexadecimal (MASK: bit i = lane i active); MEM_WIDTH bytes
 *   per lane (0 = no memory access); ADDRESS_MODE 0 list_all (one address
 *   per active lane), 1 base_stride (BASE STRIDE: lane addresses BASE,
 *   BASE+STRIDE, ... over the run of active lanes that starts at the first
 *   one, as the tracer's decompressor does), 2 base_delta (BASE then one
 *   signed delta per further active lane, each from the previous lane's).
 * Records: one per active lane of a memory instruction, op by the opcode's
 * first part: LDG, LD, LDGSTS -> R; STG, ST -> W; ATOMG, ATOM, RED -> A;
 * LDS, LDSM -> SR; STS, ATOMS -> SW; others (LDL/STL local, LDC constant,
 * texture) are skipped. size = MEM_WIDTH (at most GX_TRACE_MAX_SIZE), lane =
 * the lane, warp = a running id of the trace's memory instructions (1, 2,
 * ...; consecutive records of one instruction share it), sm = the thread
 * block's linear index (x + y*gx + z*gx*gy), folded modulo the SM limit when
 * there is one (blocks placed round-robin over the SMs), cycle 0.
 *
 * Notes:
 * - Lines are limited to AS_MAX_LINE bytes (32 addresses of 18 characters
 *   and the registers fit easily); messages name the line. One token after
 *   the addresses (the immediate of later tracer versions) is ignored.
 * - An instruction's records wait in a pending array when the caller's
 *   batch is full, so any batch size works. */
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

#define AS_MAX_LINE (4 * GX_TRACE_MAX_LINE)
#define AS_MIN_VERSION 3 /* older tracers put the block ids on every line */

struct gx_accelsim_state {
    uint64_t grid[3];
    int version;            /* -accelsim tracer version (0 = not seen yet) */
    int in_block;
    uint64_t block_linear;  /* of the current thread block */
    uint32_t warp_in_block; /* `warp = N` (kept for messages) */
    uint32_t next_id;       /* warp-instruction id */
    gx_trace_rec pend[GX_TRACE_LANES];
    int npend, ipend;
};

int gx_accelsim_detect(const unsigned char *data, size_t len)
{
    const char *p = (const char *)data, *end = p + len;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    static const char key[] = "-kernel name";
    return (size_t)(end - p) >= sizeof key - 1 && !memcmp(p, key, sizeof key - 1);
}

void gx_accelsim_free(gx_trace_reader *r)
{
    free(r->as);
    r->as = NULL;
}

typedef struct as_line {
    const char *p, *end;
} as_line;

/* Next blank-separated token; 0 when the line has none left. */
static int next_tok(as_line *l, const char **tok, size_t *len)
{
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\r'))
        l->p++;
    if (l->p == l->end)
        return 0;
    *tok = l->p;
    while (l->p < l->end && *l->p != ' ' && *l->p != '\t' && *l->p != '\r')
        l->p++;
    *len = (size_t)(l->p - *tok);
    return 1;
}

/* Unsigned number token: base 16 (0x optional) or 10; -1 when not one. */
static int tok_num(const char *t, size_t n, int base, uint64_t *out)
{
    if (n >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        t += 2;
        n -= 2;
        base = 16;
    }
    if (!n || n > (base == 16 ? 16u : 20u))
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = t[i] >= '0' && t[i] <= '9' ? t[i] - '0'
                : base == 16 && t[i] >= 'a' && t[i] <= 'f' ? t[i] - 'a' + 10
                : base == 16 && t[i] >= 'A' && t[i] <= 'F' ? t[i] - 'A' + 10 : -1;
        if (d < 0 || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* Signed decimal token (a stride or a delta). */
static int tok_signed(const char *t, size_t n, int64_t *out)
{
    int neg = n && t[0] == '-';
    uint64_t v;
    if (tok_num(t + neg, n - (size_t)neg, 10, &v) || v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

static int as_fail(const gx_trace_reader *r, gx_msg *msg, const char *what, const char *tok,
                   size_t n)
{
    return gx_fail(msg, GX_EPARSE, "%s:%llu: %s%s%.*s%s", r->source,
                   (unsigned long long)r->line, what, tok ? " '" : "", (int)(n > 40 ? 40 : n),
                   tok ? tok : "", tok ? "'" : "");
}

/* A header line `-key = value`: the grid and the tracer version. */
static int header_line(gx_trace_reader *r, const char *p, const char *end, gx_msg *msg)
{
    gx_accelsim_state *s = r->as;
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (!eq)
        return GX_OK; /* free text: ignored */
    size_t klen = (size_t)(eq - p);
    while (klen && (p[klen - 1] == ' ' || p[klen - 1] == '\t'))
        klen--;
    const char *v = eq + 1;
    if (klen == 9 && !memcmp(p, "-grid dim", 9)) {
        unsigned long long g[3];
        char buf[96];
        size_t vn = (size_t)(end - v) < sizeof buf - 1 ? (size_t)(end - v) : sizeof buf - 1;
        memcpy(buf, v, vn);
        buf[vn] = 0;
        if (sscanf(buf, " (%llu,%llu,%llu)", &g[0], &g[1], &g[2]) != 3 || !g[0] || !g[1] ||
            !g[2] || g[0] > UINT32_MAX || g[1] > UINT32_MAX || g[2] > UINT32_MAX)
            return as_fail(r, msg, "bad grid dim (\"(x,y,z)\" expected)", NULL, 0);
        for (int i = 0; i < 3; i++)
            s->grid[i] = g[i];
    } else if (klen == 24 && !memcmp(p, "-accelsim tracer version", 24)) {
        as_line l = {v, end};
        const char *t;
        size_t n;
        uint64_t ver;
        if (!next_tok(&l, &t, &n) || tok_num(t, n, 10, &ver) || ver > 1000)
            return as_fail(r, msg, "bad accelsim tracer version", NULL, 0);
        if (ver < AS_MIN_VERSION)
            return gx_fail(msg, GX_EPARSE, "%s:%llu: accelsim tracer version %llu: versions "
                           "below %d are not read", r->source, (unsigned long long)r->line,
                           (unsigned long long)ver, AS_MIN_VERSION);
        s->version = (int)ver;
    }
    return GX_OK;
}

/* `thread block = X,Y,Z` */
static int block_line(gx_trace_reader *r, const char *v, const char *end, gx_msg *msg)
{
    gx_accelsim_state *s = r->as;
    char buf[96];
    size_t vn = (size_t)(end - v) < sizeof buf - 1 ? (size_t)(end - v) : sizeof buf - 1;
    memcpy(buf, v, vn);
    buf[vn] = 0;
    unsigned long long b[3];
    if (sscanf(buf, " %llu,%llu,%llu", &b[0], &b[1], &b[2]) != 3)
        return as_fail(r, msg, "bad thread block (\"X,Y,Z\" expected)", NULL, 0);
    uint64_t gx = s->grid[0] ? s->grid[0] : 1, gy = s->grid[1] ? s->grid[1] : 1;
    if ((s->grid[0] && (b[0] >= s->grid[0] || b[1] >= s->grid[1] || b[2] >= s->grid[2])))
        return as_fail(r, msg, "thread block outside the grid dim", NULL, 0);
    s->block_linear = b[0] + b[1] * gx + b[2] * gx * gy;
    return GX_OK;
}

/* The op of an opcode (its first dot-separated part); -1 = not modelled. */
static int opcode_op(const char *t, size_t n)
{
    size_t k = 0;
    while (k < n && t[k] != '.')
        k++;
    static const struct { const char *name; int op; } map[] = {
        {"LDG", GX_TRACE_READ},    {"LD", GX_TRACE_READ},        {"LDGSTS", GX_TRACE_READ},
        {"STG", GX_TRACE_WRITE},   {"ST", GX_TRACE_WRITE},       {"ATOMG", GX_TRACE_ATOMIC},
        {"ATOM", GX_TRACE_ATOMIC}, {"RED", GX_TRACE_ATOMIC},     {"LDS", GX_TRACE_SHARED_READ},
        {"LDSM", GX_TRACE_SHARED_READ}, {"STS", GX_TRACE_SHARED_WRITE},
        {"ATOMS", GX_TRACE_SHARED_WRITE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].name) == k && !memcmp(map[i].name, t, k))
            return map[i].op;
    return -1;
}

/* The lane addresses of a memory instruction (after MEM_WIDTH). */
static int lane_addresses(gx_trace_reader *r, as_line *l, uint32_t mask, uint64_t addr[32],
                          gx_msg *msg)
{
    const char *t = NULL;
    size_t n = 0;
    uint64_t mode, base;
    if (!next_tok(l, &t, &n) || tok_num(t, n, 10, &mode) || mode > 2)
        return as_fail(r, msg, "bad address mode (0 list_all, 1 base_stride, 2 base_delta)",
                       n ? t : NULL, n);
    if (mode == 0) {
        for (int s = 0; s < 32; s++)
            if (mask >> s & 1) {
                if (!next_tok(l, &t, &n) || tok_num(t, n, 16, &addr[s]))
                    return as_fail(r, msg, "bad or missing lane address", NULL, 0);
            }
        return GX_OK;
    }
    if (!next_tok(l, &t, &n) || tok_num(t, n, 16, &base))
        return as_fail(r, msg, "bad base address", NULL, 0);
    int64_t step = 0;
    if (mode == 1 && (!next_tok(l, &t, &n) || tok_signed(t, n, &step)))
        return as_fail(r, msg, "bad stride", NULL, 0);
    int first = 1, run_over = 0;
    uint64_t a = base;
    for (int s = 0; s < 32; s++) {
        if (!(mask >> s & 1)) {
            run_over |= !first;
            continue;
        }
        if (first) {
            first = 0;
        } else if (mode == 1) {
            if (run_over) /* the tracer's base_stride covers one run of lanes only */
                return as_fail(r, msg, "base_stride with a gap in the mask", NULL, 0);
            a += (uint64_t)step;
        } else {
            if (!next_tok(l, &t, &n) || tok_signed(t, n, &step))
                return as_fail(r, msg, "bad or missing delta", NULL, 0);
            a += (uint64_t)step;
        }
        addr[s] = a;
    }
    return GX_OK;
}

/* An instruction line into the pending records. */
static int inst_line(gx_trace_reader *r, const char *p, const char *end, gx_msg *msg)
{
    gx_accelsim_state *s = r->as;
    as_line l = {p, end};
    const char *t;
    size_t n = 0;
    uint64_t v, mask, cnt, width;
    if (!next_tok(&l, &t, &n) || tok_num(t, n, 16, &v))
        return as_fail(r, msg, "bad PC", n ? t : NULL, n);
    if (!next_tok(&l, &t, &n) || tok_num(t, n, 16, &mask) || mask > UINT32_MAX)
        return as_fail(r, msg, "bad active mask", n ? t : NULL, n);
    if (!next_tok(&l, &t, &n) || tok_num(t, n, 10, &cnt) || cnt > 8)
        return as_fail(r, msg, "bad destination count", n ? t : NULL, n);
    for (uint64_t i = 0; i < cnt; i++)
        if (!next_tok(&l, &t, &n))
            return as_fail(r, msg, "missing destination register", NULL, 0);
    const char *opc;
    size_t opn;
    if (!next_tok(&l, &opc, &opn))
        return as_fail(r, msg, "missing opcode", NULL, 0);
    if (!next_tok(&l, &t, &n) || tok_num(t, n, 10, &cnt) || cnt > 8)
        return as_fail(r, msg, "bad source count", n ? t : NULL, n);
    for (uint64_t i = 0; i < cnt; i++)
        if (!next_tok(&l, &t, &n))
            return as_fail(r, msg, "missing source register", NULL, 0);
    if (!next_tok(&l, &t, &n) || tok_num(t, n, 10, &width) || width > 1024)
        return as_fail(r, msg, "bad memory width", n ? t : NULL, n);
    if (!width)
        return GX_OK;
    uint64_t addr[32];
    int rc = lane_addresses(r, &l, (uint32_t)mask, addr, msg);
    if (rc)
        return rc;
    int op = opcode_op(opc, opn);
    if (op < 0 || !mask)
        return GX_OK;
    if (++s->next_id == 0)
        s->next_id = 1;
    s->npend = s->ipend = 0;
    for (int lane = 0; lane < 32; lane++) {
        if (!(mask >> lane & 1))
            continue;
        gx_trace_rec *o = &s->pend[s->npend++];
        memset(o, 0, sizeof *o);
        o->addr = addr[lane];
        o->op = (uint8_t)op;
        o->size = (uint16_t)(width < GX_TRACE_MAX_SIZE ? width : GX_TRACE_MAX_SIZE);
        o->lane = (uint8_t)lane;
        o->warp = s->next_id;
        o->sm = (uint32_t)(r->sm_limit ? s->block_linear % r->sm_limit
                                       : s->block_linear & UINT32_MAX);
        rc = gx_reader_check(r, o, 0, msg);
        if (rc)
            return rc;
    }
    return GX_OK;
}

/* One line (without its newline). */
static int as_line_do(gx_trace_reader *r, const char *p, const char *end, gx_msg *msg)
{
    gx_accelsim_state *s = r->as;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    size_t n = (size_t)(end - p);
    if (!n)
        return GX_OK;
    if (*p == '-')
        return header_line(r, p, end, msg);
    if (n == 9 && !memcmp(p, "#BEGIN_TB", 9)) {
        if (!s->version)
            return as_fail(r, msg, "#BEGIN_TB before the accelsim tracer version header", NULL,
                           0);
        s->in_block = 1;
        return GX_OK;
    }
    if (n == 7 && !memcmp(p, "#END_TB", 7)) {
        s->in_block = 0;
        return GX_OK;
    }
    if (*p == '#')
        return GX_OK;
    if (!s->in_block)
        return as_fail(r, msg, "a line outside #BEGIN_TB .. #END_TB", p, n);
    const char *eq = memchr(p, '=', n);
    if (eq) {
        if (n > 12 && !memcmp(p, "thread block", 12))
            return block_line(r, eq + 1, end, msg);
        return GX_OK; /* warp = N, insts = N */
    }
    return inst_line(r, p, end, msg);
}

int gx_accelsim_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg)
{
    *n = 0;
    if (!r->as && !(r->as = calloc(1, sizeof *r->as)))
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", r->source);
    gx_accelsim_state *s = r->as;
    size_t k = 0;
    for (;;) {
        while (s->ipend < s->npend && k < max)
            out[k++] = s->pend[s->ipend++];
        if (k == max)
            break;
        const char *p = (const char *)r->p, *end = (const char *)r->end;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl && !r->eof) {
            if (end - p >= AS_MAX_LINE)
                return gx_fail(msg, GX_EPARSE, "%s:%llu: line longer than %d bytes", r->source,
                               (unsigned long long)r->line + 1, AS_MAX_LINE);
            break; /* refill */
        }
        if (p == end) {
            r->done = 1;
            break;
        }
        const char *le = nl ? nl : end;
        r->line++;
        if (le - p > AS_MAX_LINE)
            return gx_fail(msg, GX_EPARSE, "%s:%llu: line longer than %d bytes", r->source,
                           (unsigned long long)r->line, AS_MAX_LINE);
        int rc = as_line_do(r, p, le, msg);
        if (rc)
            return rc;
        r->p = (const unsigned char *)(nl ? nl + 1 : end);
    }
    *n = k;
    return GX_OK;
}
