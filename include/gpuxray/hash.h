/* hash.h - evaluation of index functions (Contract 1 meaning): output bit i
 * of an index = parity(PA & masks[i]); a table maps the bits to a slice id;
 * a modulo reduces the bits-value. Shared by the model, discovery (to check
 * its own hypotheses) and compare. Pure functions, no state. */
#ifndef GPUXRAY_HASH_H
#define GPUXRAY_HASH_H

#include <stdint.h>

#include "gpuxray/profile.h"

static inline uint32_t gx_parity64(uint64_t x)
{
    return (uint32_t)__builtin_parityll(x);
}

/* The packed parity bits (bit i = parity(pa & masks[i])). */
static inline uint64_t gx_hash_bits(const gx_hash_fn *h, uint64_t pa)
{
    uint64_t v = 0;
    for (int i = 0; i < h->n_masks; i++)
        v |= (uint64_t)gx_parity64(pa & h->masks[i]) << i;
    return v;
}

/* The index the function produces: table[bits], bits mod modulo, or bits. */
static inline uint64_t gx_hash_eval(const gx_hash_fn *h, uint64_t pa)
{
    uint64_t v = gx_hash_bits(h, pa);
    if (h->table)
        return h->table[v];
    if (h->modulo)
        return v % h->modulo;
    return v;
}

/* Number of distinct outputs (table maximum + 1, modulo, or 2^n_masks). */
uint64_t gx_hash_range(const gx_hash_fn *h);

#endif
