/* registry.c - the one table of replacement-policy families, spec parsing
 * ("family" or "family:args") and the candidate list discovery compares
 * against.
 *
 * Notes:
 * - Family names are matched case-insensitively; the canonical spec is the
 *   family name in lower case plus ":" and the family's own canonical
 *   arguments (format_args), so parse(canonical) == canonical.
 * - Aliases: "srrip" is srrip-hp; nanoBench's names "QLRU_H11_M1_R0_U0[_UMO]"
 *   are qlru:H11_M1_R0_U0[_UMO].
 * - The candidate list is every family with the parameter variants worth
 *   telling apart (the QLRU variants published for Intel caches, two
 *   plru-rand probabilities). Equivalent encodings are left out: srrip-hp is
 *   qlru:H00_M2_R0_U0_UMO and srrip-fp is qlru:H21_M2_R0_U0_UMO. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy_internal.h"

static const gx_policy_ops *const families[] = {
    &gx_policy_lru_ops,      &gx_policy_fifo_ops,     &gx_policy_plru_ops,
    &gx_policy_plru_rand_ops, &gx_policy_mru_ops,     &gx_policy_nru_ops,
    &gx_policy_srrip_hp_ops, &gx_policy_srrip_fp_ops, &gx_policy_qlru_ops,
    &gx_policy_random_ops,
};
#define N_FAMILIES (sizeof families / sizeof families[0])

static const char *const candidates[] = {
    "lru",
    "fifo",
    "plru",
    "mru",
    "nru",
    "srrip-hp",
    "srrip-fp",
    "qlru:H11_M1_R0_U0", /* Skylake/Coffee Lake L3 (nanoBench) */
    "qlru:H00_M1_R2_U1", /* Coffee Lake L2 */
    "qlru:H21_M2_R0_U0", /* SRRIP-FP-like with update on hits too */
    "qlru:H00_M1_R0_U1", /* Cannon Lake L2 */
    "qlru:H11_M1_R1_U2", /* Ivy Bridge L3 */
    "random",
    "plru-rand:0.05",
    "plru-rand:0.25",
};
#define N_CANDIDATES (sizeof candidates / sizeof candidates[0])

size_t gx_policy_family_count(void)
{
    return N_FAMILIES;
}

const gx_policy_ops *gx_policy_family(size_t i)
{
    return i < N_FAMILIES ? families[i] : NULL;
}

size_t gx_policy_candidate_count(void)
{
    return N_CANDIDATES;
}

const char *gx_policy_candidate(size_t i)
{
    return i < N_CANDIDATES ? candidates[i] : NULL;
}

int gx_policy_parse_none(const char *family, const char *args, gx_msg *msg)
{
    if (args)
        return gx_fail(msg, GX_EINVAL, "%s takes no arguments (got \"%s\")", family, args);
    return GX_OK;
}

int gx_policy_parse_prob(const char *family, const char *args, double *p, gx_msg *msg)
{
    if (!args || !*args)
        return gx_fail(msg, GX_EINVAL, "%s needs a probability: %s:P with P in [0,1]", family,
                       family);
    char *end = NULL;
    double v = strtod(args, &end);
    if (end == args || *end != '\0')
        return gx_fail(msg, GX_EINVAL, "%s: \"%s\" is not a number (want P in [0,1])", family,
                       args);
    if (!(v >= 0.0 && v <= 1.0))
        return gx_fail(msg, GX_ERANGE, "%s: P = %s is outside [0,1]", family, args);
    *p = v;
    return GX_OK;
}

int gx_policy_format_prob(double p, char *buf, size_t n)
{
    for (int digits = 1; digits <= 17; digits++) {
        int len = snprintf(buf, n, "%.*g", digits, p);
        if (len < 0 || (size_t)len >= n)
            return GX_ERANGE;
        if (strtod(buf, NULL) == p)
            return GX_OK;
    }
    return GX_OK;
}

static const gx_policy_ops *find_family(const char *name, size_t len)
{
    for (size_t i = 0; i < N_FAMILIES; i++) {
        const char *f = families[i]->family;
        if (strlen(f) == len && strncasecmp(f, name, len) == 0)
            return families[i];
    }
    return NULL;
}

