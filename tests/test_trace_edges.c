/* test_trace_edges.c - edge cases of the trace readers found by review and
 * by fuzzing (fuzz/fuzz_trace_*.c): an access whose bytes pass 2^64-1 is
 * rejected by both readers, naming the line (text) or the record (binary),
 * while the last representable access is accepted; a binary trace of zero
 * records parses (it once did pointer arithmetic on NULL: UBSan, found by
 * fuzz_trace_binary, input fuzz/corpus/trace_binary/empty). */
#include <string.h>

#include "gpuxray/trace.h"
#include "testutil.h"

static void test_text_wrap(void **state)
{
    (void)state;
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    const char *ok = "0 R 0xffffffffffffffe0 32\n";
    assert_int_equal(gx_trace_parse_text(ok, strlen(ok), "t", 0, &t, &m), GX_OK);
    assert_true(t.n == 1);
    gx_trace_free(&t);
    const char *bad = "# two lines\n0 R 0x0 4\n0 R 0xfffffffffffffff0 32\n";
    assert_int_equal(gx_trace_parse_text(bad, strlen(bad), "t", 0, &t, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "t:3:"));
    assert_non_null(strstr(m.text, "wraps past 2^64"));
    assert_true(t.n == 0);
    gx_trace_free(&t);
}

static void test_binary_wrap(void **state)
{
    (void)state;
    unsigned char b[GX_TRACE_HEADER_BYTES + GX_TRACE_RECORD_BYTES];
    memset(b, 0, sizeof b);
    memcpy(b, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES);
    b[8] = 1; /* one record */
    unsigned char *r = b + GX_TRACE_HEADER_BYTES;
    memset(r, 0xff, 8);
    r[0] = 0xf0; /* address 2^64 - 16 */
    r[12] = 32;  /* 32 bytes: 16 past the end */
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(gx_trace_parse_binary(b, sizeof b, "b", 0, &t, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "record 0"));
    assert_non_null(strstr(m.text, "wraps"));
    gx_trace_free(&t);
    r[12] = 16; /* exactly up to 2^64-1 */
    assert_int_equal(gx_trace_parse_binary(b, sizeof b, "b", 0, &t, &m), GX_OK);
    gx_trace_free(&t);
}

static void test_binary_empty(void **state)
{
    (void)state;
    unsigned char b[GX_TRACE_HEADER_BYTES];
    memset(b, 0, sizeof b);
    memcpy(b, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES);
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    assert_int_equal(gx_trace_parse_binary(b, sizeof b, "e", 0, &t, &m), GX_OK);
    assert_true(t.n == 0);
    assert_int_equal(gx_trace_parse(b, sizeof b, "e", 0, &t, &m), GX_OK);
    assert_true(t.n == 0);
    gx_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_wrap),
        cmocka_unit_test(test_binary_wrap),
        cmocka_unit_test(test_binary_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
