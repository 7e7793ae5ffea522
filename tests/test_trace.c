/* test_trace.c - traces: the text parser (comments, hex forms, every
 * malformed-line error with its line number), the binary form (round trip,
 * truncated / corrupt records named by index), autodetection, the
 * generators' pattern properties, and the trace-driven model run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/profile.h"
#include "gpuxray/trace.h"
#include "testutil.h"

/* ---- helpers ---- */

static int parse_str(const char *text, uint32_t sm_limit, gx_trace *t, gx_msg *m)
{
    gx_msg_clear(m);
    return gx_trace_parse(text, strlen(text), "t.trace", sm_limit, t, m);
}

/* The text must be rejected with GX_EPARSE, a message containing `want`,
 * and nothing appended. */
static void expect_reject(const char *text, const char *want)
{
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    int rc = parse_str(text, 0, &t, &m);
    if (rc != GX_EPARSE || !strstr(m.text, want))
        fail_msg("input %s: rc %d, message '%s', wanted '%s'", text, rc, m.text, want);
    assert_int_equal(t.n, 0);
    gx_trace_free(&t);
}

static void gen(gx_gen_cfg *c, gx_trace *t)
{
    gx_msg m;
    gx_trace_init(t);
    int rc = gx_trace_generate(c, t, &m);
    if (rc)
        fail_msg("generate: %s", m.text);
}

/* ---- text ---- */

static void test_text_parse(void **state)
{
    (void)state;
    const char *text = "# a header comment\n"
                       "\n"
                       "0 R 0x1000 32\n"
                       "  3\tW\t2000  # trailing comment\n"
                       "7 A 0XdeadBEEF 128\r\n"
                       "1 r ffffffffffffffff 1\n"
                       "   \t  \n"
                       "2 w 0x0#no space before the comment\n"
                       "4294967295 a 00000000000000ab";
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(parse_str(text, 0, &t, &m), GX_OK);
    assert_int_equal(t.n, 6);
    const struct { uint64_t addr; uint32_t sm, size; int op; } want[] = {
        {0x1000, 0, 32, GX_TRACE_READ},
        {0x2000, 3, GX_TRACE_DEFAULT_SIZE, GX_TRACE_WRITE},
        {0xdeadbeef, 7, 128, GX_TRACE_ATOMIC},
        {UINT64_MAX, 1, 1, GX_TRACE_READ},
        {0, 2, GX_TRACE_DEFAULT_SIZE, GX_TRACE_WRITE},
        {0xab, UINT32_MAX, GX_TRACE_DEFAULT_SIZE, GX_TRACE_ATOMIC},
    };
    for (int i = 0; i < 6; i++) {
        assert_true(t.rec[i].addr == want[i].addr);
        assert_int_equal(t.rec[i].sm, want[i].sm);
        assert_int_equal(t.rec[i].size, want[i].size);
        assert_int_equal(t.rec[i].op, want[i].op);
    }
    /* an empty and an all-comment trace are valid and empty */
    gx_trace_free(&t);
    assert_int_equal(parse_str("", 0, &t, &m), GX_OK);
    assert_int_equal(parse_str("# nothing\n\n", 0, &t, &m), GX_OK);
    assert_int_equal(t.n, 0);
    gx_trace_free(&t);
}

