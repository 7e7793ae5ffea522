/* tlb_measure.c - the tlb stage's measurements: translation chases
 * (gx_target_xchase) reduced to one robust number, and the hit / miss /
 * unsure verdict of a chase against a level's latency.
 *
 * Notes:
 * - Statistic: per step the median over the timed rounds (a TLB miss of a
 *   cyclic chase repeats every round at the same step, an outlier or a
 *   background eviction does not), then the mean over the steps (uniform
 *   jitter averages out: thousands of samples put it well under a cycle).
 * - Rounds: odd, at least 3, enough for min_samples timed accesses, at
 *   most the primitive's limit. One warm round puts an LRU level into the
 *   steady state of a cyclic chase. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../infer.h"
#include "tlb_internal.h"

#define WARM_ROUNDS 1
#define MIN_ROUNDS 3
#define MAX_ROUNDS (GX_XCHASE_MAX_ROUNDS - 1) /* odd */
#define TEST_SAMPLES 4096u  /* a verdict's first try */
#define RETRIES 2           /* unsure: 4x, then 16x the samples */

void tlb_meter_init(tlb_meter *m, struct gx_infer *ctx, uint32_t sm, uint64_t granule)
{
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    m->t = ctx->t;
    m->sm = sm;
    m->granule = granule;
    m->noise = ctx->timer.have ? ctx->timer.noise : 0;
}

void tlb_meter_free(tlb_meter *m)
{
    free(m->buf);
    m->buf = NULL;
    m->cap = 0;
}

