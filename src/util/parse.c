/* parse.c - strict number parsing (see include/gpuxray/parse.h).
 *
 * Notes:
 * - Digits are accumulated by hand with an overflow check before every
 *   step: strtoull accepts a sign ("-5" becomes 2^64-5), leading blanks and
 *   octal, and clamps on overflow, each of which is a silent wrong value.
 * - A suffix multiplies after the digits; the product is overflow-checked.
 * - Values are quoted in messages as given, cut at VALUE_SHOWN characters so
 *   a huge argument cannot flood the terminal. */
#include "gpuxray/parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_SHOWN 80 /* characters of a bad value repeated in a message */

const char *gx_u64_range_text(uint64_t v, char *buf)
{
    if (v == UINT64_MAX)
        snprintf(buf, 24, "2^64-1");
    else if (v == UINT32_MAX)
        snprintf(buf, 24, "2^32-1");
    else
        snprintf(buf, 24, "%llu", (unsigned long long)v);
    return buf;
}

static const char *kind_text(unsigned flags)
{
    if (flags & GX_NUM_SIZE)
        return "a size in bytes";
    if (flags & GX_NUM_COUNT)
        return "a count";
    return "a non-negative integer";
}

static const char *hint_text(unsigned flags)
{
    if (flags & GX_NUM_SIZE)
        return "; an integer with an optional K, M, G, T = x1024^n, e.g. 64MiB";
    if (flags & GX_NUM_COUNT)
        return "; an integer with an optional k, M, G, T = x1000^n, e.g. 20M";
    return "";
}

static int bad_form(const char *name, const char *s, uint64_t lo, uint64_t hi, unsigned flags,
                    gx_msg *msg)
{
    char a[24], b[24];
    if (!*s)
        return gx_fail(msg, GX_EPARSE, "%s: the value is empty (expected %s, %s..%s%s)", name,
                       kind_text(flags), gx_u64_range_text(lo, a), gx_u64_range_text(hi, b),
                       hint_text(flags));
    return gx_fail(msg, GX_EPARSE, "%s: %.*s%s is not %s (%s..%s%s)", name, VALUE_SHOWN, s,
                   strlen(s) > VALUE_SHOWN ? "..." : "", kind_text(flags),
                   gx_u64_range_text(lo, a), gx_u64_range_text(hi, b), hint_text(flags));
}

static int out_of_range(const char *name, const char *s, uint64_t lo, uint64_t hi, gx_msg *msg)
{
    char a[24], b[24];
    return gx_fail(msg, GX_ERANGE, "%s: %.*s%s is out of range (%s..%s)", name, VALUE_SHOWN, s,
                   strlen(s) > VALUE_SHOWN ? "..." : "", gx_u64_range_text(lo, a),
                   gx_u64_range_text(hi, b));
}

static int digit_value(char c, unsigned base)
{
    int d = -1;
    if (c >= '0' && c <= '9')
        d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
    return d;
}

/* The multiplier a suffix stands for; 0 when the suffix is not accepted. */
static uint64_t suffix_mul(const char *p, unsigned flags)
{
    if (!*p)
        return 1;
    if (!(flags & (GX_NUM_SIZE | GX_NUM_COUNT)))
        return 0;
    const char *units = "kmgt";
    const char *u = strchr(units, *p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    uint64_t mul = 1;
    if (*p && u) {
        int e = (int)(u - units) + 1;
        for (int i = 0; i < e; i++)
            mul *= (flags & GX_NUM_SIZE) ? 1024u : 1000u;
        p++;
    }
    if (flags & GX_NUM_SIZE) {
        if (mul > 1 && *p == 'i')
            p++;
        if (*p == 'B')
            p++;
    }
    return *p ? 0 : mul;
}

int gx_parse_u64(const char *name, const char *s, uint64_t lo, uint64_t hi, unsigned flags,
                 uint64_t *out, gx_msg *msg)
{
    if (!name)
        name = "value";
    if (!s)
        return gx_fail(msg, GX_EINVAL, "%s: a value is required", name);
    const char *p = s;
    unsigned base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (digit_value(*p, base) < 0)
        return bad_form(name, s, lo, hi, flags, msg);
    uint64_t v = 0;
    int overflow = 0;
    for (int d; (d = digit_value(*p, base)) >= 0; p++) {
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            overflow = 1;
        else
            v = v * base + (uint64_t)d;
    }
    uint64_t mul = suffix_mul(p, flags);
    if (!mul)
        return bad_form(name, s, lo, hi, flags, msg);
    if (overflow || v > UINT64_MAX / mul)
        return out_of_range(name, s, lo, hi, msg);
    v *= mul;
    if (v < lo || v > hi)
        return out_of_range(name, s, lo, hi, msg);
    *out = v;
    return GX_OK;
}

int gx_parse_u32(const char *name, const char *s, uint32_t lo, uint32_t hi, unsigned flags,
                 uint32_t *out, gx_msg *msg)
{
    uint64_t v;
    int rc = gx_parse_u64(name, s, lo, hi, flags, &v, msg);
    if (rc == GX_OK)
        *out = (uint32_t)v;
    return rc;
}

/* Only the characters of a decimal floating-point number (no inf, nan, hex). */
static int decimal_chars(const char *s)
{
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789.eE+-", *p))
            return 0;
    return 1;
}

int gx_parse_double(const char *name, const char *s, double lo, double hi, double *out,
                    gx_msg *msg)
{
    if (!name)
        name = "value";
    if (!s)
        return gx_fail(msg, GX_EINVAL, "%s: a value is required", name);
    char *end = NULL;
    errno = 0;
    double v = decimal_chars(s) ? strtod(s, &end) : 0.0;
    if (!end || end == s || *end)
        return gx_fail(msg, GX_EPARSE, "%s: %.*s%s is not a number (%g..%g)", name, VALUE_SHOWN,
                       *s ? s : "''", strlen(s) > VALUE_SHOWN ? "..." : "", lo, hi);
    if (!isfinite(v) || v < lo || v > hi)
        return gx_fail(msg, GX_ERANGE, "%s: %.*s%s is out of range (%g..%g)", name, VALUE_SHOWN,
                       s, strlen(s) > VALUE_SHOWN ? "..." : "", lo, hi);
    *out = v;
    return GX_OK;
}
