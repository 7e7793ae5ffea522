/* export.h - a profile as configuration for another simulator:
 * GPGPU-Sim / Accel-Sim (gpgpusim.config option lines) and gem5's GPU
 * model (apu_se.py options and the translation SimObjects' parameters).
 *
 * Every line carries a comment naming its source (the profile field, or
 * why a value the other tool needs is a convention rather than a
 * measurement). A field the profile lacks is left out with a comment,
 * never invented. docs/report.md documents the mapping and what each
 * flattening loses. */
#ifndef GPUXRAY_EXPORT_H
#define GPUXRAY_EXPORT_H

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef enum gx_export_kind { GX_EXPORT_ACCELSIM = 0, GX_EXPORT_GEM5 = 1 } gx_export_kind;

typedef struct gx_export_opts {
    /* Accel-Sim: the configuration's core clock (MHz) when it differs from
     * the profile's SM clock: latencies are rescaled to it; 0 = the SM clock. */
    double core_mhz;
    /* Accel-Sim: the configuration's -gpgpu_l1_latency (cycles), which
     * -gpgpu_l2_rop_latency is counted after (Accel-Sim's tuner: L2 hit - L1
     * hit). 0 = not given: the rop line is left out with the formula. */
    double l1_latency_cycles;
} gx_export_opts;

int gx_export_kind_parse(const char *s, gx_export_kind *out);
/* The configuration text (caller frees). */
int gx_export(const gx_profile *p, gx_export_kind kind, const gx_export_opts *o, char **text,
              gx_msg *msg);

#endif
