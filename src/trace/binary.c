/* binary.c - the binary trace decoders: version 1 (GXTRACE1, fixed 16-byte
 * records) and version 2 (GXTRACE2, delta records; layouts in
 * include/gpuxray/trace.h), a batch at a time from the reader's buffer.
 *
 * Notes:
 * - Little-endian loads are written byte by byte or through memcpy; the
 *   compiler turns them into plain loads on a little-endian host.
 * - Version 2's common record (no extension byte: only the address and
 *   maybe the op change) takes the fast path: one 8-byte load masked to the
 *   delta's length, with at least GX_V2_MAX_RECORD bytes left so it never
 *   reads past the buffer; everything else goes through a bounds-checked
 *   decoder. A record is checked when decoded; the fast path re-checks only
 *   what can change there (size range with the address: no wrap past 2^64;
 *   sm and lane were checked when they changed). */
#include <string.h>

#include "reader_internal.h"

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

/* ---- version 1 ---- */

int gx_v1_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg)
{
    *n = 0;
    uint64_t left = r->v1_count - r->index; /* records the header still announces */
    size_t whole = (size_t)(r->end - r->p) / GX_TRACE_RECORD_BYTES;
    if (!left) {
        if (r->p != r->end || !r->eof) {
            if (r->p == r->end) /* maybe more bytes: wait for them */
                return GX_OK;
            return gx_fail(msg, GX_EPARSE,
                           "%s: record %llu: trailing bytes after the %llu records the header "
                           "announces", r->source, (unsigned long long)r->v1_count,
                           (unsigned long long)r->v1_count);
        }
        r->done = 1;
        return GX_OK;
    }
    if (!whole && r->eof)
        return gx_fail(msg, GX_EPARSE,
                       "%s: record %llu: truncated (the header announces %llu records, the file "
                       "holds %llu whole ones and %zu more bytes)", r->source,
                       (unsigned long long)r->index, (unsigned long long)r->v1_count,
                       (unsigned long long)r->index, (size_t)(r->end - r->p));
    size_t k = whole < max ? whole : max;
    if (k > left)
        k = (size_t)left;
    const unsigned char *p = r->p;
    for (size_t i = 0; i < k; i++, p += GX_TRACE_RECORD_BYTES) {
        gx_trace_rec *o = &out[i];
        memset(o, 0, sizeof *o);
        o->addr = load_le64(p);
        o->sm = load_le32(p + 8);
        o->size = (uint16_t)(p[12] | p[13] << 8);
        o->op = p[14];
        uint8_t reserved = p[15];
        if (o->op > GX_TRACE_ATOMIC)
            return gx_fail(msg, GX_EPARSE,
                           "%s: record %llu: bad op %u (0 R, 1 W, 2 A expected in version 1)",
                           r->source, (unsigned long long)(r->index + i), o->op);
        if (reserved)
            return gx_fail(msg, GX_EPARSE, "%s: record %llu: reserved byte is %u (0 expected)",
                           r->source, (unsigned long long)(r->index + i), reserved);
        int rc = gx_reader_check(r, o, r->index + i, msg);
        if (rc)
            return rc;
    }
    r->p = p;
    *n = k;
    return GX_OK;
}

/* ---- version 2 ---- */

#define V2_X 0x10u
#define V2_E_SM 0x01u
#define V2_E_SIZE 0x02u
#define V2_E_CYCLE 0x04u
#define V2_E_WARP 0x08u
#define V2_E_LANE 0x10u

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

/* LEB128 varint at *pp (before end); -1 when the input ends inside it, -2
 * when it runs over 10 bytes. */
static int get_varint(const unsigned char **pp, const unsigned char *end, uint64_t *out)
{
    const unsigned char *p = *pp;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p == end)
            return -1;
        unsigned char b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -2;
}

static int v2_fail(const gx_trace_reader *r, uint64_t i, gx_msg *msg, const char *what)
{
    return gx_fail(msg, GX_EPARSE, "%s: record %llu: %s", r->source, (unsigned long long)i,
                   what);
}

