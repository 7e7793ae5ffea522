/* test_trace_formats.c - the extended trace record and its formats: the
 * text syntax of the new ops and KEY=VALUE fields (and each rule's error),
 * binary version 2 (round trip of every field, every truncation and
 * corruption named by record), and the streaming reader (batches of any
 * size, inputs larger than its buffer, records across buffer edges). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/rng.h"
#include "gpuxray/trace.h"
#include "testutil.h"

static int parse_str(const char *text, gx_trace *t, gx_msg *m)
{
    gx_msg_clear(m);
    return gx_trace_parse(text, strlen(text), "t.trace", 0, t, m);
}

static void expect_reject(const char *text, const char *want)
{
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    int rc = parse_str(text, &t, &m);
    if (rc != GX_EPARSE || !strstr(m.text, want))
        fail_msg("input %s: rc %d, message '%s', wanted '%s'", text, rc, m.text, want);
    assert_int_equal(t.n, 0);
    gx_trace_free(&t);
}

static void assert_rec_equal(const gx_trace_rec *a, const gx_trace_rec *b, uint64_t i)
{
    if (memcmp(a, b, sizeof *a))
        fail_msg("record %llu differs: addr %llx/%llx op %u/%u sm %u/%u size %u/%u cycle "
                 "%llu/%llu warp %u/%u lane %u/%u arg %llu/%llu",
                 (unsigned long long)i, (unsigned long long)a->addr,
                 (unsigned long long)b->addr, a->op, b->op, a->sm, b->sm, a->size, b->size,
                 (unsigned long long)a->cycle, (unsigned long long)b->cycle, a->warp, b->warp,
                 a->lane, b->lane, (unsigned long long)a->arg, (unsigned long long)b->arg);
}

static void test_text_new_ops(void **state)
{
    (void)state;
    const char *text = "3 R 0x7f001000 16 cycle=1200 warp=7 lane=4\n"
                       "3 sr 0x40 8 lane=31\n"
                       "1 SW 0x0 warp=0xffffffff\n"
                       "0 MAP 0x7f0000000000 bytes=0x40000000 page=0x200000 # 1 GiB of 2 MiB\n"
                       "0 inv 0x7f0000000000 bytes=4096 cycle=99\n"
                       "0 INV 0\n"
                       "2 A 0x10 lane=1 cycle=0x10\n";
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(parse_str(text, &t, &m), GX_OK);
    assert_int_equal(t.n, 7);
    const gx_trace_rec *r = t.rec;
    assert_true(r[0].addr == 0x7f001000 && r[0].size == 16 && r[0].cycle == 1200 &&
                r[0].warp == 7 && r[0].lane == 4 && r[0].op == GX_TRACE_READ && r[0].sm == 3);
    assert_true(r[1].op == GX_TRACE_SHARED_READ && r[1].addr == 0x40 && r[1].size == 8 &&
                r[1].lane == 31);
    assert_true(r[2].op == GX_TRACE_SHARED_WRITE && r[2].size == GX_TRACE_DEFAULT_SIZE &&
                r[2].warp == UINT32_MAX);
    assert_true(r[3].op == GX_TRACE_MAP && r[3].arg == 0x40000000 && r[3].size == 21);
    assert_true(r[4].op == GX_TRACE_INVALIDATE && r[4].arg == 4096 && r[4].size == 0 &&
                r[4].cycle == 99);
    assert_true(r[5].op == GX_TRACE_INVALIDATE && r[5].arg == 0 && r[5].addr == 0);
    assert_true(r[6].op == GX_TRACE_ATOMIC && r[6].lane == 1 && r[6].cycle == 16);
    /* written as text and read back: the same records */
    const char *path = gx_test_tmp("ops.txt");
    assert_int_equal(gx_trace_save(&t, path, GX_TRACE_TEXT, &m), GX_OK);
    gx_trace u;
    gx_trace_init(&u);
    assert_int_equal(gx_trace_read(path, 0, &u, &m), GX_OK);
    assert_int_equal(u.n, t.n);
    for (uint64_t i = 0; i < t.n; i++)
        assert_rec_equal(&t.rec[i], &u.rec[i], i);
    /* version 1 cannot hold them, and says so */
    assert_int_equal(gx_trace_save(&t, path, GX_TRACE_BINARY1, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "record 0: binary version 1 holds only"));
    unlink(path);
    gx_trace_free(&t);
    gx_trace_free(&u);
}

