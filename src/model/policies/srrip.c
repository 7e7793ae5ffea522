/* srrip.c - static re-reference interval prediction (Jaleel et al., ISCA
 * 2010) with 2-bit re-reference prediction values (RRPV).
 *
 * Notes:
 * - Fill: RRPV 2 ("long" re-reference). Victim: the lowest way with RRPV 3;
 *   when none has 3, every way ages by the same amount until one does (the
 *   paper's "increment all and retry" loop, done in one step).
 * - srrip-hp (hit priority): a hit sets RRPV 0.
 *   srrip-fp (frequency priority): a hit decrements RRPV (not below 0).
 * - Ages only on replacement (nanoBench: srrip-hp = QLRU_H00_M2_R0_U0_UMO,
 *   srrip-fp = QLRU_H21_M2_R0_U0_UMO; the tests check both equivalences).
 * - State: packed 2-bit RRPVs (policy_internal.h), 8 bytes up to 32 ways,
 *   16 up to 64. Start (and invalidated ways): RRPV 3. */
#include <stddef.h>
#include <stdint.h>

#include "policy_internal.h"

static size_t srrip_state_bytes(uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    return gx_age_words(ways) * sizeof(uint64_t);
}

static void srrip_init(void *st, uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    uint64_t *a = st;
    for (uint32_t j = 0; j < gx_age_words(ways); j++)
        a[j] = gx_age_lanes(ways, j) * 3;
}

static void srrip_hp_hit(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    gx_age_set(st, way, 0);
}

static void srrip_fp_hit(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    uint32_t a = gx_age_get(st, way);
    gx_age_set(st, way, a - (a > 0));
}

static void srrip_fill(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    gx_age_set(st, way, 2);
}

static void srrip_invalidate(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    gx_age_set(st, way, 3);
}

/* Lowest way with age 3 in a (lanes lo[]), or ways when none. */
static uint32_t first_age3(const uint64_t *a, const uint64_t *lo, uint32_t nw, uint32_t ways)
{
    for (uint32_t j = 0; j < nw; j++) {
        uint64_t t = gx_age_is3(a[j], lo[j]);
        if (t)
            return 32 * j + gx_ctz64(t) / 2;
    }
    return ways;
}

static uint32_t srrip_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng)
{
    (void)p;
    (void)rng;
    uint64_t *a = st;
    uint32_t nw = gx_age_words(ways);
    uint64_t lo[2] = {gx_age_lanes(ways, 0), gx_age_lanes(ways, 1)};
    uint32_t v = first_age3(a, lo, nw, ways);
    if (v < ways)
        return v;
    gx_age_add(a, lo, nw, 3 - gx_age_max(a, lo, nw));
    return first_age3(a, lo, nw, ways);
}

static int srrip_hp_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("srrip-hp", args, msg);
}

static int srrip_fp_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("srrip-fp", args, msg);
}

const gx_policy_ops gx_policy_srrip_hp_ops = {
    .family = "srrip-hp",
    .help = "srrip-hp: 2-bit SRRIP, insert at 2, a hit sets 0 (hit priority; alias srrip)",
    .parse = srrip_hp_parse,
    .state_bytes = srrip_state_bytes,
    .init = srrip_init,
    .on_hit = srrip_hp_hit,
    .on_fill = srrip_fill,
    .victim = srrip_victim,
    .on_invalidate = srrip_invalidate,
    .randomized = 0,
    .format_args = NULL,
};

const gx_policy_ops gx_policy_srrip_fp_ops = {
    .family = "srrip-fp",
    .help = "srrip-fp: 2-bit SRRIP, insert at 2, a hit decrements (frequency priority)",
    .parse = srrip_fp_parse,
    .state_bytes = srrip_state_bytes,
    .init = srrip_init,
    .on_hit = srrip_fp_hit,
    .on_fill = srrip_fill,
    .victim = srrip_victim,
    .on_invalidate = srrip_invalidate,
    .randomized = 0,
    .format_args = NULL,
};