/* The end marker at p (0xFF seen): u64 count, then nothing. */
static int v2_end(gx_trace_reader *r, const unsigned char *p, uint64_t i, gx_msg *msg)
{
    if (r->end - p < 9)
        return v2_fail(r, i, msg, "truncated end marker");
    uint64_t count = load_le64(p + 1);
    if (count != i)
        return gx_fail(msg, GX_EPARSE, "%s: record %llu: the end marker counts %llu records, "
                       "the file holds %llu", r->source, (unsigned long long)i,
                       (unsigned long long)count, (unsigned long long)i);
    if (r->end - p > 9)
        return v2_fail(r, i, msg, "trailing bytes after the end marker");
    r->p = p + 9;
    r->done = 1;
    return GX_OK;
}

/* One record at *pp with bounds checks (any record). 0 ok, else an error. */
static int v2_slow(gx_trace_reader *r, const unsigned char **pp, gx_trace_rec *st, uint64_t i,
                   gx_msg *msg)
{
    const unsigned char *p = *pp, *end = r->end;
    unsigned h = *p++;
    unsigned len = h & 15, op = h >> 5, ext = 0;
    if (len > 8 || op >= GX_TRACE_OPS)
        return v2_fail(r, i, msg, "bad record header byte (a delta of 0-8 bytes, op 0-6)");
    if (h & V2_X) {
        if (p == end)
            return v2_fail(r, i, msg, "truncated");
        ext = *p++;
        if (ext & ~0x1fu)
            return v2_fail(r, i, msg, "bad extension byte (bits 5-7 must be 0)");
    }
    if ((size_t)(end - p) < len)
        return v2_fail(r, i, msg, "truncated");
    uint64_t z = 0, v = 0;
    int vr = 0;
    for (unsigned k = 0; k < len; k++)
        z |= (uint64_t)p[k] << (8 * k);
    p += len;
    gx_trace_rec t = *st;
    t.addr += unzigzag(z);
    t.op = (uint8_t)op;
    t.arg = 0;
    if (ext & V2_E_SM) {
        if ((vr = get_varint(&p, end, &v)) != 0 || v > UINT32_MAX)
            return v2_fail(r, i, msg, vr == -1 ? "truncated" : "bad sm varint");
        t.sm = (uint32_t)v;
    }
    if (ext & V2_E_SIZE) {
        if ((vr = get_varint(&p, end, &v)) != 0 || v > UINT16_MAX)
            return v2_fail(r, i, msg, vr == -1 ? "truncated" : "bad size varint");
        t.size = (uint16_t)v;
    }
    if (ext & V2_E_CYCLE) {
        if ((vr = get_varint(&p, end, &v)) != 0)
            return v2_fail(r, i, msg, vr == -1 ? "truncated" : "bad cycle varint");
        t.cycle += unzigzag(v);
    }
    if (ext & V2_E_WARP) {
        if ((vr = get_varint(&p, end, &v)) != 0)
            return v2_fail(r, i, msg, vr == -1 ? "truncated" : "bad warp varint");
        t.warp = (uint32_t)(t.warp + (uint32_t)unzigzag(v));
    }
    if (ext & V2_E_LANE) {
        if (p == end)
            return v2_fail(r, i, msg, "truncated");
        t.lane = *p++;
    }
    if (op == GX_TRACE_MAP || op == GX_TRACE_INVALIDATE) {
        if ((vr = get_varint(&p, end, &v)) != 0)
            return v2_fail(r, i, msg, vr == -1 ? "truncated" : "bad arg varint");
        t.arg = v;
    }
    int rc = gx_reader_check(r, &t, i, msg);
    if (rc)
        return rc;
    *st = t;
    *pp = p;
    return GX_OK;
}

/* Fast-path records: header bytes without the extension bit, a delta of
 * 0..8 bytes and an op without arg (0..4); fast_len[h] = 1 + L for them,
 * 0 for every other header (the slow path decides). */
static const uint64_t delta_mask[9] = {
    0, 0xff, 0xffff, 0xffffff, 0xffffffffULL, 0xffffffffffULL, 0xffffffffffffULL,
    0xffffffffffffffULL, ~0ULL};

#define V2_FLX(h, mo) ((!((h) & V2_X) && ((h) & 15) <= 8 && ((h) >> 5) <= (mo)) \
                           ? 1 + ((h) & 15) : 0)
