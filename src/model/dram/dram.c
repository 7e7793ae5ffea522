/* dram.c - the DRAM behind the L2 (see dram.h).
 *
 * Models: a constant latency per sector (memory.dram_latency_cycles).
 *
 * Notes: DRAM access counts live in the L2's statistics (dram_accesses),
 * where every miss is already counted once; this module holds the timing. */
#include "gpuxray/dram.h"

#include <math.h>
#include <stdlib.h>

struct gx_dram {
    double latency_cycles;
};

int gx_dram_new(const gx_profile *p, gx_dram **out, gx_msg *msg)
{
    *out = NULL;
    if (!isfinite(p->memory.dram_latency_cycles) || p->memory.dram_latency_cycles < 0)
        return gx_fail(msg, GX_ECONFIG, "memory.dram_latency_cycles: required by the model");
    gx_dram *d = calloc(1, sizeof *d);
    if (!d)
        return gx_fail(msg, GX_ENOMEM, "dram: out of memory");
    d->latency_cycles = p->memory.dram_latency_cycles;
    *out = d;
    return GX_OK;
}

void gx_dram_free(gx_dram *d)
{
    free(d);
}

double gx_dram_latency_cycles(const gx_dram *d)
{
    return d->latency_cycles;
}
