/* fifo.c - FIFO (round-robin in fill order): evict the way filled longest
 * ago; hits change nothing.
 *
 * Notes:
 * - Same state as lru.c (a recency rank per way, here the fill order), and
 *   the same helpers; only on_hit differs (a no-op).
 * - An invalidated way becomes the oldest, so it is refilled first. */
#include <stddef.h>
#include <stdint.h>

#include "policy_internal.h"

static void fifo_hit(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)st;
    (void)ways;
    (void)way;
    (void)p;
}

static int fifo_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("fifo", args, msg);
}

const gx_policy_ops gx_policy_fifo_ops = {
    .family = "fifo",
    .help = "fifo: first-in first-out, hits do not refresh (no arguments)",
    .parse = fifo_parse,
    .state_bytes = gx_rank_state_bytes,
    .init = gx_rank_init,
    .on_hit = fifo_hit,
    .on_fill = gx_rank_touch,
    .victim = gx_rank_victim,
    .on_invalidate = gx_rank_invalidate,
    .randomized = 0,
    .format_args = NULL,
};
