/* smem_curve.c - raw shared-memory timings through the public target API
 * (smem_probe), as CSV: the cost-versus-stride curve of 32-, 64- and 128-bit
 * warp accesses, the k-way conflict sweep and broadcast. The committed H200
 * data (data/nvidia-h200/smem/curve.csv) comes from it, and
 * tests/test_h200_smem.c compares it with the model of the measured
 * profile.
 *
 * usage: smem_curve [--target T] [--reps R] [--repeats N] [-o F.csv]
 *
 * Rows: width,stride,lanes,cycles,cycles_r,spread: lane i < lanes reads
 * offset i * stride with `width`-byte loads (stride 0: every lane on one
 * word); cycles_r = median per-access cost of `repeats` calls of `reps`
 * dependent accesses (spread = their MAD x 1.4826); cycles = the
 * per-access cost by the difference of 4 x reps and reps (nanoBench: the
 * clock pair's overhead cancels), what the model's cycles predict. Rows
 * with lanes < 32 are the k-way sweep (stride 2048: one bank). Exit: 0 ok,
 * 2 bad usage, 3 no target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "gpuxray/target.h"

#define MAX_REPEATS 64
#define WARM_CALLS 32

/* Median per-access cycles of `repeats` calls of reps accesses. */
static int median_of(gx_target *t, const gx_smem_probe_req *r, int repeats, double *med,
                     double *spread)
{
    double v[MAX_REPEATS];
    gx_msg m;
    for (int i = 0; i < repeats; i++)
        if (gx_target_smem_probe(t, r, &v[i], &m) != GX_OK) {
            fprintf(stderr, "smem_curve: %s\n", m.text);
            return -1;
        }
    *med = gx_median(v, (size_t)repeats);
    if (spread)
        *spread = 1.4826 * gx_mad(v, (size_t)repeats);
    return 0;
}

/* One row: the per-access cost by the difference of 4R and R reps (the
 * clock pair's overhead cancels), and the raw per-access cost at R reps. */
static int point(gx_target *t, FILE *f, uint32_t width, uint32_t stride, uint32_t lanes,
                 uint32_t reps, int repeats)
{
    gx_smem_probe_req r;
    memset(&r, 0, sizeof r);
    for (uint32_t i = 0; i < GX_SMEM_PROBE_LANES; i++)
        r.lane_offsets[i] = i * stride;
    r.active = lanes >= 32 ? UINT32_MAX : (1u << lanes) - 1u;
    r.width_bytes = width;
    r.reps = reps;
    double m1 = 0, m4 = 0, spread = 0;
    if (median_of(t, &r, repeats, &m1, &spread) != 0)
        return -1;
    r.reps = 4 * reps;
    if (median_of(t, &r, repeats, &m4, NULL) != 0)
        return -1;
    fprintf(f, "%u,%u,%u,%.3f,%.3f,%.3f\n", width, stride, lanes, (4.0 * m4 - m1) / 3.0, m1,
            spread);
    return 0;
}

static int run(gx_target *t, FILE *f, uint32_t reps, int repeats)
{
    int rc = 0;
    for (int i = 0; i < WARM_CALLS && rc == 0; i++) {
        gx_smem_probe_req r;
        memset(&r, 0, sizeof r);
        r.active = 1;
        r.width_bytes = 4;
        r.reps = reps;
        double v;
        rc = gx_target_smem_probe(t, &r, &v, NULL) == GX_OK ? 0 : -1;
    }
    fprintf(f, "width,stride,lanes,cycles,cycles_r,spread\n");
    for (uint32_t s = 0; s <= 256 && rc == 0; s += 4)
        rc = point(t, f, 4, s, 32, reps, repeats);
    for (uint32_t s = 512; s <= 2048 && rc == 0; s *= 2)
        rc = point(t, f, 4, s, 32, reps, repeats);
    for (uint32_t w = 8; w <= 16; w *= 2)
        for (uint32_t s = 0; s <= 256 && rc == 0; s += w)
            rc = point(t, f, w, s, 32, reps, repeats);
    for (uint32_t k = 1; k <= 32 && rc == 0; k++)
        rc = point(t, f, 4, 2048, k, reps, repeats);
    for (uint32_t w = 8; w <= 16 && rc == 0; w *= 2)
        rc = point(t, f, w, 0, 1, reps, repeats);
    return rc;
}

int main(int argc, char **argv)
{
    const char *target = "cuda", *out = NULL;
    unsigned long reps = 64, repeats = 9;
    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (v && (!strcmp(argv[i], "--reps") || !strcmp(argv[i], "--repeats")) && *v == '-')
            v = NULL; /* strtoul would wrap a negative number */
        if (strcmp(argv[i], "--target") == 0 && v)
            target = v;
        else if (strcmp(argv[i], "-o") == 0 && v)
            out = v;
        else if (strcmp(argv[i], "--reps") == 0 && v && (reps = strtoul(v, &end, 10), !*end))
            ;
        else if (strcmp(argv[i], "--repeats") == 0 && v && (repeats = strtoul(v, &end, 10), !*end))
            ;
        else {
            fprintf(stderr, "usage: smem_curve [--target T] [--reps R] [--repeats N] [-o F.csv]\n");
            return 2;
        }
    }
    if (reps == 0 || reps > GX_SMEM_PROBE_MAX_REPS / 4 || repeats == 0 || repeats > MAX_REPEATS) {
        fprintf(stderr, "smem_curve: --reps 1..%u, --repeats 1..%d\n", GX_SMEM_PROBE_MAX_REPS / 4,
                MAX_REPEATS);
        return 2;
    }
    gx_target *t = NULL;
    gx_msg m;
    if (gx_target_open(target, 1, &t, &m) != GX_OK) {
        fprintf(stderr, "smem_curve: %s\n", m.text);
        return 3;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "smem_curve: cannot write %s\n", out);
        gx_target_close(t);
        return 2;
    }
    int rc = run(t, f, (uint32_t)reps, (int)repeats);
    if (out)
        fclose(f);
    gx_target_close(t);
    return rc == 0 ? 0 : 3;
}
