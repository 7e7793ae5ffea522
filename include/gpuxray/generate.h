/* generate.h - random valid hidden profiles (issue 3 "Proof"): the ground
 * truth of simulated GPUs that discovery must recover without seeing it.
 *
 * Notes:
 * - Seeded and reproducible: the same seed gives the same profile.
 * - Ranges: ways 2-32; lines 64 or 128 B; sectors 32 B, 64 B or the line;
 *   1-128 slices (non-powers of two through masks + a balanced table);
 *   1, 2 or 4 partitions; XOR masks of weight 2-10 over the observable line
 *   bits (up to bit 20, the 2 MiB page), some with unobservable bits above;
 *   power-of-two sets (XOR) or not (modulo); every registered policy
 *   candidate; uniform and near-far; noise from none to heavy; per-(SM,
 *   slice) skew from barely above the jitter to 60 cycles. Capacity stays in
 *   256 KiB..8 MiB so simulated discovery is fast.
 * - With translation, a tlb section from a stream of its own
 *   (generate_tlb.c: 1-3 levels, 8-8192 entries, sets x ways with a modulo
 *   or xor set index, 2-32 MiB per entry, sharing SM/TPC/GPC/GPU, latencies, PWC and neighbour PWC on or
 *   off, walks through the L2 or at a fixed cost).
 * - Every generated profile validates (kind "simulated").
 * - Two modes. GX_GEN_CLASSIC (the ranges above; a seed names the same
 *   profile as before the modes existed). GX_GEN_WIDE, the shapes real GPUs
 *   publish (generate_wide.c): slice and set masks of weight 2-12 over bits
 *   line..33 with bits above the page in most masks (published GPU hashes
 *   XOR 7-12 physical-address bits per output bit), ways 2-40, 1-160
 *   slices, power-of-two or modulo set counts (up to several hundred per
 *   slice, modulo over up to 6 bits more than the count needs), near-far
 *   with and without copies in the near partition, capacity 256 KiB-64 MiB.
 *   Within one 2 MiB page such a hash does not reach every (slice, set): its
 *   masks are independent over the whole address, not over the page. */
#ifndef GPUXRAY_GENERATE_H
#define GPUXRAY_GENERATE_H

#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef enum gx_generate_mode { GX_GEN_CLASSIC = 0, GX_GEN_WIDE = 1 } gx_generate_mode;

typedef struct gx_generate_opts {
    uint64_t min_capacity_bytes; /* default 256 KiB */
    uint64_t max_capacity_bytes; /* default 8 MiB */
    uint32_t max_slices;         /* default 128 */
    int unobservable_bits;       /* 1 (default): masks may use bits above the page */
    const char *policy;          /* NULL (default): uniform over the candidates */
    gx_generate_mode mode;       /* GX_GEN_CLASSIC (default) */
    int translation;             /* 1: draw a tlb section too (default 0: none; every other
                                    field is the same either way) */
} gx_generate_opts;

/* The classic mode's options. */
void gx_generate_opts_default(gx_generate_opts *o);
/* The widened mode's options (capacity up to 64 MiB, 160 slices). */
void gx_generate_opts_wide(gx_generate_opts *o);
/* "classic" or "wide" -> mode; -1 for anything else. */
int gx_generate_mode_parse(const char *s);
/* A new profile (caller frees) or NULL (out of memory / no valid profile). */
gx_profile *gx_generate_profile(uint64_t seed, const gx_generate_opts *o);
/* The same with an error message. */
int gx_generate(uint64_t seed, const gx_generate_opts *o, gx_profile **out, gx_msg *msg);

#endif