#define V2_FL(h) V2_FLX(h, GX_TRACE_SHARED_WRITE)
#define V2_FL4(h) V2_FL(h), V2_FL((h) + 1), V2_FL((h) + 2), V2_FL((h) + 3)
#define V2_FL16(h) V2_FL4(h), V2_FL4((h) + 4), V2_FL4((h) + 8), V2_FL4((h) + 12)
#define V2_FL64(h) V2_FL16(h), V2_FL16((h) + 16), V2_FL16((h) + 32), V2_FL16((h) + 48)
static const unsigned char fast_len[256] = {V2_FL64(0u), V2_FL64(64u), V2_FL64(128u),
                                            V2_FL64(192u)};
/* The same rule for the column decoder (hdr_g below): global ops only
 * (0..2); a shared record takes the slow path there, which keeps its whole
 * record. */
#define V2_FG(h) V2_FLX(h, GX_TRACE_ATOMIC)

/* Notes on the loop: the record's other fields are a template that only
 * the slow path changes, so a fast record is the template's three stores
 * plus the address and op; the size check is hoisted (wrap limit computed
 * when the template changes). Measured (callgrind, 1 M-record stream,
 * whole decode): 77 -> 38 instructions a record (the template 77 -> 47, the
 * mask table and the hoisted size check 47 -> 38). */
