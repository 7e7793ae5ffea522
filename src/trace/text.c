/* text.c - the text trace decoder: `SM OP ADDRESS [SIZE] [KEY=VALUE ...]`
 * lines (syntax in include/gpuxray/trace.h) into records, a batch at a time
 * from the streaming reader's buffer.
 *
 * Notes:
 * - Hand-written field parsers (no strtoull / sscanf per field): one pass
 *   over each line. Fields stop at a blank, '#', newline or the end.
 * - Only whole lines are decoded: the part after the buffer's last newline
 *   waits for the next refill (or is the last line at the end of input).
 * - Every record is checked (gx_trace_check rules) as it is decoded.
 * - The column decoder reads common lines a word at a time (text_word.c)
 *   while 64 bytes of the buffer are left past the line's start; any line
 *   it does not take goes to the byte-wise parsers, which give every
 *   message. */
#include <string.h>

#include "text_word.h"

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
                       "one starts with %s or %s)", c->source, c->line, what, GX_TRACE_MAGIC,
                       GX_TRACE_MAGIC2);
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
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
        p++;
    }
    if (!is_field_end(p, end))
        return -1;
    *pp = p;
    *out = v;
    return 0;
}

/* Hexadecimal, 0x optional (mandatory when want_prefix), 1-16 digits. */
static int parse_hex(const char **pp, const char *end, int want_prefix, uint64_t *out)
{
    const char *p = *pp;
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    else if (want_prefix)
        return -1;
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

/* A KEY=VALUE value: decimal or 0x-hexadecimal, up to max. */
static int parse_value(const char **pp, const char *end, uint64_t max, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v;
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        if (parse_hex(&p, end, 1, &v))
            return -1;
    } else if (parse_dec(&p, end, UINT64_MAX, &v)) {
        return -1;
    }
    if (v > max)
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

/* The op token at p: R W A SR SW MAP INV (any case); -1 when none. *len =
 * its length. */
static int parse_op(const char *p, const char *end, int *len)
{
    char t[4] = {0, 0, 0, 0};
    int k = 0;
    while (k < 4 && !is_field_end(p + k, end)) {
        char ch = p[k];
        t[k++] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
    }
    *len = k;
    if (k == 4 && !is_field_end(p + 4, end))
        return -1;
    if (k == 1)
        return t[0] == 'R' ? GX_TRACE_READ : t[0] == 'W' ? GX_TRACE_WRITE
               : t[0] == 'A' ? GX_TRACE_ATOMIC : -1;
    if (k == 2 && t[0] == 'S')
        return t[1] == 'R' ? GX_TRACE_SHARED_READ : t[1] == 'W' ? GX_TRACE_SHARED_WRITE : -1;
    if (k == 3 && !memcmp(t, "MAP", 3))
        return GX_TRACE_MAP;
    if (k == 3 && !memcmp(t, "INV", 3))
        return GX_TRACE_INVALIDATE;
    return -1;
}

enum { KEY_CYCLE, KEY_WARP, KEY_LANE, KEY_BYTES, KEY_PAGE, KEYS };
static const char *const key_names[KEYS] = {"cycle", "warp", "lane", "bytes", "page"};

/* KEY=VALUE fields from p to the end of the line into r (page into *page). */
static int parse_keys(const text_ctx *c, const char **pp, const char *end, gx_trace_rec *r,
                      uint64_t *page, unsigned *seen)
{
    const char *p = *pp;
    while (p < end && *p != '#' && *p != '\n') {
        const char *tok = p;
        int k = 0;
        for (; k < KEYS; k++) {
            size_t n = strlen(key_names[k]);
            if ((size_t)(end - p) > n && !memcmp(p, key_names[k], n) && p[n] == '=')
                break;
        }
        if (k == KEYS)
            return gx_fail(c->msg, GX_EPARSE,
                           "%s:%llu: extra token '%.*s' (SM OP ADDRESS [SIZE] "
                           "[cycle=|warp=|lane=|bytes=|page=VALUE ...])",
                           c->source, c->line, token_len(p, end), p);
        if (*seen & (1u << k))
            return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s= given twice", c->source, c->line,
                           key_names[k]);
        *seen |= 1u << k;
        p += strlen(key_names[k]) + 1;
        uint64_t v, max = k == KEY_WARP ? UINT32_MAX : k == KEY_LANE ? GX_TRACE_LANES - 1
                                                                     : UINT64_MAX;
        if (parse_value(&p, end, max, &v)) {
            char what[32], expect[96];
            snprintf(what, sizeof what, "bad %s", key_names[k]);
            snprintf(expect, sizeof expect, "a decimal or 0x-hexadecimal number up to %llu",
                     (unsigned long long)max);
            return line_fail(c, what, tok, end, expect);
        }
        if (k == KEY_CYCLE)
            r->cycle = v;
        else if (k == KEY_WARP)
            r->warp = (uint32_t)v;
        else if (k == KEY_LANE)
            r->lane = (uint8_t)v;
        else if (k == KEY_BYTES)
            r->arg = v;
        else
            *page = v;
        p = skip_blanks(p, end);
    }
    *pp = p;
    return GX_OK;
}