static void test_text_new_errors(void **state)
{
    (void)state;
    /* wrap past 2^64 */
    expect_reject("0 R ffffffffffffffff 2\n", "t.trace:1: address 0xffffffffffffffff + size 2 wraps");
    expect_reject("0 R fffffffffffffffe\n", "t.trace:1: address 0xfffffffffffffffe + size 4 wraps");
    expect_reject("0 R 0\n0 MAP ffffffffffff0000 bytes=0x10001 page=4096\n",
                  "t.trace:2: MAP: address 0xffffffffffff0000 + bytes 65537 wraps");
    /* keys */
    expect_reject("0 R 10 lane=32\n", "t.trace:1: bad lane 'lane=32'");
    expect_reject("0 R 10 warp=4294967296\n", "t.trace:1: bad warp");
    expect_reject("0 R 10 cycle=18446744073709551616\n", "t.trace:1: bad cycle");
    expect_reject("0 R 10 cycle=-1\n", "t.trace:1: bad cycle");
    expect_reject("0 R 10 cycle=1 cycle=2\n", "t.trace:1: cycle= given twice");
    expect_reject("0 R 10 color=1\n", "t.trace:1: extra token 'color=1'");
    expect_reject("0 R 10 4 cycle= 5\n", "t.trace:1: bad cycle");
    expect_reject("0 R 10 bytes=4\n", "t.trace:1: bytes= and page= belong to MAP and INV");
    expect_reject("0 R 10 cycle=5 4\n", "t.trace:1: extra token '4'");
    /* MAP / INV */
    expect_reject("0 MAP 0x1000 bytes=4096\n", "t.trace:1: MAP needs bytes=N and page=N");
    expect_reject("0 MAP 0x1000\n", "t.trace:1: MAP needs bytes=N and page=N");
    expect_reject("0 MAP 0x1000 bytes=4096 page=3000\n", "t.trace:1: bad page 3000");
    expect_reject("0 MAP 0x1000 bytes=4096 page=2048\n", "t.trace:1: bad page 2048");
    expect_reject("0 MAP 0x1000 bytes=0 page=4096\n", "t.trace:1: MAP: bytes is 0");
    expect_reject("0 MAP 0x1000 8 bytes=1 page=4096\n", "t.trace:1: MAP takes no SIZE");
    expect_reject("0 INV 0x1000 8\n", "t.trace:1: INV takes no SIZE");
    expect_reject("0 INV 0x1000 page=4096\n", "t.trace:1: INV takes no page=");
    expect_reject("0 S 10\n", "t.trace:1: bad op 'S'");
    expect_reject("0 SRW 10\n", "t.trace:1: bad op 'SRW'");
    expect_reject("0 MAPS 10\n", "t.trace:1: bad op 'MAPS'");
}

/* Records exercising every field of version 2: deltas of every length, all
 * ops, changing sm / size / cycle / warp / lane. */
static void mixed_trace(gx_trace *t, uint64_t n, uint64_t seed)
{
    gx_trace_init(t);
    uint64_t addr = 0, cycle = 0;
    uint32_t warp = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = gx_mix64(i ^ seed);
        gx_trace_rec r;
        memset(&r, 0, sizeof r);
        int kind = (int)(h % 16);
        addr = kind < 6 ? addr + 32 : kind < 12 ? (h >> 8) & 0xffffff : gx_mix64(h);
        r.op = (uint8_t)(h >> 4 & 7) % GX_TRACE_OPS;
        r.sm = (h >> 12 & 3) ? 0 : (uint32_t)(h >> 20);
        r.size = (uint16_t)((h >> 7 & 1) ? 32 : 1 + (h >> 24) % GX_TRACE_MAX_SIZE);
        if (h >> 40 & 1)
            cycle += (h >> 44) & 0xff;
        r.cycle = (h >> 41 & 7) == 0 ? 0 : cycle;
        if (!(h >> 52 & 3))
            warp = (uint32_t)(h >> 32);
        r.warp = warp;
        r.lane = (uint8_t)((h >> 56) % GX_TRACE_LANES);
        if (r.op == GX_TRACE_MAP) {
            r.size = (uint16_t)(12 + (h >> 30) % 28);
            r.arg = 1 + (h >> 33 & 0xfffff);
            addr &= 0xffffffffffffULL;
        } else if (r.op == GX_TRACE_INVALIDATE) {
            r.size = 0;
            r.arg = (h >> 33 & 1) ? 0 : 4096;
            addr &= 0xffffffffffffULL;
        } else if (addr > UINT64_MAX - r.size) {
            addr -= 4096;
        }
        r.addr = addr;
        assert_int_equal(gx_trace_append(t, &r, NULL), GX_OK);
    }
}

