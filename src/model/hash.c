/* hash.c - index functions of Contract 1 (see hash.h): the out-of-line
 * helpers; evaluation itself is inline in hash.h (hot path).
 *
 * Notes: a table's range is its largest entry + 1; a modulo's range is the
 * modulo; plain XOR masks give 2^n_masks outputs. */
#include "gpuxray/hash.h"

uint64_t gx_hash_range(const gx_hash_fn *h)
{
    if (!h || !h->present)
        return 0;
    if (h->table) {
        uint64_t n = (uint64_t)1 << h->n_masks, mx = 0;
        for (uint64_t i = 0; i < n; i++)
            if (h->table[i] > mx)
                mx = h->table[i];
        return mx + 1;
    }
    if (h->modulo)
        return h->modulo;
    return (uint64_t)1 << h->n_masks;
}
