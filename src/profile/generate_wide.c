/* generate_wide.c - the generator's widened mode: hidden profiles shaped like
 * the L2s real GPUs publish, not like the classic mode's (generate.h).
 *
 * Notes:
 * - Hashes. Every slice and set output bit is the parity of 2-12 address
 *   bits drawn from line..33 (Fractional GPUs, RTAS 2019: a GTX 1070's set
 *   bits XOR 7-12 physical-address bits in 7..32). A mask takes at least
 *   one bit above the 2 MiB page with probability WIDE_HIGH_SHARE (most
 *   published masks do). All masks, slice and set together, are linearly
 *   independent over GF(2) over the WHOLE range line..33, so every (slice,
 *   set) is reachable somewhere in the address space; within one page they
 *   need not be (an H200-sized L2 has more (slice, set) pairs than a page
 *   has lines).
 * - Modulo set indexes: set = value mod sets, the value made of
 *   ceil(log2(sets)) + 2..WIDE_MOD_EXTRA_MAX bits, each a mask of weight 1-3
 *   (more bits than the count needs keep the residues near uniform).
 * - Sets per slice follow from the capacity (log-uniform in the options'
 *   range) and the shape: power-of-two counts (XOR index) half of the time,
 *   otherwise any count >= 5 that is not a power of two.
 * - Near-far: 2 or 4 partitions; copies of far lines in the near partition
 *   with probability WIDE_COPY_SHARE (then victims go to the far partition
 *   half of the time). Without copies a line lives in its home partition
 *   only: one SM sees one level (the whole capacity) at the mean of the near
 *   and far latencies, which is what the profile's levels then say.
 * - Ways 2-40 (Accel-Sim's H100 configuration uses 40), 1-160 slices,
 *   lines of 64 or 128 B, sectors of 32 B, half a line or the whole line. */
#include <math.h>

#include "generate_internal.h"
#include "gpuxray/bits.h"

#define WIDE_MAX_WAYS 40
#define WIDE_MIN_WEIGHT 2
#define WIDE_MAX_WEIGHT 12
#define WIDE_HIGH_SHARE 0.8      /* masks with a bit above the page */
#define WIDE_NEAR_FAR_SHARE 0.4  /* as the classic mode */
#define WIDE_COPY_SHARE 0.6      /* near-far profiles that copy far lines to near */
#define WIDE_MODULO_SHARE 0.5    /* set counts that are not powers of two */
#define WIDE_MOD_EXTRA_MAX 6     /* extra value bits of a modulo index */
#define WIDE_MIN_SETS 4          /* below this a "set index" is barely one */

static void wide_slices(gx_rng *r, const gx_generate_opts *o, shape *s)
{
    uint32_t maxs = o->max_slices ? o->max_slices : 160;
    s->topo = GX_TOPO_UNIFORM;
    s->partitions = 1;
    if (gx_rng_uniform(r) < WIDE_NEAR_FAR_SHARE && maxs >= 2) {
        s->topo = GX_TOPO_NEAR_FAR;
        s->partitions = gx_rng_uniform(r) < 0.7 || maxs < 4 ? 2 : 4;
        s->copy_to_near = gx_rng_uniform(r) < WIDE_COPY_SHARE;
        s->victims_to_far = s->copy_to_near && gx_rng_uniform(r) < 0.5;
    }
    gx_gen_slice_count(r, maxs, s);
}

