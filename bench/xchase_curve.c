/* xchase_curve.c - raw translation-chase curves through the public target
 * API (gx_target_xchase), as CSV: for each stride and chain length the
 * distribution of the per-step medians over the timed rounds (a TLB miss
 * of a cyclic chase repeats every round at the same step, an outlier does
 * not). The committed H200 TLB data (data/nvidia-h200/tlb/) is read with
 * it: a mean alone cannot tell a level missed by every page (a step of a
 * few cycles on each) from one missed by a few pages at a walk's cost.
 *
 * usage: xchase_curve [--target T] [--sm N] [--samples S] [--steps N,...]
 *                     [--thrash-sm B --thrash-steps K --thrash-stride MIB]
 *                     STRIDE_MIB [STRIDE_MIB ...]
 *   STRIDE_MIB: the chase's stride in MiB (an integer; a multiple of 4 KiB
 *   is all the primitive needs, MiB is what the TLB questions ask).
 *   --steps: chain lengths (default: 2 .. 32768 on a sqrt(2) grid, as the
 *   tlb stage's curve), clipped to what the window allows.
 *   --samples: timed accesses per chase at least (default 2048).
 *   --thrash-*: a second thread on SM B chases K pages MIB MiB apart in a
 *   window of its own during every chase (the SM x SM interference test of
 *   the tlb stage's sharing: a level B shares misses more).
 *
 * Rows: stride_bytes,steps,rounds,mean,min,q10,q50,q90,max: mean and
 * quantiles of the per-step medians; with a thrashing thread three more
 * columns, thrash_sm,thrash_steps,thrash_stride_bytes. Exit: 0 ok, 2 bad usage, 3 no target. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/parse.h"
#include "gpuxray/target.h"

#define MAX_STEP_LIST 64

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A non-negative integer argument (the project's strict parser): 0 or -1. */
static int u64_arg(const char *s, uint64_t *out)
{
    gx_msg m;
    return gx_parse_u64(NULL, s, 0, UINT64_MAX, GX_NUM_PLAIN, out, &m) == GX_OK ? 0 : -1;
}

static int parse_steps(char *list, uint32_t *steps, int *n)
{
    *n = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t v;
        if (*n == MAX_STEP_LIST || u64_arg(tok, &v) || v < 1 || v > GX_XCHASE_MAX_STEPS)
            return -1;
        steps[(*n)++] = (uint32_t)v;
    }
    return *n ? 0 : -1;
}

static void default_steps(uint32_t *steps, int *n)
{
    uint32_t prev = 0;
    *n = 0;
    for (int k = 2; k <= 30 && *n < MAX_STEP_LIST; k++) {
        uint32_t v = (uint32_t)lround(pow(2.0, k / 2.0));
        if (v != prev)
            steps[(*n)++] = prev = v;
    }
}

/* One chase: per-step medians over the rounds, then their distribution. */
typedef struct thrash {
    uint64_t sm, steps, stride; /* steps 0: none */
} thrash;

