/* qlru.c - the QLRU family ("quad-age LRU") with nanoBench's parameter
 * naming: qlru:H<x><y>_M<m>_R<r>_U<u>[_UMO], e.g. qlru:H11_M1_R0_U0.
 *
 * Each way has a 2-bit age, 0 (recently used) .. 3 (evict first); an empty
 * set starts with every age 3. The letters:
 * - H<x><y>, hit: a hit on a way of age 3 sets it to x, of age 2 to y, of
 *   age 1 or 0 to 0. nanoBench's five: H00 H10 H11 H20 H21.
 * - M<m>, miss: the filled line gets age m (0..3).
 * - R<r>, replacement, which way of age 3 is evicted:
 *   R0: the leftmost (lowest index) way of age 3;
 *   R1: the leftmost way of age 3, or way 0 when no way has age 3;
 *   R2: nanoBench fills an empty set from the RIGHT (highest index first)
 *       and evicts the leftmost way of age 3. Our cache always fills the
 *       lowest invalid way first, so R2 is implemented with the way order
 *       mirrored: evict the RIGHTMOST way of age 3. Renumbering the ways
 *       w -> ways-1-w maps one onto the other exactly (no other rule depends
 *       on way order), so hit/miss sequences are identical.
 * - U<u>, update after every access (hit or miss), so that some line is old:
 *   U0: if no way has age 3, add (3 - max age) to every way;
 *   U1: the same over every way except the one just accessed (which keeps
 *       its age);
 *   U2: if no way has age 3, add 1 to every way;
 *   U3: if no way has age 3, add 1 to every way except the one accessed.
 *   (R0/R2 need an age-3 way to exist, which U2/U3 do not guarantee:
 *   nanoBench leaves those combinations out and so do we.)
 * - _UMO, update on miss only: the U rule runs only on a miss, just before
 *   the victim is chosen (over every way), not after hits.
 *
 * Published policies (nanoBench / uops.info): H11_M1_R0_U0 Skylake and Coffee
 * Lake L3, H00_M1_R2_U1 Coffee Lake L2, H00_M1_R0_U1 Cannon Lake L2,
 * H11_M1_R1_U2 Ivy Bridge L3, H21_M2_R0_U0_UMO (arXiv 1904.06278); SRRIP
 * itself is H00_M2_R0_U0_UMO.
 *
 * Notes:
 * - State: packed 2-bit ages (policy_internal.h), 8 bytes up to 32 ways, 16
 *   up to 64. An invalidated way gets age 3 (nanoBench keeps its stale age;
 *   only sequences with invalidations can tell).
 * - With _UMO the update runs inside victim(); fills into invalid ways skip
 *   it, which changes nothing while an invalid way has age 3 (always here).
 * - Params: i[0] hit map (new age of age a in bits 2a..2a+1), i[1] M,
 *   i[2] R, i[3] U, i[4] UMO, i[5] the H digits as 10*x + y. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy_internal.h"

enum { QP_HITMAP, QP_M, QP_R, QP_U, QP_UMO, QP_H };

static size_t qlru_state_bytes(uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    return gx_age_words(ways) * sizeof(uint64_t);
}

static void qlru_init(void *st, uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    uint64_t *a = st;
    for (uint32_t j = 0; j < gx_age_words(ways); j++)
        a[j] = gx_age_lanes(ways, j) * 3;
}

/* The U rule; excl is the way just accessed, or ways for none. */
static void qlru_update(uint64_t *a, uint32_t ways, uint32_t excl, const gx_policy_params *p)
{
    uint32_t nw = gx_age_words(ways);
    uint64_t all[2] = {gx_age_lanes(ways, 0), gx_age_lanes(ways, 1)};
    uint64_t oth[2] = {all[0], all[1]};
    if (excl < ways)
        oth[excl >> 5] &= ~(1ULL << (2 * (excl & 31)));
    switch (p->i[QP_U]) {
    case 0:
        gx_age_add(a, all, nw, 3 - gx_age_max(a, all, nw));
        break;
    case 1:
        gx_age_add(a, oth, nw, 3 - gx_age_max(a, oth, nw));
        break;
    case 2:
        if (gx_age_max(a, all, nw) < 3)
            gx_age_add(a, all, nw, 1);
        break;
    default:
        if (gx_age_max(a, all, nw) < 3)
            gx_age_add(a, oth, nw, 1);
        break;
    }
}

static void qlru_hit(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    uint32_t age = gx_age_get(st, way);
    gx_age_set(st, way, ((uint32_t)p->i[QP_HITMAP] >> (2 * age)) & 3u);
    if (!p->i[QP_UMO])
        qlru_update(st, ways, way, p);
}

static void qlru_fill(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    gx_age_set(st, way, (uint32_t)p->i[QP_M]);
    if (!p->i[QP_UMO])
        qlru_update(st, ways, way, p);
}

static void qlru_invalidate(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    gx_age_set(st, way, 3);
}

