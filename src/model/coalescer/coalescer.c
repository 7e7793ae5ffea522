/* coalescer.c - predictors and counts of the translation coalescer (see
 * coalescer.h); the grouping of one warp instruction's requests is done
 * by the memory system (memsys.c) with these answers.
 *
 * Models: one size counter and one neighbour counter per SM (gem5's
 * coalescer sits per compute unit). */
#include "gpuxray/coalescer.h"

#include <math.h>
#include <stdlib.h>

#include "gpuxray/bits.h"

#define MAX_PREDICTOR_BITS 16

struct gx_coalescer {
    double window;
    uint64_t granule_max, small, large;
    uint32_t size_max, size_half, nb_max, nb_half, line_pages;
    uint32_t *size_ctr, *nb_ctr; /* per SM */
    uint32_t sms;
    gx_coalescer_stats st;
};

static int check(const gx_tlb_cfg *t, gx_msg *msg)
{
    const char *f = NULL;
    if (t->coalescer.size_predictor_bits < 1 ||
        t->coalescer.size_predictor_bits > MAX_PREDICTOR_BITS)
        f = "size_predictor_bits";
    else if (t->coalescer.neighbour_predictor_bits < 1 ||
             t->coalescer.neighbour_predictor_bits > MAX_PREDICTOR_BITS)
        f = "neighbour_predictor_bits";
    if (f)
        return gx_fail(msg, GX_ECONFIG, "tlb.coalescer.%s: not in 1..%d", f, MAX_PREDICTOR_BITS);
    if (!gx_is_pow2_u64(t->coalescer.predict_small_bytes) ||
        !gx_is_pow2_u64(t->coalescer.predict_large_bytes) ||
        t->coalescer.predict_small_bytes >= t->coalescer.predict_large_bytes)
        return gx_fail(msg, GX_ECONFIG,
                       "tlb.coalescer.predict_small_bytes / predict_large_bytes: powers of two, "
                       "small below large");
    if (t->coalescer.max_granule_bytes && !gx_is_pow2_u64(t->coalescer.max_granule_bytes))
        return gx_fail(msg, GX_ECONFIG, "tlb.coalescer.max_granule_bytes: not a power of two");
    if (!t->coalescer.line_group_pages || !gx_is_pow2_u64(t->coalescer.line_group_pages))
        return gx_fail(msg, GX_ECONFIG, "tlb.coalescer.line_group_pages: not a power of two");
    double w = t->coalescer.window_cycles;
    if (!isnan(w) && !(w >= 0 && isfinite(w)))
        return gx_fail(msg, GX_ECONFIG, "tlb.coalescer.window_cycles: %g is not >= 0", w);
    return GX_OK;
}

int gx_coalescer_new(const gx_tlb_cfg *t, uint32_t sm_count, gx_coalescer **out, gx_msg *msg)
{
    *out = NULL;
    int rc = check(t, msg);
    if (rc != GX_OK)
        return rc;
    gx_coalescer *c = calloc(1, sizeof *c);
    if (!c)
        return gx_fail(msg, GX_ENOMEM, "coalescer: out of memory");
    c->sms = sm_count ? sm_count : 1;
    c->size_ctr = calloc(c->sms, sizeof *c->size_ctr);
    c->nb_ctr = calloc(c->sms, sizeof *c->nb_ctr);
    if (!c->size_ctr || !c->nb_ctr) {
        gx_coalescer_free(c);
        return gx_fail(msg, GX_ENOMEM, "coalescer: out of memory");
    }
    c->window = isnan(t->coalescer.window_cycles) ? 0 : t->coalescer.window_cycles;
    c->granule_max = t->coalescer.max_granule_bytes ? t->coalescer.max_granule_bytes : UINT64_MAX;
    c->small = t->coalescer.predict_small_bytes;
    c->large = t->coalescer.predict_large_bytes;
    c->size_max = (1u << t->coalescer.size_predictor_bits) - 1;
    c->size_half = 1u << (t->coalescer.size_predictor_bits - 1);
    c->nb_max = (1u << t->coalescer.neighbour_predictor_bits) - 1;
    c->nb_half = 1u << (t->coalescer.neighbour_predictor_bits - 1);
    c->line_pages = t->coalescer.line_group_pages;
    *out = c;
    return GX_OK;
}

void gx_coalescer_free(gx_coalescer *c)
{
    if (!c)
        return;
    free(c->size_ctr);
    free(c->nb_ctr);
    free(c);
}

double gx_coalescer_window(const gx_coalescer *c)
{
    return c->window;
}