/* The rules that need the whole line (MAP and INV fields). */
static int finish_special(const text_ctx *c, gx_trace_rec *r, unsigned seen, uint64_t page,
                          int had_size)
{
    const char *name = r->op == GX_TRACE_MAP ? "MAP" : "INV";
    if (had_size)
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s takes no SIZE (bytes= gives the range)",
                       c->source, c->line, name);
    if (r->op == GX_TRACE_INVALIDATE) {
        if (seen & (1u << KEY_PAGE))
            return gx_fail(c->msg, GX_EPARSE, "%s:%llu: INV takes no page=", c->source, c->line);
        r->size = 0;
        return GX_OK;
    }
    if (!(seen & (1u << KEY_BYTES)) || !(seen & (1u << KEY_PAGE)))
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: MAP needs bytes=N and page=N", c->source,
                       c->line);
    if (page & (page - 1) || page < GX_TRACE_MIN_PAGE_BYTES || page > GX_TRACE_MAX_PAGE_BYTES)
        return gx_fail(c->msg, GX_EPARSE,
                       "%s:%llu: bad page %llu (a power of two, %llu .. %llu bytes expected)",
                       c->source, c->line, (unsigned long long)page,
                       GX_TRACE_MIN_PAGE_BYTES, GX_TRACE_MAX_PAGE_BYTES);
    r->size = (uint16_t)__builtin_ctzll(page);
    return GX_OK;
}

/* The fields after ADDRESS: [SIZE] [KEY=VALUE ...], then the line's rules. */
static int parse_tail(const text_ctx *c, const char **pp, const char *end, gx_trace_rec *r)
{
    const char *p = *pp;
    int had_size = 0;
    const char *q = p;
    while (!is_field_end(q, end) && *q != '=')
        q++;
    if (q == end || *q != '=') { /* not KEY=VALUE: SIZE */
        const char *tok = p;
        uint64_t size;
        if (parse_dec(&p, end, 1u << 20, &size) || size < 1 || size > GX_TRACE_MAX_SIZE) {
            char expect[64];
            snprintf(expect, sizeof expect, "decimal bytes 1..%d", GX_TRACE_MAX_SIZE);
            return line_fail(c, "bad size", tok, end, expect);
        }
        r->size = (uint16_t)size;
        had_size = 1;
        p = skip_blanks(p, end);
    }
    unsigned seen = 0;
    uint64_t page = 0;
    if (p < end && *p != '#' && *p != '\n') {
        int rc = parse_keys(c, &p, end, r, &page, &seen);
        if (rc)
            return rc;
    }
    *pp = p;
    if (!gx_trace_op_is_global(r->op) && r->op >= GX_TRACE_MAP) {
        int rc = finish_special(c, r, seen, page, had_size);
        if (rc)
            return rc;
    } else if (seen & (1u << KEY_BYTES | 1u << KEY_PAGE)) {
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: bytes= and page= belong to MAP and INV",
                       c->source, c->line);
    }
    gx_msg m;
    if (gx_trace_check(r, c->sm_limit, &m))
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s", c->source, c->line, m.text);
    return GX_OK;
}