static void test_text_errors(void **state)
{
    (void)state;
    /* bad SM */
    expect_reject("0 R 10\nx R 10\n", "t.trace:2: bad SM 'x'");
    expect_reject("\n\n-1 R 10\n", "t.trace:3: bad SM '-1'");
    expect_reject("4294967296 R 10\n", "t.trace:1: bad SM");
    expect_reject("12R 10\n", "t.trace:1: bad SM '12R'");
    /* bad op */
    expect_reject("0 R 10\n1 X 10\n", "t.trace:2: bad op 'X'");
    expect_reject("0 RW 10\n", "t.trace:1: bad op 'RW'");
    expect_reject("0\n", "t.trace:1: bad op: missing");
    /* bad address */
    expect_reject("0 R 10\n0 R 10\n0 R 0xg1\n", "t.trace:3: bad address '0xg1'");
    expect_reject("0 R 0x\n", "t.trace:1: bad address '0x'");
    expect_reject("0 R 10000000000000000\n", "t.trace:1: bad address"); /* 17 digits */
    expect_reject("0 R # no address\n", "t.trace:1: bad address: missing");
    /* bad size */
    expect_reject("0 R 10 0\n", "t.trace:1: bad size '0'");
    expect_reject("0 R 10 4\n0 R 10 129\n", "t.trace:2: bad size '129'");
    expect_reject("0 R 10 4k\n", "t.trace:1: bad size '4k'");
    expect_reject("0 R 10 -4\n", "t.trace:1: bad size '-4'");
    /* extra tokens */
    expect_reject("0 R 10 4 5\n", "t.trace:1: extra token '5'");
    expect_reject("# c\n0 R 10 4 junk # c\n", "t.trace:2: extra token 'junk'");
    /* NUL byte */
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(gx_trace_parse("0 R 1\n\0", 7, "t", 0, &t, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "t:2: bad SM: a NUL byte"));
    assert_int_equal(t.n, 0);
    gx_trace_free(&t);
}

static void test_text_sm_limit(void **state)
{
    (void)state;
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(parse_str("83 R 0\n", 84, &t, &m), GX_OK);
    assert_int_equal(parse_str("0 R 0\n84 R 0\n", 84, &t, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "t.trace:2: bad SM 84"));
    assert_int_equal(t.n, 1); /* only the first, successful parse */
    gx_trace_free(&t);
}

/* A failing parse leaves what the trace held before untouched. */
static void test_parse_appends_or_nothing(void **state)
{
    (void)state;
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(parse_str("0 R 1\n1 W 2\n", 0, &t, &m), GX_OK);
    assert_int_equal(parse_str("0 R 3\n0 Q 4\n", 0, &t, &m), GX_EPARSE);
    assert_int_equal(t.n, 2);
    assert_int_equal(parse_str("5 A 5 8\n", 0, &t, &m), GX_OK);
    assert_int_equal(t.n, 3);
    assert_true(t.rec[2].addr == 5 && t.rec[2].sm == 5 && t.rec[2].size == 8);
    gx_trace_free(&t);
}

/* ---- binary ---- */

static void make_trace(gx_trace *t, uint64_t n)
{
    gx_trace_init(t);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(gx_trace_push(t, gx_mix64(i), (uint32_t)(i % 84), (gx_trace_op)(i % 3),
                                       (uint32_t)(1 + i % GX_TRACE_MAX_SIZE), NULL),
                         GX_OK);
}

