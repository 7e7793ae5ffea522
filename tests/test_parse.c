/* test_parse.c - the strict number parser (include/gpuxray/parse.h): every
 * way strtoull and friends go silently wrong (signs, wrap-around, clamping,
 * octal, blanks, suffix overflow, inf / nan) must be an error that names the
 * option and repeats the value. */
#include <math.h>
#include <string.h>

#include "gpuxray/parse.h"
#include "testutil.h"

static int u64(const char *s, uint64_t lo, uint64_t hi, unsigned fl, uint64_t *out, gx_msg *m)
{
    gx_msg_clear(m);
    return gx_parse_u64("--opt", s, lo, hi, fl, out, m);
}

static void test_u64_accepts(void **state)
{
    (void)state;
    gx_msg m;
    uint64_t v = 0;
    assert_int_equal(u64("0", 0, UINT64_MAX, 0, &v, &m), GX_OK);
    assert_true(v == 0);
    assert_int_equal(u64("18446744073709551615", 0, UINT64_MAX, 0, &v, &m), GX_OK);
    assert_true(v == UINT64_MAX);
    assert_int_equal(u64("0x10", 0, UINT64_MAX, 0, &v, &m), GX_OK);
    assert_true(v == 16);
    assert_int_equal(u64("010", 0, UINT64_MAX, 0, &v, &m), GX_OK); /* decimal, not octal */
    assert_true(v == 10);
    assert_int_equal(u64("64MiB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_OK);
    assert_true(v == 64ull << 20);
    assert_int_equal(u64("4k", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_OK);
    assert_true(v == 4096);
    assert_int_equal(u64("2GB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_OK);
    assert_true(v == 2ull << 30);
    assert_int_equal(u64("4096B", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_OK);
    assert_true(v == 4096);
    assert_int_equal(u64("15EiB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_EPARSE); /* no E */
    assert_int_equal(u64("16383PiB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_EPARSE);
    assert_int_equal(u64("16777215TiB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_OK);
    assert_true(v == 16777215ull << 40);
    assert_int_equal(u64("20M", 0, UINT64_MAX, GX_NUM_COUNT, &v, &m), GX_OK);
    assert_true(v == 20000000);
    assert_int_equal(u64("2k", 0, UINT64_MAX, GX_NUM_COUNT, &v, &m), GX_OK);
    assert_true(v == 2000);
}

static void test_u64_rejects(void **state)
{
    (void)state;
    gx_msg m;
    uint64_t v = 7;
    assert_int_equal(u64("-5", 0, UINT64_MAX, 0, &v, &m), GX_EPARSE);
    assert_string_equal(m.text, "--opt: -5 is not a non-negative integer (0..2^64-1)");
    assert_int_equal(u64("99999999999999999999999", 0, UINT64_MAX, 0, &v, &m), GX_ERANGE);
    assert_string_equal(m.text, "--opt: 99999999999999999999999 is out of range (0..2^64-1)");
    assert_int_equal(u64("18446744073709551616", 0, UINT64_MAX, 0, &v, &m), GX_ERANGE);
    assert_int_equal(u64("0", 1, 256, 0, &v, &m), GX_ERANGE);
    assert_string_equal(m.text, "--opt: 0 is out of range (1..256)");
    assert_int_equal(u64("257", 1, 256, 0, &v, &m), GX_ERANGE);
    assert_int_equal(u64("", 0, UINT64_MAX, 0, &v, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "empty"));
    const char *bad[] = {" 5", "5 ", "+5", "0x", "5.0", "1e3", "12abc", "0x1g", "5_000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(u64(bad[i], 0, UINT64_MAX, 0, &v, &m), GX_EPARSE);
        assert_non_null(strstr(m.text, bad[i]));
        assert_non_null(strstr(m.text, "--opt"));
    }
    /* suffixes only where the option takes them; overflow through a suffix */
    assert_int_equal(u64("4k", 0, UINT64_MAX, 0, &v, &m), GX_EPARSE);
    assert_int_equal(u64("64MiB", 0, UINT64_MAX, GX_NUM_COUNT, &v, &m), GX_EPARSE);
    assert_int_equal(u64("16777216TiB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_ERANGE);
    assert_int_equal(u64("64QB", 0, UINT64_MAX, GX_NUM_SIZE, &v, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "64QB is not a size"));
    assert_true(v == 7); /* untouched on failure */
}

static void test_u32_and_names(void **state)
{
    (void)state;
    gx_msg m;
    uint32_t v = 3;
    assert_int_equal(gx_parse_u32("--sms", "4294967295", 1, UINT32_MAX, 0, &v, &m), GX_OK);
    assert_true(v == UINT32_MAX);
    assert_int_equal(gx_parse_u32("--sms", "4294967296", 1, UINT32_MAX, 0, &v, &m), GX_ERANGE);
    assert_string_equal(m.text, "--sms: 4294967296 is out of range (1..2^32-1)");
    assert_int_equal(gx_parse_u32(NULL, "x", 0, 9, 0, &v, &m), GX_EPARSE);
    assert_true(strncmp(m.text, "value: x", 8) == 0);
    assert_int_equal(gx_parse_u64("--x", NULL, 0, 9, 0, NULL, &m), GX_EINVAL);
    /* a huge value is cut in the message */
    char big[400];
    memset(big, '9', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    uint64_t w;
    assert_int_equal(gx_parse_u64("--n", big, 0, UINT64_MAX, 0, &w, &m), GX_ERANGE);
    assert_true(strlen(m.text) < 200);
}

static void test_double(void **state)
{
    (void)state;
    gx_msg m;
    double d = -1;
    assert_int_equal(gx_parse_double("--bar", "0.5", 0, 1, &d, &m), GX_OK);
    assert_true(d == 0.5);
    assert_int_equal(gx_parse_double("--bar", "1e-3", 0, 1, &d, &m), GX_OK);
    assert_true(fabs(d - 1e-3) < 1e-15);
    assert_int_equal(gx_parse_double("--bar", "1.5", 0, 1, &d, &m), GX_ERANGE);
    assert_string_equal(m.text, "--bar: 1.5 is out of range (0..1)");
    const char *bad[] = {"nan", "inf", "-inf", "0x1p3", "", " 1", "1 ", "1,5", "half"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = 0.25;
        assert_int_not_equal(gx_parse_double("--bar", bad[i], 0, 1, &d, &m), GX_OK);
        assert_non_null(strstr(m.text, "--bar"));
        assert_true(d == 0.25);
    }
    assert_int_equal(gx_parse_double("--x", "1e400", 0, 1e308, &d, &m), GX_ERANGE);
    assert_int_equal(gx_parse_double("--x", "-0.5", 0, 1, &d, &m), GX_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_accepts),
        cmocka_unit_test(test_u64_rejects),
        cmocka_unit_test(test_u32_and_names),
        cmocka_unit_test(test_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