static int row(gx_target *t, uint64_t stride, uint32_t steps, uint32_t sm, uint32_t samples,
               const thrash *th, double *buf, double *med)
{
    uint32_t rounds = (samples + steps - 1) / steps;
    if (rounds < 3)
        rounds = 3;
    if (rounds > GX_XCHASE_MAX_ROUNDS - 1)
        rounds = GX_XCHASE_MAX_ROUNDS - 1;
    rounds |= 1u;
    gx_xchase_req q = {stride, steps, 1, rounds, sm, (uint32_t)th->steps, (uint32_t)th->sm,
                       th->stride};
    gx_msg m;
    if (gx_target_xchase(t, &q, buf, &m) != GX_OK) {
        fprintf(stderr, "xchase_curve: %s\n", m.text);
        return -1;
    }
    double col[GX_XCHASE_MAX_ROUNDS], sum = 0;
    for (uint32_t i = 0; i < steps; i++) {
        for (uint32_t r = 0; r < rounds; r++)
            col[r] = buf[(size_t)r * steps + i];
        qsort(col, rounds, sizeof col[0], cmp_double);
        med[i] = col[rounds / 2];
        sum += med[i];
    }
    qsort(med, steps, sizeof med[0], cmp_double);
    printf("%llu,%u,%u,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f", (unsigned long long)stride, steps,
           rounds, sum / steps, med[0], med[steps / 10], med[steps / 2], med[steps * 9 / 10],
           med[steps - 1]);
    if (th->steps)
        printf(",%llu,%llu,%llu", (unsigned long long)th->sm, (unsigned long long)th->steps,
               (unsigned long long)th->stride);
    printf("\n");
    fflush(stdout);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: xchase_curve [--target T] [--sm N] [--samples S] [--steps N,...] "
                    "[--thrash-sm B --thrash-steps K --thrash-stride MIB] "
                    "STRIDE_MIB [STRIDE_MIB ...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *spec = NULL;
    uint64_t sm = 0, samples = 2048, th_mib = 0;
    thrash th = {0, 0, 0};
    int th_sm_given = 0;
    uint32_t steps[MAX_STEP_LIST];
    int n_steps = 0, first = argc;
    default_steps(steps, &n_steps);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--target") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "--sm") && i + 1 < argc) {
            if (u64_arg(argv[++i], &sm) || sm > UINT32_MAX)
                return usage();
        } else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            if (u64_arg(argv[++i], &samples) || !samples || samples > (1u << 24))
                return usage();
        } else if (!strcmp(argv[i], "--thrash-sm") && i + 1 < argc) {
            if (u64_arg(argv[++i], &th.sm) || th.sm > UINT32_MAX)
                return usage();
            th_sm_given = 1;
        } else if (!strcmp(argv[i], "--thrash-steps") && i + 1 < argc) {
            if (u64_arg(argv[++i], &th.steps) || !th.steps || th.steps > GX_XCHASE_MAX_STEPS)
                return usage();
        } else if (!strcmp(argv[i], "--thrash-stride") && i + 1 < argc) {
            if (u64_arg(argv[++i], &th_mib) || !th_mib || th_mib > (1u << 20))
                return usage();
        } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            if (parse_steps(argv[++i], steps, &n_steps))
                return usage();
        } else if (argv[i][0] == '-') {
            return usage();
        } else {
            first = i;
            break;
        }
    }
    if (first == argc)
        return usage();
    /* a thrashing thread needs all three, on another SM, its chain in the window */
    if ((th_sm_given || th.steps || th_mib) &&
        (!th_sm_given || !th.steps || !th_mib || th.sm == sm ||
         th.steps * (th_mib << 20) > GX_XCHASE_MAX_WINDOW_BYTES))
        return usage();
    th.stride = th_mib << 20;
    uint64_t strides[64];
    int n_strides = 0;
    for (int i = first; i < argc; i++) {
        uint64_t mib;
        if (n_strides == 64 || u64_arg(argv[i], &mib) || !mib || mib > (1u << 20))
            return usage();
        strides[n_strides++] = mib << 20;
    }
    gx_target *t;
    gx_msg m;
    if (gx_target_open(spec, 1, &t, &m) != GX_OK) {
        fprintf(stderr, "xchase_curve: %s\n", m.text);
        return 3;
    }
    size_t cap = (size_t)GX_XCHASE_MAX_ROUNDS * GX_XCHASE_MAX_STEPS;
    double *buf = malloc(cap * sizeof *buf), *med = malloc(GX_XCHASE_MAX_STEPS * sizeof *med);
    int rc = buf && med ? 0 : 1;
    if (rc)
        fprintf(stderr, "xchase_curve: out of memory\n");
    printf("stride_bytes,steps,rounds,mean,min,q10,q50,q90,max\n");
    for (int s = 0; !rc && s < n_strides; s++)
        for (int k = 0; !rc && k < n_steps; k++) {
            if ((uint64_t)steps[k] * strides[s] > GX_XCHASE_MAX_WINDOW_BYTES)
                break;
            rc = row(t, strides[s], steps[k], (uint32_t)sm, (uint32_t)samples, &th, buf, med);
        }
    free(buf);
    free(med);
    gx_target_close(t);
    return rc ? 1 : 0;
}