static void assert_same(const gx_trace *a, const gx_trace *b)
{
    assert_int_equal(a->n, b->n);
    for (uint64_t i = 0; i < a->n; i++) {
        assert_true(a->rec[i].addr == b->rec[i].addr);
        assert_int_equal(a->rec[i].sm, b->rec[i].sm);
        assert_int_equal(a->rec[i].size, b->rec[i].size);
        assert_int_equal(a->rec[i].op, b->rec[i].op);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    gx_trace t, u, v;
    make_trace(&t, 1000);
    gx_msg m;
    const char *bin = gx_test_tmp("rt.bin"), *txt = gx_test_tmp("rt.txt");
    assert_int_equal(gx_trace_save(&t, bin, GX_TRACE_BINARY1, &m), GX_OK);
    assert_int_equal(gx_trace_save(&t, txt, GX_TRACE_TEXT, &m), GX_OK);
    gx_trace_init(&u);
    gx_trace_init(&v);
    assert_int_equal(gx_trace_read(bin, 0, &u, &m), GX_OK);
    assert_int_equal(gx_trace_read(txt, 0, &v, &m), GX_OK);
    assert_same(&t, &u);
    assert_same(&t, &v);
    /* a trace read from a file grows like any other */
    assert_int_equal(gx_trace_push(&u, 0x42, 1, GX_TRACE_WRITE, 8, &m), GX_OK);
    assert_int_equal(u.n, 1001);
    assert_true(u.rec[1000].addr == 0x42 && u.rec[999].addr == t.rec[999].addr);
    u.n = 1000;
    /* a second read appends */
    assert_int_equal(gx_trace_read(bin, 0, &u, &m), GX_OK);
    assert_int_equal(u.n, 2000);
    assert_true(u.rec[1999].addr == t.rec[999].addr);
    u.n = 1000;
    /* binary layout: 16-byte header + 16 bytes a record, little-endian */
    size_t len;
    unsigned char *b = (unsigned char *)gx_test_slurp(bin, &len);
    assert_int_equal(len, GX_TRACE_HEADER_BYTES + 1000 * GX_TRACE_RECORD_BYTES);
    assert_memory_equal(b, "GXTRACE1", 8);
    assert_int_equal(b[8] | b[9] << 8, 1000);
    const unsigned char *r1 = b + 16 + 16; /* record 1: sm 1, W, size 2 */
    assert_int_equal(r1[8], 1);
    assert_int_equal(r1[12], 2);
    assert_int_equal(r1[14], GX_TRACE_WRITE);
    assert_true(r1[0] == (gx_mix64(1) & 0xff));
    free(b);
    unlink(bin);
    unlink(txt);
    gx_trace_free(&t);
    gx_trace_free(&u);
    gx_trace_free(&v);
}

static void expect_bin_reject(const unsigned char *b, size_t len, const char *want)
{
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_trace_parse(b, len, "b.bin", 0, &t, &m);
    if (rc != GX_EPARSE || !strstr(m.text, want))
        fail_msg("rc %d, message '%s', wanted '%s'", rc, m.text, want);
    assert_int_equal(t.n, 0);
    gx_trace_free(&t);
}

static void test_binary_errors(void **state)
{
    (void)state;
    gx_trace t;
    make_trace(&t, 10);
    const char *path = gx_test_tmp("err.bin");
    assert_int_equal(gx_trace_save(&t, path, GX_TRACE_BINARY1, NULL), GX_OK);
    size_t len;
    unsigned char *b = (unsigned char *)gx_test_slurp(path, &len);
    unlink(path);
    assert_int_equal(len, 16 + 160);
    /* truncated: the last record cut in half, then a whole record missing */
    expect_bin_reject(b, len - 8, "b.bin: record 9: truncated");
    expect_bin_reject(b, len - 16, "b.bin: record 9: truncated");
    expect_bin_reject(b, 12, "truncated header");
    /* trailing bytes */
    unsigned char *big = calloc(1, len + 16);
    memcpy(big, b, len);
    expect_bin_reject(big, len + 3, "record 10: trailing bytes");
    free(big);
    /* corrupt records: op, size, reserved */
    b[16 + 5 * 16 + 14] = 7;
    expect_bin_reject(b, len, "b.bin: record 5: bad op 7");
    b[16 + 5 * 16 + 14] = 0;
    b[16 + 3 * 16 + 12] = 0; /* size 0 */
    b[16 + 3 * 16 + 13] = 0;
    expect_bin_reject(b, len, "b.bin: record 3: bad size 0");
    b[16 + 3 * 16 + 13] = 1; /* size 256 + ... */
    expect_bin_reject(b, len, "b.bin: record 3: bad size");
    b[16 + 3 * 16 + 12] = 4;
    b[16 + 3 * 16 + 13] = 0;
    b[16 + 8 * 16 + 15] = 1;
    expect_bin_reject(b, len, "b.bin: record 8: reserved byte");
    b[16 + 8 * 16 + 15] = 0;
    /* the same through a file (read in place when the host allows) */
    b[16 + 6 * 16 + 14] = 3;
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, len, f);
    fclose(f);
    gx_trace r;
    gx_trace_init(&r);
    gx_msg fm;
    assert_int_equal(gx_trace_read(path, 0, &r, &fm), GX_EPARSE);
    assert_non_null(strstr(fm.text, "record 6: bad op 3"));
    assert_int_equal(r.n, 0);
    assert_null(r.rec);
    b[16 + 6 * 16 + 14] = 0;
    f = fopen(path, "wb");
    fwrite(b, 1, len - 5, f);
    fclose(f);
    assert_int_equal(gx_trace_read(path, 0, &r, &fm), GX_EPARSE);
    assert_non_null(strstr(fm.text, "record 9: truncated"));
    unlink(path);
    /* restored: parses; with an SM limit, record 9 (sm 9) is out of range */
    gx_trace u;
    gx_trace_init(&u);
    gx_msg m;
    assert_int_equal(gx_trace_parse(b, len, "b.bin", 0, &u, &m), GX_OK);
    assert_int_equal(u.n, 10);
    gx_trace_free(&u);
    assert_int_equal(gx_trace_parse(b, len, "b.bin", 9, &u, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "record 9: bad SM 9"));
    assert_int_equal(u.n, 0);
    gx_trace_free(&u);
    free(b);
    gx_trace_free(&t);
}