static void family_list(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_FAMILIES && used < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", families[i]->family);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

/* Resolve aliases: sets *ops and *args (NULL when none); 0 when unknown. */
static int resolve(const char *spec, const gx_policy_ops **ops, const char **args)
{
    if (strncasecmp(spec, "qlru_", 5) == 0) { /* nanoBench's QLRU_H11_M1_R0_U0 */
        *ops = &gx_policy_qlru_ops;
        *args = spec + 5;
        return 1;
    }
    if (strcasecmp(spec, "srrip") == 0) {
        *ops = &gx_policy_srrip_hp_ops;
        *args = NULL;
        return 1;
    }
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    *ops = find_family(spec, len);
    *args = colon ? colon + 1 : NULL;
    return *ops != NULL;
}

int gx_policy_from_spec(const char *spec, gx_policy *out, gx_msg *msg)
{
    if (!spec || !*spec)
        return gx_fail(msg, GX_EINVAL, "policy spec is empty (want e.g. \"plru\" or "
                                       "\"plru-rand:0.05\")");
    const gx_policy_ops *ops = NULL;
    const char *args = NULL;
    if (!resolve(spec, &ops, &args)) {
        char known[256];
        family_list(known, sizeof known);
        return gx_fail(msg, GX_EINVAL, "policy \"%s\": unknown family (known: %s)", spec,
                       known);
    }
    gx_policy p;
    memset(&p, 0, sizeof p);
    p.ops = ops;
    gx_msg why;
    why.text[0] = '\0';
    int rc = ops->parse(args, &p.params, &why);
    if (rc != GX_OK)
        return gx_fail(msg, rc, "policy \"%s\": %s", spec, why.text);
    char abuf[48] = "";
    if (ops->format_args) {
        rc = ops->format_args(&p.params, abuf, sizeof abuf);
        if (rc != GX_OK)
            return gx_fail(msg, rc, "policy \"%s\": arguments too long", spec);
    }
    int len = snprintf(p.spec, sizeof p.spec, "%s%s%s", ops->family, abuf[0] ? ":" : "", abuf);
    if (len < 0 || (size_t)len >= sizeof p.spec)
        return gx_fail(msg, GX_EINVAL, "policy \"%s\": spec too long", spec);
    *out = p;
    return GX_OK;
}

int gx_policy_with_real(const gx_policy *base, double value, gx_policy *out, gx_msg *msg)
{
    const gx_policy_ops *ops = base->ops;
    if (!ops || !ops->real_param || !ops->format_args)
        return gx_fail(msg, GX_EINVAL, "policy \"%s\": no real parameter", base->spec);
    gx_policy_params pr = base->params;
    pr.p = value;
    char abuf[48], spec[64];
    if (ops->format_args(&pr, abuf, sizeof abuf) != GX_OK ||
        snprintf(spec, sizeof spec, "%s:%s", ops->family, abuf) >= (int)sizeof spec)
        return gx_fail(msg, GX_EINVAL, "policy \"%s\": %s = %g: spec too long", base->spec,
                       ops->real_param, value);
    return gx_policy_from_spec(spec, out, msg); /* the family's own range check */
}

/* Small sets: two deterministic policies that give the same hit/miss
 * outcome on every access of long random sequences (a few lines more than
 * the ways) are the same policy as far as timing can tell (e.g. at 2 ways
 * lru, plru, mru and several QLRU variants all keep the most recent line). */
static int same_outcomes(const char *a, const char *b, uint32_t ways)
{
    gx_policy_set *x = NULL, *y = NULL;
    int same = gx_policy_set_new(a, ways, 1, &x, NULL) == GX_OK &&
               gx_policy_set_new(b, ways, 1, &y, NULL) == GX_OK;
    for (uint32_t extra = 1; same && extra <= ways + 1; extra++) {
        gx_rng r;
        gx_rng_seed(&r, 0x5eedULL + extra);
        gx_policy_set_reset(x);
        gx_policy_set_reset(y);
        for (int i = 0; i < 4000 && same; i++) {
            uint64_t line = gx_rng_below(&r, ways + extra);
            same = gx_policy_set_access(x, line) == gx_policy_set_access(y, line);
        }
    }
    gx_policy_set_free(x);
    gx_policy_set_free(y);
    return same;
}

/* See policy.h. The R0 / R2 mirror: with an unknown arrangement of lines over
 * the ways, evicting the leftmost or the rightmost age-3 line is the same
 * policy seen in a mirror (stage_policy cannot tell them apart). */
int gx_policy_equivalent(const char *a, const char *b, uint32_t ways)
{
    gx_policy pa, pb;
    if (gx_policy_from_spec(a, &pa, NULL) != GX_OK || gx_policy_from_spec(b, &pb, NULL) != GX_OK)
        return 0;
    if (strcmp(pa.spec, pb.spec) == 0 || ways <= 1)
        return 1;
    if (ways <= 4 && !pa.ops->randomized && !pb.ops->randomized &&
        same_outcomes(pa.spec, pb.spec, ways))
        return 1;
    static const char *const keep_newest[] = {"lru", "plru", "mru"};
    if (ways <= 2) {
        int ia = 0, ib = 0;
        for (size_t i = 0; i < sizeof keep_newest / sizeof keep_newest[0]; i++) {
            ia |= strcmp(pa.spec, keep_newest[i]) == 0;
            ib |= strcmp(pb.spec, keep_newest[i]) == 0;
        }
        if (ia && ib)
            return 1;
    }
    if (pa.ops == pb.ops && strncmp(pa.spec, "qlru:", 5) == 0) {
        char x[64], y[64];
        snprintf(x, sizeof x, "%s", pa.spec);
        snprintf(y, sizeof y, "%s", pb.spec);
        char *rx = strstr(x, "_R2"), *ry = strstr(y, "_R2");
        if (rx)
            rx[2] = '0';
        if (ry)
            ry[2] = '0';
        return strcmp(x, y) == 0;
    }
    return 0;
}