uint64_t gx_coalescer_granule(const gx_coalescer *c, uint64_t page_bytes)
{
    return page_bytes < c->granule_max ? page_bytes : c->granule_max;
}

/* The SM's slot in the per-SM counters (a division only past sm_count). */
static inline uint32_t sm_slot(const gx_coalescer *c, uint32_t sm)
{
    return sm < c->sms ? sm : sm % c->sms;
}

static inline uint64_t predict_slot(const gx_coalescer *c, uint32_t k)
{
    return c->size_ctr[k] >= c->size_half ? c->large : c->small;
}

/* A saturating counter one step up (to max) or down (to 0). */
static inline void saturate_step(uint32_t *k, int up, uint32_t max)
{
    if (up) {
        if (*k < max)
            (*k)++;
    } else if (*k) {
        (*k)--;
    }
}

static inline int train_size_slot(gx_coalescer *c, uint32_t k, uint64_t predicted, uint64_t real)
{
    saturate_step(&c->size_ctr[k], real >= c->large, c->size_max);
    int miss = gx_coalescer_granule(c, predicted) != gx_coalescer_granule(c, real);
    c->st.size_predictions++;
    c->st.size_mispredictions += (uint64_t)miss;
    return miss;
}

uint64_t gx_coalescer_predict(const gx_coalescer *c, uint32_t sm)
{
    return predict_slot(c, sm_slot(c, sm));
}

int gx_coalescer_train_size(gx_coalescer *c, uint32_t sm, uint64_t predicted, uint64_t real)
{
    return train_size_slot(c, sm_slot(c, sm), predicted, real);
}

uint32_t gx_coalescer_group_pages(const gx_coalescer *c, uint32_t sm)
{
    return c->nb_ctr[sm_slot(c, sm)] >= c->nb_half ? c->line_pages : 1;
}

void gx_coalescer_train_neighbour(gx_coalescer *c, uint32_t sm, int real_walk)
{
    saturate_step(&c->nb_ctr[sm_slot(c, sm)], real_walk, c->nb_max);
}

void gx_coalescer_count(gx_coalescer *c, uint64_t uncoalesced, uint64_t coalesced,
                        uint64_t widened)
{
    c->st.uncoalesced_accesses += uncoalesced;
    c->st.coalesced_accesses += coalesced;
    c->st.line_coalesce_decisions += widened;
}

void gx_coalescer_alone(gx_coalescer *c, uint32_t sm, int tlb_hit, int leaf_read, int fault,
                        uint64_t real)
{
    /* predict, train_neighbour, train_size and count with the SM's slot found once */
    const uint32_t k = sm_slot(c, sm);
    const uint64_t predicted = predict_slot(c, k);
    if (tlb_hit || leaf_read)
        saturate_step(&c->nb_ctr[k], !tlb_hit, c->nb_max);
    if (!fault)
        (void)train_size_slot(c, k, predicted, real);
    gx_coalescer_count(c, 1, 1, 0);
}

/* The counters trained as gx_coalescer_alone trains them on a TLB hit (the
 * neighbour counter down, the size counter towards the real size), the
 * counts summed in locals. */
void gx_coalescer_alone_hits(gx_coalescer *c, const uint32_t *sm, const uint64_t *real,
                             size_t n)
{
    /* the constants in locals (the counters' stores could alias them) */
    const uint32_t sms = c->sms, half = c->size_half, top = c->size_max;
    const uint64_t large = c->large, small = c->small, gmax = c->granule_max;
    uint32_t *const size_ctr = c->size_ctr, *const nb_ctr = c->nb_ctr;
    uint64_t missed = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = sm[i] < sms ? sm[i] : sm[i] % sms;
        uint32_t *const sz = &size_ctr[k], *const nb = &nb_ctr[k];
        const uint64_t predicted = *sz >= half ? large : small;
        if (*nb)
            (*nb)--;
        if (real[i] >= large) {
            if (*sz < top)
                (*sz)++;
        } else if (*sz) {
            (*sz)--;
        }
        /* gx_coalescer_granule of each */
        const uint64_t gp = predicted < gmax ? predicted : gmax;
        const uint64_t gr = real[i] < gmax ? real[i] : gmax;
        missed += (uint64_t)(gp != gr);
    }
    c->st.size_predictions += n;
    c->st.size_mispredictions += missed;
    gx_coalescer_count(c, n, n, 0);
}

void gx_coalescer_get_stats(const gx_coalescer *c, gx_coalescer_stats *s)
{
    *s = c->st;
}