static void test_autodetect(void **state)
{
    (void)state;
    gx_trace t;
    make_trace(&t, 5);
    const char *bin = gx_test_tmp("ad.bin");
    assert_int_equal(gx_trace_save(&t, bin, GX_TRACE_BINARY, NULL), GX_OK);
    size_t len;
    char *b = gx_test_slurp(bin, &len);
    unlink(bin);
    assert_true(gx_trace_is_binary(b, len));
    assert_false(gx_trace_is_binary("0 R 0x10\n", 9));
    assert_false(gx_trace_is_binary("GXTRACE", 7));
    gx_trace u;
    gx_trace_init(&u);
    assert_int_equal(gx_trace_parse(b, len, "x", 0, &u, NULL), GX_OK);
    assert_same(&t, &u);
    /* text that merely starts like the magic is text (and malformed) */
    gx_msg m;
    assert_int_equal(gx_trace_parse("GXTRACE3 x\n", 11, "x", 0, &u, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "x:1: bad SM"));
    free(b);
    gx_trace_free(&t);
    gx_trace_free(&u);
}

static void test_read_errors_and_atomic_save(void **state)
{
    (void)state;
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(gx_trace_read(gx_test_tmp("does-not-exist"), 0, &t, &m), GX_EIO);
    assert_non_null(strstr(m.text, "cannot open"));
    make_trace(&t, 3);
    /* a directory that does not exist: fails, leaves nothing */
    assert_int_equal(gx_trace_save(&t, gx_test_tmp("nodir/x.bin"), GX_TRACE_BINARY, &m), GX_EIO);
    /* overwriting an existing file replaces it whole and leaves no temporary */
    const char *p = gx_test_tmp("atomic.bin");
    FILE *f = fopen(p, "w");
    fputs("old contents", f);
    fclose(f);
    assert_int_equal(gx_trace_save(&t, p, GX_TRACE_BINARY1, &m), GX_OK);
    size_t len;
    char *b = gx_test_slurp(p, &len);
    assert_int_equal(len, 16 + 3 * 16);
    free(b);
    char tmpl[4200];
    snprintf(tmpl, sizeof tmpl, "ls %s.tmp.* >/dev/null 2>&1", p);
    assert_int_not_equal(system(tmpl), 0);
    unlink(p);
    gx_trace_free(&t);
}

/* ---- generators ---- */

static void test_gen_stream(void **state)
{
    (void)state;
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_STREAM;
    c.base = 0x10000;
    c.footprint_bytes = 4096;
    c.size_bytes = 64;
    gx_trace t;
    gen(&c, &t);
    assert_int_equal(t.n, 64); /* default count: one pass */
    for (uint64_t i = 0; i < t.n; i++) {
        assert_true(t.rec[i].addr == 0x10000 + i * 64);
        assert_int_equal(t.rec[i].size, 64);
        assert_int_equal(t.rec[i].op, GX_TRACE_READ);
        assert_int_equal(t.rec[i].sm, 0);
    }
    gx_trace_free(&t);
    c.count = 200; /* wraps at the footprint */
    gen(&c, &t);
    assert_int_equal(t.n, 200);
    assert_true(t.rec[64].addr == 0x10000 && t.rec[199].addr == 0x10000 + (199 % 64) * 64);
    gx_trace_free(&t);
}

static void test_gen_stride(void **state)
{
    (void)state;
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_STRIDE;
    c.footprint_bytes = 10000;
    c.stride_bytes = 384;
    c.count = 100;
    gx_trace t;
    gen(&c, &t);
    uint64_t pass = 10000 / 384;
    for (uint64_t i = 0; i < t.n; i++) {
        assert_true(t.rec[i].addr == (i % pass) * 384);
        assert_true(t.rec[i].addr + t.rec[i].size <= 10000);
    }
    for (uint64_t i = 1; i < pass; i++)
        assert_true(t.rec[i].addr - t.rec[i - 1].addr == 384);
    gx_trace_free(&t);
}