static void test_v2_round_trip(void **state)
{
    (void)state;
    gx_trace t, u;
    uint64_t n = gx_test_sanitizer() ? 20000 : 200000;
    mixed_trace(&t, n, 5);
    gx_msg m;
    const char *path = gx_test_tmp("mixed.bin");
    assert_int_equal(gx_trace_save(&t, path, GX_TRACE_BINARY, &m), GX_OK);
    gx_trace_init(&u);
    assert_int_equal(gx_trace_read(path, 0, &u, &m), GX_OK);
    assert_int_equal(u.n, n);
    for (uint64_t i = 0; i < n; i++)
        assert_rec_equal(&t.rec[i], &u.rec[i], i);
    /* the same in odd batch sizes, straight from the streaming reader */
    for (size_t batch = 1; batch <= 7; batch += 3) {
        gx_trace_reader *rd = NULL;
        assert_int_equal(gx_trace_reader_open(path, 0, &rd, &m), GX_OK);
        assert_int_equal(gx_trace_reader_format(rd), GX_TRACE_BINARY);
        gx_trace_rec buf[7];
        uint64_t i = 0;
        size_t k;
        while (gx_trace_reader_next(rd, buf, batch, &k, &m) == GX_OK && k)
            for (size_t j = 0; j < k; j++, i++)
                assert_rec_equal(&t.rec[i], &buf[j], i);
        assert_int_equal(i, n);
        assert_int_equal(gx_trace_reader_records(rd), n);
        gx_trace_reader_close(rd);
    }
    unlink(path);
    gx_trace_free(&t);
    gx_trace_free(&u);
}

static void expect_bin_reject(const unsigned char *b, size_t len, const char *want)
{
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_trace_parse(b, len, "b.bin", 0, &t, &m);
    if (rc != GX_EPARSE || !strstr(m.text, want))
        fail_msg("len %zu: rc %d, message '%s', wanted '%s'", len, rc, m.text, want);
    assert_int_equal(t.n, 0);
    gx_trace_free(&t);
}

static void test_v2_errors(void **state)
{
    (void)state;
    gx_trace t;
    mixed_trace(&t, 300, 9);
    const char *path = gx_test_tmp("v2err.bin");
    assert_int_equal(gx_trace_save(&t, path, GX_TRACE_BINARY, NULL), GX_OK);
    size_t len;
    unsigned char *b = (unsigned char *)gx_test_slurp(path, &len);
    unlink(path);
    assert_memory_equal(b, "GXTRACE2", 8);
    /* every truncation is an error naming a record, never a crash */
    for (size_t cut = GX_TRACE_HEADER_BYTES; cut < len; cut++)
        expect_bin_reject(b, cut, "b.bin: record ");
    expect_bin_reject(b, len - 9, "truncated (no end marker)");
    expect_bin_reject(b, 12, "truncated header");
    /* trailing bytes, a wrong count in the end marker, header flags */
    unsigned char *big = calloc(1, len + 4);
    memcpy(big, b, len);
    expect_bin_reject(big, len + 1, "record 300: trailing bytes after the end marker");
    big[len - 8] ^= 1;
    expect_bin_reject(big, len, "record 300: the end marker counts 301 records");
    memcpy(big, b, len);
    big[8] = 1;
    expect_bin_reject(big, len, "header flags 0x1");
    /* a bad header byte: op 7, or a delta longer than 8 bytes */
    memcpy(big, b, len);
    big[16] = (unsigned char)(7u << 5);
    expect_bin_reject(big, len, "b.bin: record 0: bad record header byte");
    big[16] = 9;
    expect_bin_reject(big, len, "b.bin: record 0: bad record header byte");
    free(big);
    /* a record that decodes but breaks a rule: lane 40 */
    unsigned char rec[] = {'G', 'X', 'T', 'R', 'A', 'C', 'E', '2', 0, 0, 0, 0, 0, 0, 0, 0,
                           0x10, 0x10, 40, 0xff, 1, 0, 0, 0, 0, 0, 0, 0};
    expect_bin_reject(rec, sizeof rec, "b.bin: record 0: bad lane 40");
    free(b);
    gx_trace_free(&t);
}

