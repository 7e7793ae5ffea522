/* dram.h - the DRAM behind the L2: the latency of a sector the L2 misses.
 *
 * Notes: today's model is a constant latency (memory.dram_latency_cycles),
 * the same for every address, op and SM; no banks, rows or bandwidth. The
 * L2 reads the latency once when the memory system is assembled (a
 * constant-latency DRAM needs no call per access); a DRAM model with state
 * would be called at each miss from the same place (src/model/memsys.c). */
#ifndef GPUXRAY_DRAM_H
#define GPUXRAY_DRAM_H

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef struct gx_dram gx_dram;

/* Requires memory.dram_latency_cycles (finite, >= 0). */
int gx_dram_new(const gx_profile *p, gx_dram **out, gx_msg *msg);
void gx_dram_free(gx_dram *d);
/* Cycles a sector read from DRAM costs (before the on-chip skew and noise
 * the L2 adds on its way back). */
double gx_dram_latency_cycles(const gx_dram *d);

#endif