int gx_gen_wide_shape(gx_rng *r, const gx_generate_opts *o, shape *s)
{
    memset(s, 0, sizeof *s);
    s->line = gx_rng_uniform(r) < 0.5 ? 64 : 128;
    uint32_t sec_opts[3] = {32, s->line / 2, s->line};
    s->sector = sec_opts[gx_rng_below(r, s->line > 64 ? 3 : 2) + (s->line > 64 ? 0 : 1)];
    s->ways = (uint32_t)urange(r, 2, WIDE_MAX_WAYS);
    wide_slices(r, o, s);
    const int line_bits = gx_log2_ceil_u64(s->line);
    const int avail = HIGH_HI - line_bits + 1; /* address bits the masks may use */
    double lo = log((double)o->min_capacity_bytes), hi = log((double)o->max_capacity_bytes);
    double sets_f = exp(drange(r, lo, hi)) / ((double)s->slices * s->ways * s->line);
    s->modulo = gx_rng_uniform(r) < WIDE_MODULO_SHARE;
    if (s->modulo) {
        uint64_t sets = (uint64_t)llround(sets_f);
        if (sets < 5)
            sets = 5;
        if (gx_is_pow2_u64(sets))
            sets += urange(r, 1, sets / 4 > 1 ? sets / 4 : 1);
        s->sets = (uint32_t)sets;
        s->n_set = gx_log2_ceil_u64(sets) + (int)urange(r, 2, WIDE_MOD_EXTRA_MAX);
    } else {
        int k = (int)lround(log2(sets_f > 1 ? sets_f : 1));
        s->sets = (uint32_t)1 << (k < 2 ? 2 : k);
        s->n_set = k < 2 ? 2 : k;
    }
    if (gx_is_pow2_u64(s->slices))
        s->k_slice = gx_log2_ceil_u64(s->slices);
    else
        s->k_slice = gx_log2_ceil_u64(4 * (uint64_t)s->slices);
    if (s->k_slice + s->n_set > avail - 1 || s->n_set > GX_MAX_MASKS ||
        s->k_slice > GX_MAX_MASKS || s->sets < WIDE_MIN_SETS)
        return 0;
    uint64_t cap = (uint64_t)s->slices * s->sets * s->ways * s->line;
    return cap >= o->min_capacity_bytes && cap <= o->max_capacity_bytes;
}

/* A mask of weight wmin..wmax over lo..HIGH_HI, independent of basis; with
 * a bit above the page with probability WIDE_HIGH_SHARE. 0 = failed. */
static uint64_t wide_mask(gx_rng *r, uint64_t basis[64], int lo, int wmin, int wmax)
{
    for (int tries = 0; tries < 200; tries++) {
        int w = (int)urange(r, (uint64_t)wmin, (uint64_t)wmax);
        uint64_t m;
        if (gx_rng_uniform(r) < WIDE_HIGH_SHARE) {
            int w_high = w > 1 ? (int)urange(r, 1, (uint64_t)(w - 1)) : 1;
            m = random_bits(r, HIGH_LO, HIGH_HI, w_high);
            if (w > w_high)
                m |= random_bits(r, lo, OBS_HI, w - w_high);
        } else {
            m = random_bits(r, lo, OBS_HI, w);
        }
        uint64_t copy[64];
        memcpy(copy, basis, sizeof copy);
        if (!basis_add(copy, m))
            continue;
        memcpy(basis, copy, sizeof copy);
        return m;
    }
    return 0;
}

int gx_gen_wide_hashes(gx_rng *r, const shape *s, gx_profile *p)
{
    uint64_t basis[64] = {0};
    const int line_bits = gx_log2_ceil_u64(s->line);
    gx_hash_fn *sh = &p->l2.slice_hash, *st = &p->l2.set_hash;
    sh->present = 1;
    sh->n_masks = s->k_slice;
    sh->obs_lo = line_bits;
    sh->obs_hi = OBS_HI;
    for (int i = 0; i < s->k_slice; i++)
        if (!(sh->masks[i] = wide_mask(r, basis, line_bits, WIDE_MIN_WEIGHT, WIDE_MAX_WEIGHT)))
            return 0;
    if (!gx_is_pow2_u64(s->slices) && gx_gen_slice_table(r, s->slices, s->k_slice, sh) != 0)
        return -1;
    st->present = 1;
    st->n_masks = s->n_set;
    st->modulo = s->modulo ? s->sets : 0;
    for (int i = 0; i < s->n_set; i++) {
        int wmin = s->modulo ? 1 : WIDE_MIN_WEIGHT, wmax = s->modulo ? 3 : WIDE_MAX_WEIGHT;
        if (!(st->masks[i] = wide_mask(r, basis, line_bits, wmin, wmax)))
            return 0;
    }
    return 1;
}

void gx_gen_wide_levels(const shape *s, gx_profile *p)
{
    if (s->topo != GX_TOPO_NEAR_FAR)
        return;
    p->l2.near_far.copy_to_near = s->copy_to_near;
    p->l2.near_far.victims_to_far = s->victims_to_far;
    if (s->copy_to_near)
        return;
    double near = p->l2.near_hit_cycles, far = p->l2.far_hit_cycles;
    p->l2.n_levels = 1;
    p->l2.levels[0].capacity_bytes = p->l2.capacity_bytes;
    p->l2.levels[0].latency_cycles =
        floor((near + (double)(s->partitions - 1) * far) / (double)s->partitions);
}