uint32_t tlb_max_steps(uint64_t stride)
{
    uint64_t n = GX_XCHASE_MAX_WINDOW_BYTES / stride;
    return n > GX_XCHASE_MAX_STEPS ? GX_XCHASE_MAX_STEPS : (uint32_t)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A chase reduced: the mean of the per-step medians, and how many steps
 * medians lie under `lo` and over `hi` (limits of the caller's). */
typedef struct tally {
    double mean;
    uint32_t below, above;
} tally;

static tally reduce(const double *c, uint32_t steps, uint32_t rounds, double lo, double hi)
{
    double sum = 0, col[MAX_ROUNDS];
    tally t = {0, 0, 0};
    for (uint32_t i = 0; i < steps; i++) {
        for (uint32_t r = 0; r < rounds; r++)
            col[r] = c[(size_t)r * steps + i];
        qsort(col, rounds, sizeof col[0], cmp_double);
        double med = col[rounds / 2];
        sum += med;
        t.below += med < lo;
        t.above += med > hi;
    }
    t.mean = sum / steps;
    return t;
}

static int run(tlb_meter *m, const gx_xchase_req *q, double lo, double hi, tally *t,
               gx_msg *msg)
{
    size_t need = (size_t)q->timed_rounds * q->steps;
    if (need > m->cap) {
        double *b = realloc(m->buf, need * sizeof *b);
        if (!b)
            return gx_fail(msg, GX_ENOMEM, "tlb: out of memory for %zu latencies", need);
        m->buf = b;
        m->cap = need;
    }
    int rc = gx_target_xchase(m->t, q, m->buf, msg);
    m->chases++;
    if (rc == GX_OK)
        *t = reduce(m->buf, q->steps, q->timed_rounds, lo, hi);
    if (rc == GX_OK && infer_recording(m->ctx))
        infer_data_append(m->ctx, "tlb", "chases",
                          json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "stride_bytes",
                                    (json_int_t)q->stride_bytes, "steps", (json_int_t)q->steps,
                                    "rounds", (json_int_t)q->timed_rounds, "thrash_sm",
                                    (json_int_t)(q->thrash_steps ? q->thrash_sm : 0),
                                    "thrash_steps", (json_int_t)q->thrash_steps, "cycles",
                                    infer_json_num(t->mean)));
    return rc;
}

static uint32_t rounds_for(uint32_t steps, uint32_t min_samples)
{
    uint32_t r = (min_samples + steps - 1) / steps;
    if (r < MIN_ROUNDS)
        r = MIN_ROUNDS;
    if (r > MAX_ROUNDS)
        r = MAX_ROUNDS;
    return r | 1u;
}

static gx_xchase_req plain_chase(const tlb_meter *m, uint64_t stride, uint32_t steps,
                                 uint32_t min_samples)
{
    gx_xchase_req q = {stride, steps, WARM_ROUNDS, rounds_for(steps, min_samples), m->sm, 0, 0, 0};
    return q;
}

int tlb_mean(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t min_samples, double *mean,
             gx_msg *msg)
{
    gx_xchase_req q = plain_chase(m, stride, steps, min_samples);
    tally t = {NAN, 0, 0};
    int rc = run(m, &q, 0, INFINITY, &t, msg);
    if (rc == GX_OK)
        *mean = t.mean;
    return rc;
}

int tlb_hit_fraction(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t min_samples,
                     double level_cycles, double *frac, gx_msg *msg)
{
    gx_xchase_req q = plain_chase(m, stride, steps, min_samples);
    tally t = {NAN, 0, 0};
    int rc = run(m, &q, level_cycles + TLB_HIT_CYCLES, INFINITY, &t, msg);
    *frac = rc == GX_OK ? (double)t.below / steps : NAN;
    return rc;
}

int tlb_miss_count(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t rounds,
                   double threshold, uint32_t *miss, gx_msg *msg)
{
    gx_xchase_req q = plain_chase(m, stride, steps, 0);
    q.timed_rounds = (rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds) | 1u;
    tally t = {NAN, 0, 0};
    int rc = run(m, &q, 0, threshold, &t, msg);
    *miss = rc == GX_OK ? t.above : 0;
    return rc;
}

int tlb_mean_thrash(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t thrash_sm,
                    uint32_t thrash_steps, double *mean, gx_msg *msg)
{
    gx_xchase_req q = {stride,      steps,        WARM_ROUNDS, rounds_for(steps, TEST_SAMPLES),
                       m->sm,       thrash_steps, thrash_sm,   stride};
    tally t = {NAN, 0, 0};
    int rc = run(m, &q, 0, INFINITY, &t, msg);
    if (rc == GX_OK)
        *mean = t.mean;
    return rc;
}

/* Hit: the mean within TLB_HIT_CYCLES of the level and (almost) no slow
 * step; miss: the mean TLB_MISS_CYCLES above it, or at least
 * TLB_SLOW_FRACTION of the steps slow (over the level by TLB_SLOW_CYCLES).
 * The second form sees a level missed in part by steps that cost much
 * more (a walk) while the others hit nearer (the neighbours one walk's
 * fetch installs): a mix whose mean can lie at or under the level. */
int tlb_classify(tlb_meter *m, uint64_t stride, uint32_t steps, double level_cycles,
                 int *verdict, gx_msg *msg)
{
    uint32_t samples = TEST_SAMPLES;
    *verdict = TLB_UNSURE;
    for (int attempt = 0; attempt <= RETRIES; attempt++, samples *= 4) {
        gx_xchase_req q = plain_chase(m, stride, steps, samples);
        tally t = {NAN, 0, 0};
        int rc = run(m, &q, 0, level_cycles + TLB_SLOW_CYCLES, &t, msg);
        if (rc != GX_OK)
            return rc;
        double slow = (double)t.above / steps;
        if (t.mean > level_cycles + TLB_MISS_CYCLES || slow >= TLB_SLOW_FRACTION) {
            *verdict = TLB_MISS;
            return GX_OK;
        }
        if (t.mean < level_cycles + TLB_HIT_CYCLES && slow < TLB_SLOW_FRACTION / 4) {
            *verdict = TLB_HIT;
            return GX_OK;
        }
    }
    return GX_OK;
}