/* Inputs larger than the reader's buffer: text lines and version 2 records
 * across its edges, from a file. */
static void test_stream_large(void **state)
{
    (void)state;
    uint64_t n = gx_test_sanitizer() ? 60000 : 300000; /* ~10 MB of text */
    gx_trace t;
    mixed_trace(&t, n, 77);
    gx_msg m;
    const char *formats[] = {"big.txt", "big.bin"};
    for (int f = 0; f < 2; f++) {
        const char *path = gx_test_tmp(formats[f]);
        assert_int_equal(gx_trace_save(&t, path, f ? GX_TRACE_BINARY : GX_TRACE_TEXT, &m), GX_OK);
        gx_trace_reader *rd = NULL;
        assert_int_equal(gx_trace_reader_open(path, 0, &rd, &m), GX_OK);
        size_t fp = gx_trace_reader_footprint(rd);
        gx_trace_rec *buf = malloc(1000 * sizeof *buf);
        uint64_t i = 0;
        size_t k;
        while (gx_trace_reader_next(rd, buf, 1000, &k, &m) == GX_OK && k) {
            for (size_t j = 0; j < k; j++, i++)
                assert_rec_equal(&t.rec[i], &buf[j], i);
            assert_int_equal(gx_trace_reader_footprint(rd), fp); /* bounded */
        }
        assert_int_equal(i, n);
        free(buf);
        gx_trace_reader_close(rd);
        unlink(path);
    }
    gx_trace_free(&t);
}

/* A malformed record after many good ones: the good ones are delivered,
 * then the error names the record's line, and the reader stays failed. */
static void test_stream_error_mid_trace(void **state)
{
    (void)state;
    const char *path = gx_test_tmp("mid.txt");
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 100000; i++)
        fprintf(f, "%d R 0x%x 32\n", i % 8, i * 32);
    fprintf(f, "0 R 0x10 lane=99\n0 R 0x20\n");
    fclose(f);
    gx_trace_reader *rd = NULL;
    gx_msg m;
    assert_int_equal(gx_trace_reader_open(path, 0, &rd, &m), GX_OK);
    gx_trace_rec buf[512];
    size_t k;
    uint64_t got = 0;
    int rc;
    while ((rc = gx_trace_reader_next(rd, buf, 512, &k, &m)) == GX_OK && k)
        got += k;
    assert_int_equal(rc, GX_EPARSE);
    assert_non_null(strstr(m.text, "mid.txt:100001: bad lane"));
    assert_true(got <= 100000);
    assert_int_equal(gx_trace_reader_next(rd, buf, 512, &k, &m), GX_EPARSE);
    assert_int_equal(k, 0);
    gx_trace_reader_close(rd);
    unlink(path);
}

/* Accel-Sim's NVBit trace: every address encoding, the ops by opcode, lanes
 * and warp-instruction ids, the block's SM; then malformed lines. */
