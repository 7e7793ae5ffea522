/* nru.c - not-recently-used, as defined in the RRIP paper (Jaleel et al.,
 * ISCA 2010) and simulated by nanoBench: one bit per way, cleared when the
 * way is hit or filled; the victim is the lowest way whose bit is set, and
 * when none is set all bits are set first.
 *
 * Notes:
 * - Differs from mru.c in when the bits are re-armed: lazily at the next
 *   replacement, and then for every way (the last-used one included).
 * - State: one uint64_t, 8 bytes, starting all ones. victim() re-arms the
 *   bits, so call it only to replace. An invalidated way becomes eligible. */
#include <stddef.h>
#include <stdint.h>

#include "policy_internal.h"

static size_t nru_state_bytes(uint32_t ways, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    return sizeof(uint64_t);
}

static void nru_init(void *st, uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    *(uint64_t *)st = gx_way_mask(ways);
}

static void nru_touch(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    *(uint64_t *)st &= ~(1ULL << way);
}

static uint32_t nru_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng)
{
    (void)p;
    (void)rng;
    uint64_t *bits = st;
    if (!*bits)
        *bits = gx_way_mask(ways);
    return gx_ctz64(*bits);
}

static void nru_invalidate(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    *(uint64_t *)st |= 1ULL << way;
}

static int nru_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("nru", args, msg);
}

const gx_policy_ops gx_policy_nru_ops = {
    .family = "nru",
    .help = "nru: not-recently-used bit per way, all re-armed lazily at replacement "
            "(RRIP paper; no arguments)",
    .parse = nru_parse,
    .state_bytes = nru_state_bytes,
    .init = nru_init,
    .on_hit = nru_touch,
    .on_fill = nru_touch,
    .victim = nru_victim,
    .on_invalidate = nru_invalidate,
    .randomized = 0,
    .format_args = NULL,
};