/* The line starting at p (end = the end of whole lines: fields stop at a
 * newline, so no separate search for it). *have = 1 when it holds a
 * record; *next = the next line's start. */
static int parse_line(const text_ctx *c, const char *p, const char *end, gx_trace_rec *r,
                      int *have, const char **next)
{
    *have = 0;
    p = skip_blanks(p, end);
    if (p == end || *p == '#' || *p == '\n') {
        *next = p < end && *p == '\n' ? p + 1 : next_line(p, end);
        return GX_OK;
    }
    uint64_t sm, addr;
    const char *tok = p;
    if (parse_dec(&p, end, UINT32_MAX, &sm))
        return line_fail(c, "bad SM", tok, end, "a decimal SM number");
    if (c->sm_limit && sm >= c->sm_limit)
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: bad SM %llu (the profile has %u SMs: 0..%u)",
                       c->source, c->line, (unsigned long long)sm, c->sm_limit,
                       c->sm_limit - 1);
    p = skip_blanks(p, end);
    tok = p;
    int oplen, op = parse_op(p, end, &oplen);
    if (op < 0)
        return line_fail(c, "bad op", tok, end, "R, W, A, SR, SW, MAP or INV");
    p = skip_blanks(p + oplen, end);
    tok = p;
    if (parse_hex(&p, end, 0, &addr))
        return line_fail(c, "bad address", tok, end, "a hexadecimal address of 1-16 digits");
    p = skip_blanks(p, end);
    memset(r, 0, sizeof *r);
    r->addr = addr;
    r->sm = (uint32_t)sm;
    r->size = GX_TRACE_DEFAULT_SIZE;
    r->op = (uint8_t)op;
    if (p < end && *p != '#' && *p != '\n') {
        int rc = parse_tail(c, &p, end, r);
        if (rc)
            return rc;
    } else if (op >= GX_TRACE_MAP) {
        int rc = finish_special(c, r, 0, 0, 0);
        if (rc)
            return rc;
    } else if (addr > UINT64_MAX - (GX_TRACE_DEFAULT_SIZE - 1)) {
        gx_msg m;
        (void)gx_trace_check(r, 0, &m);
        return gx_fail(c->msg, GX_EPARSE, "%s:%llu: %s", c->source, c->line, m.text);
    }
    *next = p < end && *p == '\n' ? p + 1 : next_line(p, end);
    *have = 1;
    return GX_OK;
}

/* hex_digit[c]: 1 + the value of hexadecimal digit c, 0 for other bytes
 * (a constant table: the decoder may run in any thread). */
static const unsigned char hex_digit[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,
    ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
    ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
    ['F'] = 16};

/* The common line `SM R|W|A [0x]HEX [SIZE]\n` (single spaces, no keys, no
 * comment), parsed without bounds checks: the caller guarantees a newline
 * before end, and every loop stops at a byte that is not its digit (the
 * newline included). Returns the next line's start, or NULL for any other
 * line (parse_line then takes it from its start, with the full rules and
 * messages). Measured (callgrind, 1 M random-trace lines, whole decode):
 * 570 -> 120 instructions a line. */
