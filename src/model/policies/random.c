/* random.c - random replacement: the victim is a uniformly random way.
 *
 * Notes:
 * - No state (state_bytes 0); every choice comes from the caller's seeded
 *   rng, so a seed reproduces the run.
 * - Hits and fills change nothing. */
#include <stddef.h>
#include <stdint.h>

#include "policy_internal.h"

static size_t random_state_bytes(uint32_t ways, const gx_policy_params *p)
{
    (void)ways;
    (void)p;
    return 0;
}

static void random_init(void *st, uint32_t ways, const gx_policy_params *p)
{
    (void)st;
    (void)ways;
    (void)p;
}

static void random_touch(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)st;
    (void)ways;
    (void)way;
    (void)p;
}

static uint32_t random_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng)
{
    (void)st;
    (void)p;
    return (uint32_t)gx_rng_below(rng, ways);
}

static int random_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("random", args, msg);
}

const gx_policy_ops gx_policy_random_ops = {
    .family = "random",
    .help = "random: uniformly random victim (no arguments)",
    .parse = random_parse,
    .state_bytes = random_state_bytes,
    .init = random_init,
    .on_hit = random_touch,
    .on_fill = random_touch,
    .victim = random_victim,
    .on_invalidate = NULL,
    .randomized = 1,
    .format_args = NULL,
};