static void test_gen_random(void **state)
{
    (void)state;
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_RANDOM;
    c.base = 1ULL << 40;
    c.footprint_bytes = 64 * 1024;
    c.size_bytes = 32;
    c.count = 20000;
    gx_trace t;
    gen(&c, &t);
    uint64_t slots = c.footprint_bytes / 32;
    unsigned char *seen = calloc(slots, 1);
    for (uint64_t i = 0; i < t.n; i++) {
        uint64_t off = t.rec[i].addr - c.base;
        assert_true(t.rec[i].addr >= c.base && off + 32 <= c.footprint_bytes);
        assert_int_equal(off % 32, 0);
        seen[off / 32] = 1;
    }
    /* 20000 draws over 2048 slots: every slot is hit (P(miss) ~ 2048 e^-9.8) */
    for (uint64_t s = 0; s < slots; s++)
        assert_int_equal(seen[s], 1);
    free(seen);
    /* same seed, same trace; another seed, another trace */
    gx_trace u, v;
    gen(&c, &u);
    assert_same(&t, &u);
    c.seed = 2;
    gen(&c, &v);
    uint64_t same = 0;
    for (uint64_t i = 0; i < t.n; i++)
        same += t.rec[i].addr == v.rec[i].addr;
    assert_true(same < t.n / 100);
    /* the write ratio does not change the addresses, and is respected */
    c.seed = 1;
    c.write_ratio = 0.25;
    c.atomic_ratio = 0.1;
    gx_trace w;
    gen(&c, &w);
    uint64_t nw = 0, na = 0;
    for (uint64_t i = 0; i < w.n; i++) {
        assert_true(w.rec[i].addr == t.rec[i].addr);
        nw += w.rec[i].op == GX_TRACE_WRITE;
        na += w.rec[i].op == GX_TRACE_ATOMIC;
    }
    assert_true(nw > 4600 && nw < 5400);
    assert_true(na > 1700 && na < 2300);
    gx_trace_free(&t);
    gx_trace_free(&u);
    gx_trace_free(&v);
    gx_trace_free(&w);
}

static void test_gen_tile(void **state)
{
    (void)state;
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_TILE;
    c.rows = 3;
    c.cols = 5;
    c.elem_bytes = 8;
    c.tile = 2;
    c.base = 0x1000;
    gx_trace t;
    gen(&c, &t);
    assert_int_equal(t.n, 15);
    /* 3 x 5 matrix, 2 x 2 tiles: blocks (0,0) (0,1) (0,2) (1,0) (1,1) (1,2) */
    static const int order[15][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2},
                                     {1, 3}, {0, 4}, {1, 4}, {2, 0}, {2, 1}, {2, 2}, {2, 3},
                                     {2, 4}};
    for (int i = 0; i < 15; i++) {
        assert_true(t.rec[i].addr ==
                    0x1000 + (uint64_t)(order[i][0] * 5 + order[i][1]) * 8);
        assert_int_equal(t.rec[i].size, 8);
    }
    gx_trace_free(&t);
    /* a bigger one visits every element exactly once per pass, then wraps */
    c.rows = 64;
    c.cols = 96;
    c.tile = 16;
    c.count = 64 * 96 + 5;
    gen(&c, &t);
    unsigned char *seen = calloc(64 * 96, 1);
    for (uint64_t i = 0; i < 64 * 96; i++) {
        uint64_t e = (t.rec[i].addr - 0x1000) / 8;
        assert_true(e < 64 * 96);
        assert_int_equal(seen[e], 0);
        seen[e] = 1;
        if (i < 16) /* first tile row: 16 consecutive elements of row 0 */
            assert_true(e == i);
        if (i == 16) /* then row 1 of the same tile */
            assert_true(e == 96);
    }
    assert_true(t.rec[64 * 96].addr == 0x1000);
    free(seen);
    gx_trace_free(&t);
}

