/* generate_internal.h - private to the generator (generate.c,
 * generate_tlb.c). */
#ifndef GX_GENERATE_INTERNAL_H
#define GX_GENERATE_INTERNAL_H

#include <stdint.h>

#include "gpuxray/profile.h"

/* Draw p->tlb (present) from the seed's translation stream; p's device and
 * l2 are already drawn. 0 when no hierarchy fits (never for valid ranges). */
int gx_generate_tlb(uint64_t seed, gx_profile *p);

#endif