static inline __attribute__((always_inline)) const char *fast_line(const char *p, uint32_t sm_limit,
                                                                 gx_trace_rec *r)
{
    const unsigned char *q = (const unsigned char *)p;
    uint64_t sm = 0;
    unsigned d, nd = 0;
    while ((d = (unsigned)*q - '0') <= 9 && nd < 10) {
        sm = sm * 10 + d;
        q++;
        nd++;
    }
    if (!nd || *q != ' ' || sm > UINT32_MAX || (sm_limit && sm >= sm_limit))
        return NULL;
    q++;
    int op;
    switch (*q | 0x20) {
    case 'r':
        op = GX_TRACE_READ;
        break;
    case 'w':
        op = GX_TRACE_WRITE;
        break;
    case 'a':
        op = GX_TRACE_ATOMIC;
        break;
    default:
        return NULL;
    }
    if (q[1] != ' ')
        return NULL;
    q += 2;
    if (q[0] == '0' && (q[1] | 0x20) == 'x')
        q += 2;
    uint64_t addr = 0;
    unsigned h;
    nd = 0;
    while ((h = hex_digit[*q]) != 0) {
        addr = addr << 4 | (h - 1);
        q++;
        nd++;
    }
    if (!nd || nd > 16)
        return NULL;
    uint64_t size = GX_TRACE_DEFAULT_SIZE;
    if (*q == ' ') {
        q++;
        size = 0;
        nd = 0;
        while ((d = (unsigned)*q - '0') <= 9 && nd < 4) {
            size = size * 10 + d;
            q++;
            nd++;
        }
        if (!nd || size < 1 || size > GX_TRACE_MAX_SIZE)
            return NULL;
    }
    if (*q != '\n' || addr > UINT64_MAX - (size - 1))
        return NULL;
    memset(r, 0, sizeof *r);
    r->addr = addr;
    r->sm = (uint32_t)sm;
    r->size = (uint16_t)size;
    r->op = (uint8_t)op;
    return (const char *)q + 1;
}

/* The end of the whole lines in [p, end): after the last newline, or end at
 * the end of input; NULL when no whole line is there yet. */
static const char *whole_lines_end(const gx_trace_reader *r)
{
    if (r->eof)
        return (const char *)r->end;
    const char *s = (const char *)r->p;
    size_t len = (size_t)(r->end - r->p);
    while (len && s[len - 1] != '\n')
        len--;
    return len ? s + len : NULL;
}

/* A batch's bounds in the buffer: *end past its whole lines (NULL: none
 * yet, wait for more), *fast_end past the last newline before *end (lines
 * before it end with a newline inside the batch). GX_OK, or the error of a
 * line longer than GX_TRACE_MAX_LINE. */
static int batch_bounds(const gx_trace_reader *r, const char **end, const char **fast_end,
                        gx_msg *msg)
{
    *end = *fast_end = whole_lines_end(r);
    if (!*end) {
        if ((size_t)(r->end - r->p) >= GX_TRACE_MAX_LINE)
            return gx_fail(msg, GX_EPARSE, "%s:%llu: line longer than %d bytes", r->source,
                           (unsigned long long)r->line + 1, GX_TRACE_MAX_LINE);
        return GX_OK; /* wait for more */
    }
    const char *p = (const char *)r->p;
    while (*fast_end > p && (*fast_end)[-1] != '\n')
        (*fast_end)--;
    return GX_OK;
}

int gx_text_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg)
{
    *n = 0;
    const char *end, *fast_end;
    int rc_bounds = batch_bounds(r, &end, &fast_end, msg);
    if (rc_bounds || !end)
        return rc_bounds;
    text_ctx c = {r->source, r->line, r->sm_limit, msg};
    const char *p = (const char *)r->p;
    size_t k = 0;
    while (p < end && k < max) {
        c.line++;
        if (p < fast_end) {
            const char *q = fast_line(p, r->sm_limit, &out[k]);
            if (q) {
                p = q;
                k++;
                continue;
            }
        }
        int have;
        const char *start = p;
        int rc = parse_line(&c, p, end, &out[k], &have, &p);
        if (rc)
            return rc;
        if (p - start > GX_TRACE_MAX_LINE)
            return gx_fail(msg, GX_EPARSE, "%s:%llu: line longer than %d bytes", r->source,
                           c.line, GX_TRACE_MAX_LINE);
        k += (size_t)have;
    }
    r->line = c.line;
    r->p = (const unsigned char *)p;
    if (p == (const char *)r->end && r->eof)
        r->done = 1;
    *n = k;
    return GX_OK;
}