static void test_gen_sm_assign(void **state)
{
    (void)state;
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_RANDOM;
    c.footprint_bytes = 1 << 20;
    c.count = 1000;
    c.sms = 7;
    gx_trace t;
    gen(&c, &t);
    for (uint64_t i = 0; i < t.n; i++)
        assert_int_equal(t.rec[i].sm, i % 7);
    gx_trace_free(&t);
    c.sm_assign = GX_SM_BLOCK;
    gen(&c, &t);
    for (uint64_t i = 1; i < t.n; i++)
        assert_true(t.rec[i].sm == t.rec[i - 1].sm || t.rec[i].sm == t.rec[i - 1].sm + 1);
    assert_int_equal(t.rec[0].sm, 0);
    assert_int_equal(t.rec[999].sm, 6);
    int per[7] = {0};
    for (uint64_t i = 0; i < t.n; i++)
        per[t.rec[i].sm]++;
    for (int s = 0; s < 7; s++)
        assert_true(per[s] == 142 || per[s] == 143);
    gx_trace_free(&t);
    c.sm_assign = GX_SM_RANDOM;
    gen(&c, &t);
    memset(per, 0, sizeof per);
    int changes = 0;
    for (uint64_t i = 0; i < t.n; i++) {
        assert_true(t.rec[i].sm < 7);
        per[t.rec[i].sm]++;
        changes += i && t.rec[i].sm != t.rec[i - 1].sm;
    }
    for (int s = 0; s < 7; s++)
        assert_true(per[s] > 90 && per[s] < 200);
    assert_true(changes > 700); /* not blocks, not round robin */
    int rr = 0;
    for (uint64_t i = 0; i < t.n; i++)
        rr += t.rec[i].sm == i % 7;
    assert_true(rr < 250);
    gx_trace_free(&t);
}

static void test_gen_check_and_save(void **state)
{
    (void)state;
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    gx_msg m;
    c.size_bytes = 0;
    assert_int_equal(gx_gen_check(&c, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "--size"));
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_STRIDE;
    c.stride_bytes = 0;
    assert_int_equal(gx_gen_check(&c, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "--stride"));
    gx_gen_defaults(&c);
    c.write_ratio = 0.7;
    c.atomic_ratio = 0.5;
    assert_int_equal(gx_gen_check(&c, &m), GX_EINVAL);
    gx_gen_defaults(&c);
    c.sms = 0;
    assert_int_equal(gx_gen_check(&c, &m), GX_EINVAL);
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_TILE;
    c.tile = 0;
    assert_int_equal(gx_gen_check(&c, &m), GX_EINVAL);
    gx_gen_defaults(&c);
    c.footprint_bytes = 16; /* < size */
    assert_int_equal(gx_gen_check(&c, &m), GX_EINVAL);
    assert_true(gx_gen_pattern_parse("zigzag", &c.pattern) != GX_OK);
    assert_true(gx_sm_assign_parse("block", &c.sm_assign) == GX_OK && c.sm_assign == GX_SM_BLOCK);
    /* default counts */
    gx_gen_defaults(&c);
    assert_int_equal(gx_gen_count(&c), (64 << 20) / 32);
    c.pattern = GX_GEN_RANDOM;
    assert_int_equal(gx_gen_count(&c), 1000000);
    c.pattern = GX_GEN_TILE;
    assert_int_equal(gx_gen_count(&c), 1024 * 1024);
    /* the streaming writer writes what the in-memory generator produces */
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_RANDOM;
    c.count = 3000;
    c.sms = 5;
    c.sm_assign = GX_SM_RANDOM;
    c.write_ratio = 0.5;
    gx_trace t, u, v;
    gen(&c, &t);
    const char *pb = gx_test_tmp("gs.bin"), *pt = gx_test_tmp("gs.txt");
    assert_int_equal(gx_gen_save(&c, pb, GX_TRACE_BINARY, &m), GX_OK);
    assert_int_equal(gx_gen_save(&c, pt, GX_TRACE_TEXT, &m), GX_OK);
    gx_trace_init(&u);
    gx_trace_init(&v);
    assert_int_equal(gx_trace_read(pb, 0, &u, &m), GX_OK);
    assert_int_equal(gx_trace_read(pt, 0, &v, &m), GX_OK);
    assert_same(&t, &u);
    assert_same(&t, &v);
    unlink(pb);
    unlink(pt);
    gx_trace_free(&t);
    gx_trace_free(&u);
    gx_trace_free(&v);
}

/* ---- the model run ---- */

