/* mru.c - bit-PLRU, which nanoBench calls "MRU": one bit per way; an access
 * clears the way's bit; when that leaves no bit set, every other way's bit
 * is set again; the victim is the lowest way whose bit is set.
 *
 * Notes:
 * - nanoBench's "MRU" (Nehalem's L3): the update also runs while the set is
 *   still filling. Its "MRU_N" variant (update only once full) is not
 *   registered.
 * - State: one uint64_t (bit w = way w is eligible), 8 bytes. Starts all
 *   ones. An invalidated way becomes eligible again.
 * - Not the textbook "evict the most recently used" policy: the name is
 *   nanoBench's (bits mark the ways NOT recently used). */
#include <stddef.h>
#include <stdint.h>

#include "policy_internal.h"

static size_t mru_state_bytes(uint32_t ways, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    return sizeof(uint64_t);
}

static void mru_init(void *st, uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    *(uint64_t *)st = gx_way_mask(ways);
}

static void mru_touch(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)p;
    uint64_t *bits = st;
    uint64_t me = 1ULL << way;
    uint64_t b = *bits & ~me;
    *bits = b ? b : (gx_way_mask(ways) & ~me);
}

static uint32_t mru_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng)
{
    (void)ways;
    (void)p;
    (void)rng;
    uint64_t b = *(const uint64_t *)st;
    return b ? gx_ctz64(b) : 0u; /* b == 0 only for a 1-way set */
}

static void mru_invalidate(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    *(uint64_t *)st |= 1ULL << way;
}

static int mru_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("mru", args, msg);
}

const gx_policy_ops gx_policy_mru_ops = {
    .family = "mru",
    .help = "mru: bit-PLRU (nanoBench's \"MRU\"): one bit per way, all others re-armed when "
            "the last is cleared (no arguments)",
    .parse = mru_parse,
    .state_bytes = mru_state_bytes,
    .init = mru_init,
    .on_hit = mru_touch,
    .on_fill = mru_touch,
    .victim = mru_victim,
    .on_invalidate = mru_invalidate,
    .randomized = 0,
    .format_args = NULL,
};