int gx_v2_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg)
{
    *n = 0;
    const unsigned char *p = r->p, *end = r->end;
    gx_trace_rec st = r->prev;
    size_t k = 0;
    uint64_t i0 = r->index;
    while (k < max) {
        /* one run of fast records with the template st */
        const int size_ok = (uint32_t)st.size - 1u < GX_TRACE_MAX_SIZE;
        const uint64_t wrap_limit = size_ok ? UINT64_MAX - st.size + 1 : 0;
        uint64_t addr = st.addr;
        uint8_t op = st.op;
        gx_trace_rec tmpl = st;
        tmpl.arg = 0;
        if (!size_ok)
            goto slow;
        while (k < max && end - p >= GX_V2_MAX_RECORD) {
            unsigned h = *p, fl = fast_len[h];
            if (!fl)
                break;
            uint64_t z;
            memcpy(&z, p + 1, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            z = __builtin_bswap64(z);
#endif
            z &= delta_mask[fl - 1];
            uint64_t a = addr + unzigzag(z);
            if (a > wrap_limit)
                break; /* the slow path re-decodes it and names the error */
            addr = a;
            op = (uint8_t)(h >> 5);
            gx_trace_rec *o = &out[k++];
            *o = tmpl;
            o->addr = addr;
            o->op = op;
            p += fl;
        }
        st.addr = addr;
        st.op = op;
    slow:
        if (k == max)
            break;
        if (end - p < GX_V2_MAX_RECORD) {
            if (!r->eof)
                break; /* refill first */
            if (p == end) {
                r->p = p;
                r->prev = st;
                *n = k;
                return v2_fail(r, i0 + k, msg, "truncated (no end marker)");
            }
        }
        unsigned h = *p;
        if (h == GX_TRACE_V2_END) {
            r->prev = st;
            *n = k;
            return v2_end(r, p, i0 + k, msg);
        }
        int rc = v2_slow(r, &p, &st, i0 + k, msg);
        if (rc)
            return rc;
        out[k++] = st;
    }
    r->p = p;
    r->prev = st;
    *n = k;
    return GX_OK;
}

/* ---- version 2 into columns ---- */

/* The column loop's header tables, indexed by the header byte: for a fast
 * global record (the rule of V2_FG) len = 1 + L (the bytes it takes), mask
 * = the delta's byte mask, and inc = one in each block counter it counts
 * in: records (from bit V2_REC), writes (V2_WR), atomics (V2_AT); len = 0
 * for every other header (the slow path decides). Summing inc over a block
 * counts its records and ops in one add a record; a block takes at most
 * V2_BLOCK records so no counter runs into the next. One struct of arrays:
 * the three loads share one base. */
#define V2_REC 0
#define V2_WR 21
#define V2_AT 42
#define V2_BLOCK ((1u << 20) - 1)
#define V2_MASK_L(l) ((l) >= 8 ? ~0ULL : (1ULL << (8 * ((l) & 7))) - 1)
#define V2_TL(h) ((uint64_t)V2_FG(h))
#define V2_TM(h) (V2_FG(h) ? V2_MASK_L((h) & 15) : 0)
#define V2_TI(h)                                                                   \
    (V2_FG(h) ? (1ULL << V2_REC) + ((uint64_t)((h) >> 5 == GX_TRACE_WRITE) << V2_WR) + \
                    ((uint64_t)((h) >> 5 == GX_TRACE_ATOMIC) << V2_AT)             \
              : 0)
#define V2_T4(f, h) f(h), f((h) + 1), f((h) + 2), f((h) + 3)
#define V2_T16(f, h) V2_T4(f, h), V2_T4(f, (h) + 4), V2_T4(f, (h) + 8), V2_T4(f, (h) + 12)
#define V2_T64(f, h) V2_T16(f, h), V2_T16(f, (h) + 16), V2_T16(f, (h) + 32), V2_T16(f, (h) + 48)
#define V2_T256(f) {V2_T64(f, 0u), V2_T64(f, 64u), V2_T64(f, 128u), V2_T64(f, 192u)}
/* len for a fast read, 0 for every other header (v2_block's reads, whose
 * op is known) */
#define V2_TLR(h) (V2_FG(h) && (h) >> 5 == GX_TRACE_READ ? (uint64_t)V2_FG(h) : 0)
/* The fast reads' headers are 0 .. V2_READ_TOP (op GX_TRACE_READ = 0 in bits
 * 5-7, no extension bit V2_X, L <= 8 address bytes), each taking 1 + h
 * bytes (V2_TLR): v2_block's reads take the length from the header, not
 * from a table, so the chain from one record's start to the next is one
 * load and an add, not two loads (measured, random 64 MiB binary: the
 * decode pass 23.9 -> 17.6 host TSC cycles an access by rdtsc around the
 * reader's batches, although 161.8 -> 163.8 instructions an access). */
#define V2_READ_TOP 8u
_Static_assert(GX_TRACE_READ == 0 && V2_X > V2_READ_TOP && V2_TLR(V2_READ_TOP) == V2_READ_TOP + 1 &&
                   V2_TLR(V2_READ_TOP + 1) == 0 && V2_TLR(0) == 1,
               "fast read headers are 0 .. V2_READ_TOP, of 1 + h bytes");
static const struct v2_tables {
    uint64_t len[256], mask[256], inc[256];
} v2_tab = {V2_T256(V2_TL), V2_T256(V2_TM), V2_T256(V2_TI)};

/* v2_sm_run's header table: 3 + L (the record's bytes: header, SM key,
 * L address bytes, SM) for a header of an SM-change candidate (extension
 * bit, L <= 8, a global op), 0 for any other; and the L bytes' masks. */
#define V2_SXL(h) \
    ((uint8_t)(((h) & V2_X) && ((h) & 15) <= 8 && ((h) >> 5) <= GX_TRACE_ATOMIC ? ((h) & 15) + 3 : 0))
static const uint8_t v2_smx_len[256] = V2_T256(V2_SXL);
static const uint64_t v2_len_mask[9] = {V2_MASK_L(0), V2_MASK_L(1), V2_MASK_L(2),
                                        V2_MASK_L(3), V2_MASK_L(4), V2_MASK_L(5),
                                        V2_MASK_L(6), V2_MASK_L(7), V2_MASK_L(8)};

/* The state of one run of fast records (one template: SM, size) in the
 * column loop. Merging: entry k - 1 is of this run and within one merge
 * block at mbase when addr - mbase < mlim (mlim = fit1 = the block's bytes
 * minus the size plus one; 0 merges nothing). */
typedef struct v2_run {
    const unsigned char *p;
    size_t k;
    uint64_t addr, mbase, mlim;
} v2_run;

/* v2_block's kinds of run: any fast record; fast reads only (the common
 * record of a read trace: the op known, so no op store and no counter sum
 * a record: the records are the entries stored plus the folds, the op
 * column filled after the block); fast reads at addresses that are
 * multiples of their size, a power of two within the merge block (every
 * entry within its block: mlim = fit1, none wide, no test a record; the
 * alignment test is the wrap test too, a multiple of the size never
 * passing 2^64 - size; measured 174.9 -> 161.8 instructions an access with
 * the wrap test's removal, random 64 MiB binary). */
enum { V2_ANY, V2_READS, V2_READS_ALIGNED };

/* One block of fast records of kind `kind` (a constant): from s->p while
 * the record starts before plim (the caller leaves at least
 * GX_V2_MAX_RECORD bytes after plim - 1 and no more records than the
 * columns can take), appended from entry s->k: stored, or folded into entry
 * k - 1 when in its merge block. Stops at plim, a header for the slow path
 * or of another kind, an address past wrap_limit (the slow path re-decodes
 * that record and names the error), or (aligned) one not a multiple of
 * amask + 1. Returns the sum of the records' inc (hdr_g). */
static inline __attribute__((always_inline)) uint64_t
v2_block(gx_trace_cols *c, v2_run *s, const unsigned char *plim, uint64_t wrap_limit,
         uint64_t mmask, uint64_t fit1, uint64_t amask, uint32_t tsm, uint16_t tsz, int kind)
{
    const unsigned char *p = s->p;
    size_t k = s->k;
    uint64_t addr = s->addr, mbase = s->mbase, mlim = s->mlim, sum = 0, wide = 0;
    uint64_t *const ca = c->addr;
    uint8_t *const co = c->op;
    uint32_t *const cr = c->rep;
    const struct v2_tables *const t = &v2_tab;
    const size_t k0 = k;
    /* aligned: every entry lies within its merge block (mlim = fit1), and
     * an aligned a is within the entry's (a - mbase < fit1) exactly when
     * (a ^ mbase) < mmask + 1 (a - mbase a multiple of the size below the
     * block's bytes); ablk: mmask + 1, 0 while the entry before takes no
     * fold (mlim 0); mbase the entry's address (its block by the xor) */
    uint64_t ablk = kind == V2_READS_ALIGNED && mlim ? mmask + 1 : 0;
    while (p < plim) {
        const uint64_t h = *p;
        const uint64_t len = kind == V2_ANY ? t->len[h] : h + 1;
        if (kind == V2_ANY ? !len : h > V2_READ_TOP)
            break;
        const unsigned char *q1 = p + 1; /* the delta's bytes */
#if defined(__GNUC__)
        __asm__("" : "+r"(q1)); /* kept: the compiler would rebuild p + (h + 1) */
#endif
        uint64_t z;
        memcpy(&z, q1, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        z = __builtin_bswap64(z);
#endif
        const uint64_t a = addr + unzigzag(z & t->mask[h]);
        if (kind == V2_READS_ALIGNED ? (a & amask) != 0 : a > wrap_limit)
            break;
        addr = a;
        if (kind == V2_ANY)
            sum += t->inc[h];
        /* reads: p + 1 + h as (p + 1) + h, one add after the header's load */
        p = kind == V2_ANY ? p + len : q1 + h;
        if (kind == V2_READS_ALIGNED ? (a ^ mbase) < ablk : a - mbase < mlim) {
            cr[k - 1]++;
            sum += kind == V2_ANY ? 0 : 1; /* a read's inc */
            continue;
        }
        ca[k] = a; /* cr[k] is 0 (gx_trace_cols: the reader clears it) */
        if (kind == V2_ANY)
            co[k] = (uint8_t)(h >> 5);
        k++;
        if (kind == V2_READS_ALIGNED) {
            mbase = a;
            ablk = mmask + 1;
        } else {
            mbase = a & ~mmask;
            mlim = a - mbase < fit1 ? fit1 : 0;
            wide += !mlim; /* not within its merge block */
        }
    }
    if (kind == V2_READS_ALIGNED && k > k0) { /* the state of the other kinds */
        mbase &= ~mmask;
        mlim = fit1;
    }
    c->n_wide += wide;
    gx_cols_fill(c, k0, k, tsm, tsz, kind == V2_ANY ? -1 : GX_TRACE_READ);
    s->p = p;
    s->k = k;
    s->addr = addr;
    s->mbase = mbase;
    s->mlim = mlim;
    return kind == V2_ANY ? sum : sum + (k - k0); /* reads: the folds and the entries */
}

/* A global access whose only change besides the address is its SM, in one
 * varint byte (the common record of a trace of many SMs, which the block
 * loop leaves): decoded with the checks that can fail for it (the SM bound,
 * the address wrap; size, lane, cycle and warp are the checked previous
 * record's). 0 when it is not one, or a check fails: the slow path decodes
 * it again and names the error. At least GX_V2_MAX_RECORD bytes at *pp. */
static inline int v2_sm_change(const gx_trace_reader *r, const unsigned char **pp,
                               gx_trace_rec *st)
{
    const unsigned char *p = *pp;
    const unsigned h = p[0], len = h & 15u, op = h >> 5;
    if ((h & V2_X) == 0 || len > 8 || op > GX_TRACE_ATOMIC || p[1] != V2_E_SM)
        return 0;
    const unsigned sm = p[2 + len];
    if (sm >= 0x80u || (r->sm_limit && sm >= r->sm_limit))
        return 0;
    uint64_t z; /* the len address bytes, one load (at least GX_V2_MAX_RECORD bytes at p) */
    memcpy(&z, p + 2, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    z = __builtin_bswap64(z);
#endif
    z &= len < 8 ? ((uint64_t)1 << (8 * len)) - 1 : UINT64_MAX;
    const uint64_t a = st->addr + unzigzag(z);
    if (a > UINT64_MAX - st->size + 1) /* its last byte past 2^64 - 1 */
        return 0;
    st->addr = a;
    st->op = (uint8_t)op;
    st->sm = sm;
    st->arg = 0;
    *pp = p + 3 + len;
    return 1;
}

/* One SM-change record at p (v2_smx_len's kind: the extension bit, L <= 8
 * address bytes, a global op, the SM key): returns its bytes, its SM in
 * *sm and its address after addr in *a (the op is the header's top 3
 * bits); 0 when it is not one or its SM is not below smlim (the caller's
 * loop stops there). At least GX_V2_MAX_RECORD bytes at p. */
static inline __attribute__((always_inline)) unsigned
v2_smx_at(const unsigned char *p, unsigned smlim, uint64_t addr, unsigned *sm, uint64_t *a)
{
    const unsigned rl = v2_smx_len[p[0]];
    if (!rl || p[1] != V2_E_SM)
        return 0;
    const unsigned len = rl - 3;
    *sm = p[2 + len];
    if (*sm >= smlim)
        return 0;
    uint64_t z; /* the len address bytes, one load */
    memcpy(&z, p + 2, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    z = __builtin_bswap64(z);
#endif
    *a = addr + unzigzag(z & v2_len_mask[len]);
    return rl;
}

/* The state v2_sm_aligned carries in and out of v2_sm_run. */
typedef struct v2_sm_state {
    const unsigned char *p;
    size_t k;
    uint64_t addr, recs;
    unsigned op;
} v2_sm_state;

/* v2_sm_run's records of a power-of-two size at multiples of it (the common
 * record: 4-byte reads of many SMs): each lies within its merge block and
 * below 2^64 (no wrap or "wide" test), and the entry before, held in locals
 * (its address and SM), is not read back from the columns; the size column is filled once after the loop, the
 * repeat column is the reader's zeros. Out of line, with its few values in
 * registers (inlined, the decoder's state spilled them). Stops at any other
 * record (v2_sm_run's loop decides). Measured (callgrind, 1 M random 4-byte
 * reads of 8 SMs): the decoder 69.0 -> 55.1 instructions an access, the
 * whole run 199.0 -> 185.0. */
static __attribute__((noinline)) void v2_sm_aligned(gx_trace_cols *c, v2_sm_state *t,
                                                    const unsigned char *plim, size_t max,
                                                    unsigned smlim, uint64_t fit, uint32_t size,
                                                    uint64_t *ops)
{
    const unsigned char *p = t->p;
    size_t k = t->k;
    uint64_t addr = t->addr, recs = 0;
    unsigned op = t->op;
    uint64_t *const ca = c->addr;
    uint32_t *const cs = c->sm, *const cr = c->rep;
    uint16_t *const cz = c->size;
    uint8_t *const co = c->op;
    const uint64_t amask = size - 1;
    /* the entry before: a record folds into it when in its merge block and
     * of its SM; lsm 0x100 (no record's SM, those are < 0x80) when none may */
    uint64_t la = k ? ca[k - 1] : 0;
    unsigned lsm = 0x100;
    if (k && cz[k - 1] == size && co[k - 1] <= GX_TRACE_ATOMIC && (la & fit) + size - 1 <= fit)
        lsm = cs[k - 1];
    const size_t k0 = k;
    uint64_t folds = 0;
    unsigned rl, nsm;
    uint64_t a;
    while (k < max && p < plim && (rl = v2_smx_at(p, smlim, addr, &nsm, &a)) != 0 &&
           !(a & amask)) {
        const unsigned o = p[0] >> 5;
        addr = a;
        op = o;
        p += rl;
        ops[o]++;
        if ((a ^ la) <= fit && nsm == lsm) {
            cr[k - 1]++;
            folds++;
            continue;
        }
        ca[k] = a;
        cs[k] = nsm;
        co[k] = (uint8_t)o;
        k++;
        la = a;
        lsm = nsm;
    }
    recs = k - k0 + folds;
    for (size_t i = k0; i < k; i++)
        cz[i] = (uint16_t)size;
    t->p = p;
    t->k = k;
    t->addr = addr;
    t->recs += recs;
    t->op = op;
}

/* The SM changes after one (v2_sm_change's records, its checks) straight
 * into the columns with the state in locals: each stored as gx_cols_put
 * stores it or folded into the entry before it by gx_cols_put's rule (the
 * same columns, counts and repeats). Stops at the columns' end, fewer than
 * GX_V2_MAX_RECORD bytes left, or any other record (the caller's loop
 * takes it). Measured (callgrind, 1 M random reads of 8 SMs): the
 * decoder's SM-change record ~85 -> ~30 instructions. */
static void v2_sm_run(const gx_trace_reader *r, gx_trace_cols *c, const unsigned char **pp,
                      const unsigned char *end, gx_trace_rec *st)
{
    const unsigned char *p = *pp;
    size_t k = c->n;
    const size_t max = c->cap;
    const uint64_t mb = c->merge_bytes, fit = mb - 1;
    const uint32_t size = st->size;
    const unsigned smlim = r->sm_limit && r->sm_limit < 0x80u ? r->sm_limit : 0x80u;
    const uint64_t wrap = UINT64_MAX - size + 1;
    const int fold = mb > 1 && size <= mb;
    uint64_t addr = st->addr, recs = 0, wide = 0, ops[GX_TRACE_ATOMIC + 1] = {0};
    unsigned sm = st->sm, op = st->op;
    uint64_t *const ca = c->addr;
    uint32_t *const cs = c->sm, *const cr = c->rep;
    uint16_t *const cz = c->size;
    uint8_t *const co = c->op;
    if (end - p < GX_V2_MAX_RECORD)
        return;
    const unsigned char *const plim = end - (GX_V2_MAX_RECORD - 1); /* p < plim: 64 bytes left */
    if (fold && !(size & (size - 1))) { /* v2_sm_aligned's records first */
        v2_sm_state t = {p, k, addr, recs, op};
        v2_sm_aligned(c, &t, plim, max, smlim, fit, size, ops);
        p = t.p;
        if (t.k > k || t.recs > recs) /* the last record's SM is the last entry's */
            sm = (unsigned)cs[t.k - 1];
        k = t.k;
        addr = t.addr;
        recs = t.recs;
        op = t.op;
    }
    while (k < max && p < plim) {
        unsigned nsm;
        uint64_t a;
        const unsigned rl = v2_smx_at(p, smlim, addr, &nsm, &a), o = p[0] >> 5;
        if (!rl || a > wrap) /* past 2^64 - 1 at its last byte: the slow path names it */
            break;
        addr = a;
        sm = nsm;
        op = o;
        p += rl;
        recs++;
        ops[o]++;
        if (fold && k) {
            const size_t l = k - 1;
            if ((a ^ ca[l]) <= fit && nsm == cs[l] && size == cz[l] && co[l] <= GX_TRACE_ATOMIC &&
                (a & fit) + size - 1 <= fit && (ca[l] & fit) + size - 1 <= fit) {
                cr[l]++;
                continue;
            }
        }
        ca[k] = a;
        cs[k] = nsm;
        cz[k] = (uint16_t)size;
        co[k] = (uint8_t)o;
        cr[k] = 0;
        k++;
        wide += !(fold && (a & fit) + size - 1 <= fit); /* gx_trace_cols.n_wide */
    }
    c->n = k;
    c->n_wide += wide;
    c->records += recs;
    for (unsigned o = 0; o <= GX_TRACE_ATOMIC; o++)
        c->ops[o] += ops[o];
    c->bytes += (uint64_t)size * recs;
    st->addr = addr;
    st->sm = sm;
    st->op = (uint8_t)op;
    st->arg = 0;
    *pp = p;
}

/* Version 2 into columns: gx_v2_decode's records (the same fast and slow
 * paths, the same checks and messages) with a fast record stored as column
 * entries (address, op, and the template's SM and size) instead of a
 * 40-byte record, or folded into the entry before it (merging, see
 * gx_trace_cols). The fast records go in blocks (v2_block): one bound check
 * a record (the block's end, from the bytes left and the columns' room),
 * counted by one add; the counts and bytes are added once per block. The
 * template's op is not kept (every record's op is its header's). */
int gx_v2_decode_cols(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg)
{
    const unsigned char *p = r->p, *end = r->end;
    gx_trace_rec st = r->prev;
    const size_t max = c->cap;
    const uint64_t i0 = r->index - c->records; /* the trace index of the batch's first record */
    /* merging: blocks of mb bytes (merge_bytes 1 merges nothing) */
    const uint64_t mb = c->merge_bytes > 1 ? c->merge_bytes : 0;
    const uint64_t mmask = mb ? mb - 1 : 0;
    while (c->n < max) {
        const int size_ok = (uint32_t)st.size - 1u < GX_TRACE_MAX_SIZE;
        if (size_ok) {
            const uint64_t wrap_limit = UINT64_MAX - st.size + 1;
            const uint64_t fit1 = st.size <= mb ? mb - st.size + 1 : 0;
            /* a power-of-two size within the merge block (v2_block's V2_READS_ALIGNED) */
            const int aligned = fit1 && !(st.size & (st.size - 1));
            const uint64_t amask = (uint64_t)st.size - 1;
            v2_run s = {p, c->n, st.addr, 0, 0};
            for (;;) {
                size_t left = (size_t)(end - s.p);
                if (left < GX_V2_MAX_RECORD || s.k == max)
                    break;
                size_t nb = left - (GX_V2_MAX_RECORD - 1);
                if (nb > max - s.k)
                    nb = max - s.k;
                if (nb > V2_BLOCK)
                    nb = V2_BLOCK;
                const unsigned char *b0 = s.p;
                uint64_t sum = 0; /* reads first, then any record from the first other one */
                if (aligned)
                    sum = v2_block(c, &s, b0 + nb, wrap_limit, mmask, fit1, amask, st.sm,
                                   st.size, V2_READS_ALIGNED);
                if (s.p < b0 + nb)
                    sum += v2_block(c, &s, b0 + nb, wrap_limit, mmask, fit1, amask, st.sm,
                                    st.size, V2_READS);
                if (s.p < b0 + nb)
                    sum += v2_block(c, &s, b0 + nb, wrap_limit, mmask, fit1, amask, st.sm,
                                    st.size, V2_ANY);
                const uint64_t field = (1u << (V2_WR - V2_REC)) - 1;
                uint64_t recs = sum >> V2_REC & field, wr = sum >> V2_WR & field;
                uint64_t at = sum >> V2_AT & field;
                c->ops[GX_TRACE_READ] += recs - wr - at;
                c->ops[GX_TRACE_WRITE] += wr;
                c->ops[GX_TRACE_ATOMIC] += at;
                c->records += recs;
                c->bytes += (uint64_t)st.size * recs;
                if (s.p < b0 + nb)
                    break; /* stopped inside the block: the slow path */
            }
            p = s.p;
            c->n = s.k;
            st.addr = s.addr;
        }
        if (c->n == max)
            break;
        if (end - p < GX_V2_MAX_RECORD) {
            if (!r->eof)
                break; /* refill first */
            if (p == end) {
                r->p = p;
                r->prev = st;
                return v2_fail(r, i0 + c->records, msg, "truncated (no end marker)");
            }
        }
        unsigned h = *p;
        if (h == GX_TRACE_V2_END) {
            r->prev = st;
            return v2_end(r, p, i0 + c->records, msg);
        }
        if (end - p >= GX_V2_MAX_RECORD && v2_sm_change(r, &p, &st)) {
            gx_cols_put(c, &st);
            v2_sm_run(r, c, &p, end, &st); /* the SM changes after it, without the block's set-up */
            continue;
        }
        int rc = v2_slow(r, &p, &st, i0 + c->records, msg);
        if (rc)
            return rc;
        gx_cols_put(c, &st);
    }
    r->p = p;
    r->prev = st;
    return GX_OK;
}