static gx_profile *seed_profile(void)
{
    gx_profile *p = NULL;
    gx_msg m;
    if (gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m) != GX_OK)
        fail_msg("seed profile: %s", m.text);
    return p;
}

static void test_tsim_stream_twice(void **state)
{
    (void)state;
    gx_profile *p = seed_profile();
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    cfg.skew = 0;
    assert_int_equal(cfg.frames_seed, 7);
    gx_tsim *s = NULL;
    gx_msg m;
    assert_int_equal(gx_tsim_new(p, &cfg, &s, &m), GX_OK);
    /* 1 MiB (fits in 6 MiB) read by 128-byte accesses, twice: the first pass
     * misses every sector, the second hits every one */
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.footprint_bytes = 1 << 20;
    c.size_bytes = 128;
    gx_trace t;
    gen(&c, &t);
    assert_int_equal(t.n, 8192);
    gx_tsim_run(s, t.rec, t.n);
    gx_tsim_stats st;
    gx_tsim_get_stats(s, &st);
    assert_int_equal(st.accesses, 8192);
    assert_int_equal(st.l2_accesses, 4 * 8192);
    assert_int_equal(st.level_accesses[0], 4 * 8192);
    assert_int_equal(st.level_hits[0], 0);
    assert_int_equal(st.level_line_misses[0], 8192);
    assert_int_equal(st.level_sector_misses[0], 3 * 8192);
    assert_int_equal(st.dram_accesses, 4 * 8192);
    gx_tsim_run(s, t.rec, t.n);
    gx_tsim_get_stats(s, &st);
    assert_int_equal(st.level_hits[0], 4 * 8192);
    assert_int_equal(st.dram_accesses, 4 * 8192);
    /* no skew, no noise: latencies are exactly the DRAM and hit latencies */
    assert_true(st.min_cycles == 210 && st.max_cycles == 430);
    assert_true(fabs(st.total_cycles - 8192.0 * (430 + 210)) < 1e-6);
    assert_true(gx_tsim_latency_quantile(&st, 0.5) == 210);
    assert_true(gx_tsim_latency_quantile(&st, 0.51) == 430);
    assert_true(st.lat_hist[210] == 8192 && st.lat_hist[430] == 8192);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < st.slices; i++)
        sum += st.slice_accesses[i];
    assert_int_equal(sum, st.l2_accesses);
    assert_int_equal(st.bytes, 2 * (1 << 20));
    gx_trace_free(&t);
    gx_tsim_free(s);
    gx_profile_free(p);
}

/* An access crossing a sector (and a page) boundary makes two L2 accesses. */
static void test_tsim_split_accesses(void **state)
{
    (void)state;
    gx_profile *p = seed_profile();
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    assert_int_equal(gx_tsim_new(p, &cfg, &s, NULL), GX_OK);
    gx_trace t;
    gx_trace_init(&t);
    assert_int_equal(parse_str("0 R 0x1c 8\n"          /* sectors 0 and 1 */
                               "1 W 0x1fffff 2\n"      /* across the 2 MiB page */
                               "2 A 0x400000 4\n"      /* one sector */
                               "3 R 0x400000 128\n",   /* four */
                               84, &t, NULL),
                     GX_OK);
    gx_tsim_run(s, t.rec, t.n);
    gx_tsim_stats st;
    gx_tsim_get_stats(s, &st);
    assert_int_equal(st.accesses, 4);
    assert_int_equal(st.l2_accesses, 2 + 2 + 1 + 4);
    assert_int_equal(st.reads, 2);
    assert_int_equal(st.writes, 1);
    assert_int_equal(st.atomics, 1);
    assert_int_equal(st.bytes, 8 + 2 + 4 + 128);
    gx_trace_free(&t);
    gx_tsim_free(s);
    gx_profile_free(p);
}

