/* text_word.c - the text column decoder's word-at-a-time path: common
 * lines `SM OP 0xHEX [SIZE]\n` (single blanks, 1-15 address digits, no keys
 * or comment) read with 8-byte loads (little-endian order) while 64 bytes
 * of the buffer are left past a line's start, straight into the columns.
 *
 * Notes:
 * - Two levels. A line of the template (text_pre: the last common line's
 *   prefix "SM OP 0x" and suffix " SIZE\n", each compared as one masked
 *   word) is the same line but for its address digits, so only the digits
 *   are parsed (text_tmpl_run); any other common line is parsed field by
 *   field (fast_line_word) and becomes the template.
 * - Lines the path does not take (other spacing, keys, comments, 16
 *   digits, no 0x, the buffer's last 64 bytes) go back to text.c's
 *   byte-wise parsers from their start, so their records, line numbers and
 *   messages are those of gx_text_decode.
 * - The same records and columns as gx_cols_put would give: every line
 *   stored as an entry or folded into the entry before it. */
#include <string.h>

#include "gpuxray/bits.h"
#include "text_word.h"

#define BYTES_01 0x0101010101010101ULL
#define BYTES_80 0x8080808080808080ULL

static uint64_t load_le64(const unsigned char *q)
{
    uint64_t w;
    memcpy(&w, q, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The bytes of w below '0' (blank, newline, ...), flagged by their high
 * bit; the lowest flag is exact (a borrow runs only upwards). */
static inline uint64_t below_digits(uint64_t w)
{
    return (w - 0x30 * BYTES_01) & ~w & BYTES_80;
}

/* Each byte of w to the nibble it stands for as a hexadecimal digit ('0'..'9'
 * their low four bits, letters nine more: bit 6 tells them apart); any
 * byte gives 0..24, no carry between bytes. */
static inline uint64_t hex_nibbles(uint64_t w)
{
    return (w & 0x0f * BYTES_01) + 9 * ((w >> 6) & BYTES_01);
}

/* The bytes of w (each >= '0', as below_digits leaves them) that are not
 * hexadecimal digits, flagged by their high bit, for nib = hex_nibbles(w):
 * a digit is below 0x80 and either '0'..'9' (bit 6 clear, bit 4 set,
 * nibble < 10) or a letter A-F / a-f (bit 6 set, bit 4 clear, nibble 10..15). */
static inline uint64_t hex_bad(uint64_t w, uint64_t nib)
{
    const uint64_t ge10 = nib + 0x76 * BYTES_01, ge16 = nib + 0x70 * BYTES_01;
    const uint64_t b6 = w << 1, b4 = w << 3; /* bits 6 and 4 at bit 7 */
    return (ge10 ^ b6) | ge16 | ~(b6 ^ b4) | w;
}

/* The value of the nd (1..8) hexadecimal digits whose nibbles are the low
 * bytes of nib (first digit lowest, as in memory); 0 when a byte of those
 * is not a digit (*bad set). The digits are moved to the top (leading zero
 * nibbles), the bytes reversed (the last digit lowest), then pairs, quads
 * and octets joined by a shift and an or each (measured against a multiply
 * each: 217.5 -> 216.5 instructions an access, text random 64 MiB). */
static inline __attribute__((always_inline)) uint64_t hex_value8(uint64_t w, unsigned nd,
                                                                uint64_t *bad, int pext)
{
    const unsigned sh = 8 * (8 - nd);
    const uint64_t nib = hex_nibbles(w);
    *bad |= (hex_bad(w, nib) << sh) & BYTES_80;
    uint64_t x = __builtin_bswap64(nib << sh); /* the last digit lowest */
#if GX_HOST_V3
    if (pext) { /* the low nibble of each byte, packed (BMI2 PEXT: one instruction) */
        uint64_t v;
        __asm__("pextq %2, %1, %0" : "=r"(v) : "r"(x), "r"(0x0f * BYTES_01));
        return v;
    }
#endif
    (void)pext;
    x = (x | x >> 4) & 0x00ff00ff00ff00ffULL;
    x = (x | x >> 8) & 0x0000ffff0000ffffULL;
    return (x | x >> 16) & 0xffffffffULL;
}

/* The hexadecimal digits at q (1-15 of them, then a byte below '0'): the
 * value into *v and the byte after the digits returned; NULL for anything
 * else (no digit, 16 or more, a byte that is not a digit). Reads 16 bytes
 * at q. */
static inline __attribute__((always_inline)) const unsigned char *
hex_word(const unsigned char *q, uint64_t *v, int pext)
{
    const uint64_t w0 = load_le64(q);
    const uint64_t m0 = below_digits(w0);
    uint64_t bad = 0;
    if (m0) {
        const unsigned nd = (unsigned)__builtin_ctzll(m0) >> 3;
        if (!nd)
            return NULL;
        *v = hex_value8(w0, nd, &bad, pext);
        return bad ? NULL : q + nd;
    }
    const uint64_t w1 = load_le64(q + 8);
    const uint64_t m1 = below_digits(w1);
    if (!m1)
        return NULL;
    const unsigned nd = (unsigned)__builtin_ctzll(m1) >> 3;
    uint64_t x = hex_value8(w0, 8, &bad, pext);
    if (nd)
        x = x << (4 * nd) | hex_value8(w1, nd, &bad, pext);
    *v = x;
    return bad ? NULL : q + 8 + nd;
}

/* op_code[c]: 1 + the global op of the op letter c (R W A, any case), 0
 * for other bytes. */
static const unsigned char op_code[256] = {
    ['R'] = 1 + GX_TRACE_READ,  ['r'] = 1 + GX_TRACE_READ,  ['W'] = 1 + GX_TRACE_WRITE,
    ['w'] = 1 + GX_TRACE_WRITE, ['A'] = 1 + GX_TRACE_ATOMIC, ['a'] = 1 + GX_TRACE_ATOMIC};

/* One common line parsed by fast_line's rules (a subset of them: 1-15
 * address digits), a word at a time, for a line that has at least 64
 * readable bytes from its start (the caller's bound; the line's newline
 * lies before them). Returns the next line's start, or NULL for any other
 * line (fast_line and parse_line then take it from its start). */
typedef struct text_fast {
    uint64_t addr;
    uint32_t sm;
    uint32_t size;
    unsigned op;
} text_fast;


static inline __attribute__((always_inline)) const char *fast_line_word(const char *p,
                                                                      uint64_t sm_max,
                                                                      text_fast *f,
                                                                      text_pre *pre)
{
    const unsigned char *q = (const unsigned char *)p;
    const uint64_t w0 = load_le64(q);
    uint64_t sm, len = 0; /* len: a new prefix's length, 0 when the template's matched */
    unsigned opc, d;
    if (!((w0 ^ pre->w) & pre->mask) && pre->opc) {
        sm = pre->sm;
        opc = pre->opc;
        q += pre->len;
    } else {
        d = (unsigned)q[0] - '0';
        if (d > 9)
            return NULL;
        sm = d;
        q++;
        for (int nd = 1; (d = (unsigned)*q - '0') <= 9; nd++) {
            if (nd == 10)
                return NULL; /* 11 digits or more: over UINT32_MAX */
            sm = sm * 10 + d;
            q++;
        }
        /* " OP 0x": bytes 0, 2, 3, 4 fixed (x in either case), byte 1 the op */
        const uint64_t w = load_le64(q);
        const uint64_t shape = ' ' | ' ' << 16 | (uint64_t)'0' << 24 | (uint64_t)'x' << 32;
        if (((w | 0x20ULL << 32) & 0xffffff00ffULL) != shape || sm > sm_max)
            return NULL;
        opc = op_code[w >> 8 & 0xff];
        if (!opc)
            return NULL;
        q += 5;
        len = (uint64_t)(q - (const unsigned char *)p);
    }
    uint64_t addr;
    q = hex_word(q, &addr, 0);
    if (!q)
        return NULL;
    const unsigned char *const sfx = q; /* the suffix: from here to the newline */
    /* then "\n" or " S\n" with one size digit, else the longer sizes;
     * addr < 2^60 (at most 15 digits): no access wraps past 2^64 */
    unsigned size = GX_TRACE_DEFAULT_SIZE;
    const uint32_t t = (uint32_t)load_le64(q);
    if ((t & 0xff) == '\n') {
        q += 1;
    } else if ((t & 0xff00ff) == (' ' | '\n' << 16) && (d = (t >> 8 & 0xff) - '1') <= 8) {
        size = d + 1;
        q += 3;
    } else {
        if (*q != ' ' || (d = (unsigned)q[1] - '0') > 9)
            return NULL;
        size = d;
        q += 2;
        if ((d = (unsigned)*q - '0') <= 9) {
            size = size * 10 + d;
            q++;
            if ((d = (unsigned)*q - '0') <= 9) {
                size = size * 10 + d;
                q++;
            }
        }
        if (size < 1 || size > GX_TRACE_MAX_SIZE || *q != '\n')
            return NULL;
        q++;
    }
    f->addr = addr;
    f->sm = (uint32_t)sm;
    f->size = size;
    f->op = opc - 1;
    /* the template from a whole valid line only: a prefix taken from a line that then
     * failed would pair with the suffix of an older one (the text fuzzer found a run
     * of such a template reading comments as lines) */
    if (len) {
        pre->w = w0;
        pre->len = len;
        pre->mask = len < 8 ? (1ULL << (8 * len)) - 1 : ~0ULL;
        pre->sm = (uint32_t)sm;
        pre->opc = len <= 8 ? opc : 0;
    }
    pre->slen = (uint64_t)(q - sfx); /* " SIZE\n" (at most 5 bytes) or "\n" */
    pre->smask = (1ULL << (8 * pre->slen)) - 1;
    pre->sw = load_le64(sfx) & pre->smask;
    pre->size = size;
    return (const char *)q;
}


/* text_tmpl_run's merge base of an entry that takes no folds: hex_word's
 * addresses are below 2^60, so (addr ^ NO_FOLD) >= 2^63 > any fit1. */
#define NO_FOLD (1ULL << 63)

/* A template text_tmpl_run takes: a size that nothing folds into (no
 * merging, or a size over the merge block: every entry wide), or a power
 * of two within the merge block, whose lines it takes at addresses that
 * are multiples of the size (every entry within its block). Any other
 * template's lines go to fast_line_word one by one. */
static int tmpl_runs(const text_word_env *e, uint64_t size)
{
    return !e->mb || size > e->mb || !(size & (size - 1));
}

/* The lines of the template t (tmpl_runs) from p: each the prefix's word,
 * 1-15 address digits (hex_word) and the suffix's word, stored (address
 * and an empty repeat count) or folded into the entry before. Stops at the
 * first other line (or a line to store whose address is not a multiple
 * of a size that folds), word_end or the columns' end; returns where it
 * stopped. Out of line with its own registers (few live values: the whole
 * decoder's spilled). Without a fit test or a wide count a line: measured
 * 216.5 -> 214.5 instructions an access, text random 64 MiB (stream 97.3
 * -> 97.9). */
static inline __attribute__((always_inline)) const char *
text_tmpl_run_s(const text_word_env *e, text_cols *s, const text_pre *t, const char *p,
                unsigned long long *line, int pext)
{
    const unsigned char *q = (const unsigned char *)p;
    const unsigned char *const qend = (const unsigned char *)e->word_end;
    gx_trace_cols *const c = e->c;
    /* entries from s->k: a line stored at *pa (its repeat count is 0: the
     * reader clears the column) */
    uint64_t *const ca = c->addr, *pa = ca + s->k;
    uint64_t *const palim = c->addr + c->cap;
    const text_pre tc = *t; /* a copy: the column stores cannot alias it */
    const uint64_t size = tc.size, mmask = e->mmask, key = tc.sm | size << 32;
    /* fold: a line folds when (addr ^ mbase) < fit1, mbase the merge block
     * of the entry before (block-aligned: the same test as gx_cols_put's),
     * or NO_FOLD (above any address of at most 15 digits) when that entry
     * takes no folds; every entry the run stores lies within its block
     * (amask: a multiple of the size; a folded line lies within the block
     * before). !fold: nothing folds, every entry wide. */
    const int fold = e->mb && size <= e->mb;
    const uint64_t fit1 = fold ? e->mb - size + 1 : 0, amask = fold ? size - 1 : 0;
    uint64_t mbase = s->key == key && s->mlim ? s->mbase : NO_FOLD, folds = 0;
    /* a line takes at least minl bytes and one entry at most: while q <
     * qstop (room lines of minl bytes ahead, or word_end) the columns have
     * room, one test a line */
    const uint64_t minl = tc.len + 1 + tc.slen;
    for (;;) {
        /* the last line may end past qstop, or past qend: then stop */
        if (q >= qend)
            break;
        const size_t room = (size_t)(palim - pa);
        const unsigned char *qstop =
            (size_t)(qend - q) / minl < room ? qend : q + room * minl;
        if (q >= qstop)
            break;
        while (q < qstop) {
            if ((load_le64(q) ^ tc.w) & tc.mask)
                goto done;
            uint64_t addr;
            const unsigned char *d = hex_word(q + tc.len, &addr, pext);
            if (!d || ((load_le64(d) ^ tc.sw) & tc.smask))
                goto done;
            if ((addr ^ mbase) < fit1) { /* within the block before: it fits */
                q = d + tc.slen;
                c->rep[pa - ca - 1]++;
                folds++;
                continue;
            }
            if (addr & amask)
                goto done;
            q = d + tc.slen;
            *pa++ = addr;
            mbase = addr & ~mmask;
        }
    }
done:;
    const size_t k0 = s->k, k = (size_t)(pa - ca);
    const uint64_t lines = (k - k0) + folds; /* each stored or folded */
    gx_cols_fill(c, k0, k, tc.sm, (uint16_t)size, (int)tc.opc - 1);
    if (k > k0) { /* the last entry within its block (fold) or takes no folds */
        s->key = key;
        s->mbase = mbase;
        s->mlim = fit1;
    }
    s->k = k;
    s->ops[tc.opc - 1] += lines;
    s->bytes += size * lines;
    s->wide += fold ? 0 : k - k0;
    *line += lines;
    return (const char *)q;
}

static __attribute__((noinline)) const char *text_tmpl_run(const text_word_env *e,
                                                           text_cols *s, const text_pre *t,
                                                           const char *p,
                                                           unsigned long long *line)
{
    return text_tmpl_run_s(e, s, t, p, line, 0);
}

#if GX_HOST_V3
/* The same compiled for x86-64-v3 hosts with a fast PEXT (gx_host_v3_pext),
 * the address digits' nibbles packed by PEXT (hex_value8): measured 205.2
 * -> 203.1 instructions an access for the copy, -> 197.1 with PEXT, text
 * random 64 MiB. */
static __attribute__((noinline)) GX_TARGET_V3 const char *
text_tmpl_run_v3(const text_word_env *e, text_cols *s, const text_pre *t, const char *p,
                 unsigned long long *line)
{
    return text_tmpl_run_s(e, s, t, p, line, 1);
}
#endif

const char *gx_text_words(const text_word_env *e, text_cols *s, text_pre *pre, const char *p,
                          unsigned long long *line)
{
    const int v3 = gx_host_v3_pext();
    (void)v3; /* without GX_HOST_V3, no other copy */
    gx_trace_cols *const c = e->c;
    const size_t max = c->cap;
    const uint64_t mb = e->mb, mmask = e->mmask;
    while (p < e->word_end && s->k < max) {
        if (pre->opc && !((load_le64((const unsigned char *)p) ^ pre->w) & pre->mask) &&
            tmpl_runs(e, pre->size)) {
#if GX_HOST_V3
            if (v3)
                p = text_tmpl_run_v3(e, s, pre, p, line);
            else
#endif
                p = text_tmpl_run(e, s, pre, p, line);
            if (p >= e->word_end || s->k >= max)
                break;
        }
        text_fast f;
        const char *q = fast_line_word(p, e->sm_max, &f, pre);
        if (!q)
            break;
        ++*line;
        p = q;
        s->ops[f.op]++;
        s->bytes += f.size;
        const uint64_t key = f.sm | (uint64_t)f.size << 32;
        if (key == s->key && f.addr - s->mbase < s->mlim) {
            c->rep[s->k - 1]++;
            continue;
        }
        const size_t k = s->k++;
        c->addr[k] = f.addr;
        c->sm[k] = f.sm;
        c->size[k] = (uint16_t)f.size;
        c->op[k] = (uint8_t)f.op; /* rep[k] is 0 (the reader clears it) */
        s->key = key;
        s->mbase = f.addr & ~mmask;
        s->mlim = (f.addr & mmask) + f.size <= mb ? mb - f.size + 1 : 0;
        s->wide += !s->mlim; /* not within its merge block */
    }
    return p;
}