static inline __attribute__((always_inline)) void text_cols_load(text_cols *s, const gx_trace_cols *c,
                                                             uint64_t mmask)
{
    s->k = c->n;
    memcpy(s->ops, c->ops, sizeof s->ops);
    s->bytes = c->bytes;
    s->wide = c->n_wide;
    s->key = s->mbase = s->mlim = 0;
    if (!c->n || !gx_trace_op_is_global(c->op[c->n - 1]))
        return;
    const uint64_t a = c->addr[c->n - 1], size = c->size[c->n - 1];
    s->key = c->sm[c->n - 1] | size << 32;
    s->mbase = a & ~mmask;
    s->mlim = (a & mmask) + size <= mmask + (mmask != 0) ? mmask + 2 - size : 0;
}

static inline __attribute__((always_inline)) void text_cols_store(const text_cols *s,
                                                              gx_trace_cols *c)
{
    c->records += (s->ops[0] - c->ops[0]) + (s->ops[1] - c->ops[1]) + (s->ops[2] - c->ops[2]);
    c->n = s->k;
    memcpy(c->ops, s->ops, sizeof s->ops);
    c->bytes = s->bytes;
    c->n_wide = s->wide;
}

/* Any line the word path does not take, as gx_text_decode reads it
 * (fast_line, else parse_line), into c: *pp advances past it. */
static int text_line_cols(gx_trace_reader *r, gx_trace_cols *c, text_ctx *tc, const char **pp,
                          const char *end, const char *fast_end)
{
    gx_trace_rec t;
    const char *p = *pp;
    if (p < fast_end) {
        const char *q = fast_line(p, r->sm_limit, &t);
        if (q) {
            *pp = q;
            gx_cols_put(c, &t);
            return GX_OK;
        }
    }
    int have;
    int rc = parse_line(tc, p, end, &t, &have, pp);
    if (rc)
        return rc;
    if (*pp - p > GX_TRACE_MAX_LINE)
        return gx_fail(tc->msg, GX_EPARSE, "%s:%llu: line longer than %d bytes", r->source,
                       tc->line, GX_TRACE_MAX_LINE);
    if (have)
        gx_cols_put(c, &t);
    return GX_OK;
}

/* gx_text_decode into columns: a common line goes to the columns without a
 * 40-byte record in between, by the word path (fast_line_word, while 64
 * bytes are left in the buffer) or fast_line; every other line as
 * gx_text_decode reads it. The same records, checks and messages. */
int gx_text_decode_cols(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg)
{
    const char *end, *fast_end;
    int rc_bounds = batch_bounds(r, &end, &fast_end, msg);
    if (rc_bounds || !end)
        return rc_bounds;
    text_ctx tc = {r->source, r->line, r->sm_limit, msg};
    const char *p = (const char *)r->p;
    /* lines starting before word_end have 64 bytes readable from their start */
    const char *word_end = p;
    if (r->end - r->p > 64)
        word_end = (const char *)r->end - 64 < fast_end ? (const char *)r->end - 64 : fast_end;
    const uint64_t mb = c->merge_bytes > 1 ? c->merge_bytes : 0;
    const uint64_t mmask = mb ? mb - 1 : 0;
    const size_t max = c->cap;
    /* the largest SM a line may name (sm_limit 0: any 32-bit one) */
    const uint64_t sm_max = r->sm_limit ? r->sm_limit - 1u : UINT32_MAX;
    const text_word_env we = {word_end, c, sm_max, mb, mmask};
    text_cols s;
    text_cols_load(&s, c, mmask);
    unsigned long long line = tc.line;
    text_pre pre;
    memset(&pre, 0, sizeof pre);
    while (p < end && s.k < max) {
        p = gx_text_words(&we, &s, &pre, p, &line); /* the word path's run of common lines */
        if (p >= end || s.k >= max)
            break;
        line++;
        text_cols_store(&s, c);
        tc.line = line;
        int rc = text_line_cols(r, c, &tc, &p, end, fast_end);
        if (rc)
            return rc;
        text_cols_load(&s, c, mmask);
    }
    text_cols_store(&s, c);
    r->line = line;
    r->p = (const unsigned char *)p;
    if (p == (const char *)r->end && r->eof)
        r->done = 1;
    return GX_OK;
}