/* Same inputs, same stats (placement, skew and policy are seeded). */
static void test_tsim_deterministic(void **state)
{
    (void)state;
    gx_profile *p = seed_profile();
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_RANDOM;
    c.footprint_bytes = 16 << 20;
    c.count = gx_test_sanitizer() ? 20000 : 200000;
    c.sms = 84;
    gx_trace t;
    gen(&c, &t);
    char *out[2];
    for (int k = 0; k < 2; k++) {
        gx_tsim_cfg cfg;
        gx_tsim_defaults(p, &cfg);
        cfg.noise = 1;
        gx_tsim *s = NULL;
        assert_int_equal(gx_tsim_new(p, &cfg, &s, NULL), GX_OK);
        gx_tsim_run(s, t.rec, t.n);
        size_t len;
        FILE *f = open_memstream(&out[k], &len);
        assert_int_equal(gx_tsim_write_json(s, f), GX_OK);
        fclose(f);
        gx_tsim_free(s);
    }
    assert_string_equal(out[0], out[1]);
    assert_non_null(strstr(out[0], "\"noise\": true"));
    assert_non_null(strstr(out[0], "\"accesses\": 200000") || gx_test_sanitizer());
    free(out[0]);
    free(out[1]);
    gx_trace_free(&t);
    gx_profile_free(p);
}

/* Prefetching (a host-cache hint) never changes a result, on either
 * topology, with accesses across sectors and pages. */
static void test_tsim_prefetch_neutral(void **state)
{
    (void)state;
    const char *profiles[] = {"profiles/seed-ampere-6mb.json", "profiles/hopper-like.json"};
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = GX_GEN_RANDOM;
    c.base = 0x30; /* unaligned: 128-byte accesses straddle sectors and pages */
    c.size_bytes = 128;
    c.footprint_bytes = 256ULL << 20;
    c.count = gx_test_sanitizer() ? 20000 : 200000;
    c.sms = 84;
    c.sm_assign = GX_SM_RANDOM;
    gx_trace t;
    gen(&c, &t);
    for (int k = 0; k < 2; k++) {
        gx_profile *p = NULL;
        gx_msg m;
        if (gx_profile_load(gx_test_path(profiles[k]), &p, &m) != GX_OK) {
            if (k == 1)
                break; /* hopper-like not shipped (yet) */
            fail_msg("%s", m.text);
        }
        char *out[2];
        for (int pf = 0; pf < 2; pf++) {
            gx_tsim_cfg cfg;
            gx_tsim_defaults(p, &cfg);
            cfg.prefetch = pf;
            cfg.noise = 1;
            gx_tsim *s = NULL;
            assert_int_equal(gx_tsim_new(p, &cfg, &s, &m), GX_OK);
            gx_tsim_run(s, t.rec, t.n / 2);
            gx_tsim_run(s, t.rec + t.n / 2, t.n - t.n / 2); /* runs accumulate */
            size_t len;
            FILE *f = open_memstream(&out[pf], &len);
            assert_int_equal(gx_tsim_write_json(s, f), GX_OK);
            fclose(f);
            gx_tsim_free(s);
        }
        assert_string_equal(out[0], out[1]);
        assert_non_null(strstr(out[0], "\"l2_accesses\": "));
        free(out[0]);
        free(out[1]);
        gx_profile_free(p);
    }
    gx_trace_free(&t);
}

static void test_tsim_bad_profile(void **state)
{
    (void)state;
    gx_profile *p = seed_profile();
    p->memory.page_bytes = 3 << 20;
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    gx_msg m;
    assert_int_equal(gx_tsim_new(p, &cfg, &s, &m), GX_ECONFIG);
    assert_null(s);
    assert_non_null(strstr(m.text, "memory.page_bytes"));
    gx_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_parse),
        cmocka_unit_test(test_text_errors),
        cmocka_unit_test(test_text_sm_limit),
        cmocka_unit_test(test_parse_appends_or_nothing),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_binary_errors),
        cmocka_unit_test(test_autodetect),
        cmocka_unit_test(test_read_errors_and_atomic_save),
        cmocka_unit_test(test_gen_stream),
        cmocka_unit_test(test_gen_stride),
        cmocka_unit_test(test_gen_random),
        cmocka_unit_test(test_gen_tile),
        cmocka_unit_test(test_gen_sm_assign),
        cmocka_unit_test(test_gen_check_and_save),
        cmocka_unit_test(test_tsim_stream_twice),
        cmocka_unit_test(test_tsim_split_accesses),
        cmocka_unit_test(test_tsim_deterministic),
        cmocka_unit_test(test_tsim_prefetch_neutral),
        cmocka_unit_test(test_tsim_bad_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