static uint32_t qlru_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng)
{
    (void)rng;
    uint64_t *a = st;
    if (p->i[QP_UMO])
        qlru_update(a, ways, ways, p);
    uint32_t nw = gx_age_words(ways);
    uint64_t t0 = gx_age_is3(a[0], gx_age_lanes(ways, 0));
    uint64_t t1 = nw > 1 ? gx_age_is3(a[1], gx_age_lanes(ways, 1)) : 0;
    if (p->i[QP_R] == 2) { /* rightmost age-3 way (mirrored R2) */
        if (t1)
            return 32 + (uint32_t)(63 - __builtin_clzll(t1)) / 2;
        if (t0)
            return (uint32_t)(63 - __builtin_clzll(t0)) / 2;
        return ways - 1;
    }
    if (t0)
        return gx_ctz64(t0) / 2;
    if (t1)
        return 32 + gx_ctz64(t1) / 2;
    return 0; /* R1's fallback; unreachable for R0 */
}

/* One "<letter><digits>" token of exactly ndig digits, each <= maxd. */
static int token(const char *s, size_t len, char letter, int ndig, int maxd, int *val)
{
    if ((int)len != 1 + ndig || toupper((unsigned char)s[0]) != letter)
        return 0;
    int v = 0;
    for (int k = 1; k <= ndig; k++) {
        if (s[k] < '0' || s[k] - '0' > maxd)
            return 0;
        v = 10 * v + (s[k] - '0');
    }
    *val = v;
    return 1;
}

static int qlru_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    static const char *const what[] = {"hit rule H<x><y> (H00 H10 H11 H20 H21)",
                                       "insertion age M0..M3", "replacement rule R0..R2",
                                       "update rule U0..U3", "optional _UMO"};
    if (!args || !*args)
        return gx_fail(msg, GX_EINVAL, "qlru needs its letters, e.g. qlru:H11_M1_R0_U0");
    int v[5] = {0, 0, 0, 0, 0};
    const char *s = args;
    int n = 0;
    for (;; n++) {
        const char *end = strchr(s, '_');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (n >= 5)
            return gx_fail(msg, GX_EINVAL, "qlru: unexpected \"%.*s\" after the U rule (only "
                                           "_UMO may follow)", (int)len, s);
        int ok = 0;
        switch (n) {
        case 0:
            ok = token(s, len, 'H', 2, 2, &v[0]) &&
                 (v[0] == 0 || v[0] == 10 || v[0] == 11 || v[0] == 20 || v[0] == 21);
            break;
        case 1:
            ok = token(s, len, 'M', 1, 3, &v[1]);
            break;
        case 2:
            ok = token(s, len, 'R', 1, 2, &v[2]);
            break;
        case 3:
            ok = token(s, len, 'U', 1, 3, &v[3]);
            break;
        default:
            ok = len == 3 && strncasecmp(s, "UMO", 3) == 0;
            v[4] = 1;
            break;
        }
        if (!ok)
            return gx_fail(msg, GX_EINVAL, "qlru: bad letter group \"%.*s\" (want the %s)",
                           (int)len, s, what[n]);
        if (!end)
            break;
        s = end + 1;
    }
    if (n < 3)
        return gx_fail(msg, GX_EINVAL, "qlru: missing the %s (want e.g. H11_M1_R0_U0)",
                       what[n + 1]);
    if ((v[2] == 0 || v[2] == 2) && v[3] >= 2)
        return gx_fail(msg, GX_EINVAL, "qlru: R%d needs U0 or U1 (U%d does not guarantee a "
                                       "way of age 3 to evict)", v[2], v[3]);
    int x = v[0] / 10, y = v[0] % 10;
    p->i[QP_HITMAP] = (x << 6) | (y << 4); /* age 1 and 0 -> 0 */
    p->i[QP_M] = v[1];
    p->i[QP_R] = v[2];
    p->i[QP_U] = v[3];
    p->i[QP_UMO] = v[4];
    p->i[QP_H] = v[0];
    return GX_OK;
}

static int qlru_format(const gx_policy_params *p, char *buf, size_t n)
{
    int len = snprintf(buf, n, "H%02d_M%d_R%d_U%d%s", p->i[QP_H], p->i[QP_M], p->i[QP_R],
                       p->i[QP_U], p->i[QP_UMO] ? "_UMO" : "");
    return len < 0 || (size_t)len >= n ? GX_ERANGE : GX_OK;
}

const gx_policy_ops gx_policy_qlru_ops = {
    .family = "qlru",
    .help = "qlru:H<xy>_M<m>_R<r>_U<u>[_UMO]: nanoBench's quad-age LRU family, e.g. "
            "qlru:H11_M1_R0_U0 (also written QLRU_H11_M1_R0_U0)",
    .parse = qlru_parse,
    .state_bytes = qlru_state_bytes,
    .init = qlru_init,
    .on_hit = qlru_hit,
    .on_fill = qlru_fill,
    .victim = qlru_victim,
    .on_invalidate = qlru_invalidate,
    .randomized = 0,
    .format_args = qlru_format,
};