static void test_accelsim(void **state)
{
    (void)state;
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    const char *path = gx_test_path("tests/data/accelsim-kernel-1.traceg");
    assert_int_equal(gx_trace_read(path, 0, &t, &m), GX_OK);
    assert_int_equal(t.n, 12);
    static const struct { uint64_t addr; int op, size, lane; uint32_t warp; } want[] = {
        {0x7f0000100000, GX_TRACE_READ, 4, 0, 1},  {0x7f0000100004, GX_TRACE_READ, 4, 1, 1},
        {0x7f0000100008, GX_TRACE_READ, 4, 2, 1},  {0x7f000010000c, GX_TRACE_READ, 4, 3, 1},
        {0x7f0000200000, GX_TRACE_READ, 16, 0, 2}, {0x7f0000300010, GX_TRACE_READ, 16, 2, 2},
        {0x7f0000400000, GX_TRACE_WRITE, 8, 1, 3}, {0x7f00003ffff8, GX_TRACE_WRITE, 8, 2, 3},
        {0x7f0000400008, GX_TRACE_WRITE, 8, 3, 3}, {0x40, GX_TRACE_SHARED_READ, 4, 0, 4},
        {0x44, GX_TRACE_SHARED_READ, 4, 1, 4},     {0x80, GX_TRACE_SHARED_WRITE, 4, 0, 5},
    };
    for (int i = 0; i < 12; i++) {
        const gx_trace_rec *r = &t.rec[i];
        if (r->addr != want[i].addr || r->op != want[i].op || r->size != want[i].size ||
            r->lane != want[i].lane || r->warp != want[i].warp || r->sm != 5)
            fail_msg("record %d: addr %llx op %u size %u lane %u warp %u sm %u", i,
                     (unsigned long long)r->addr, r->op, r->size, r->lane, r->warp, r->sm);
    }
    gx_trace_free(&t);
    /* with an SM limit the block's index is folded: block 5 on 4 SMs -> SM 1 */
    assert_int_equal(gx_trace_read(path, 4, &t, &m), GX_OK);
    assert_int_equal(t.rec[0].sm, 1);
    gx_trace_free(&t);
    const char *head = "-kernel name = k\n-grid dim = (2,1,1)\n-accelsim tracer version = 4\n"
                       "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n";
    static const struct { const char *body, *want; } bad[] = {
        {"0010 zz 0 LDG 0 4 0 0x10\n", "t:8: bad active mask 'zz'"},
        {"0010 3 0 LDG 0 4 0 0x10\n", "t:8: bad or missing lane address"},
        {"0010 3 0 LDG 0 4 3 0x10\n", "t:8: bad address mode"},
        {"0010 5 0 LDG 0 4 1 0x10 4\n", "t:8: base_stride with a gap in the mask"},
        {"0010 3 0 LDG 0 4 2 0x10\n", "t:8: bad or missing delta"},
        {"0010 1 0 LDG 0 4 2 0x10\n#END_TB\n0020 1 0 LDG 0 4 0 0x10\n",
         "t:10: a line outside #BEGIN_TB"},
        {"0010 1 0 LDG 0 4 0 0xffffffffffffffff\n", "t:8: address 0xffffffffffffffff + size 4 wraps"},
        {"0010 1 0 LDG 0 4 0 0x10 0x20\n", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s%s", head, bad[i].body);
        gx_trace u;
        gx_trace_init(&u);
        gx_msg_clear(&m);
        int rc = gx_trace_parse(buf, strlen(buf), "t", 0, &u, &m);
        if (!*bad[i].want) { /* a trailing token (the immediate of version 5) is accepted */
            assert_int_equal(rc, GX_OK);
        } else if (rc != GX_EPARSE || !strstr(m.text, bad[i].want)) {
            fail_msg("case %zu: rc %d '%s', wanted '%s'", i, rc, m.text, bad[i].want);
        }
        gx_trace_free(&u);
    }
    const char *old = "-kernel name = k\n-accelsim tracer version = 2\n";
    assert_int_equal(gx_trace_parse(old, strlen(old), "t", 0, &t, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "t:2: accelsim tracer version 2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_new_ops),
        cmocka_unit_test(test_text_new_errors),
        cmocka_unit_test(test_v2_round_trip),
        cmocka_unit_test(test_v2_errors),
        cmocka_unit_test(test_stream_large),
        cmocka_unit_test(test_stream_error_mid_trace),
        cmocka_unit_test(test_accelsim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
