/* compare_hash.c - index functions compared as partitions of sampled line
 * addresses (see compare.h for the rule).
 *
 * Notes:
 * - Disagreement = fraction of samples that do not follow the majority
 *   mapping in both directions (truth label -> found label and back) within
 *   their group; it is 0 exactly when the two labelings are related by a
 *   bijection in every group.
 * - Sampling uses the project rng with opts->seed, so a verdict is
 *   reproducible. Physical addresses are sampled below bit 48. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_internal.h"
#include "gpuxray/bits.h"
#include "gpuxray/hash.h"
#include "gpuxray/rng.h"

#define PA_BITS 48

/* ------------------------------------------------------ hash partitions */

typedef struct sample {
    uint64_t g, t, f;
    uint32_t idx;
} sample;

static int cmp_gtf(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    if (x->g != y->g)
        return x->g < y->g ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->f != y->f)
        return x->f < y->f ? -1 : 1;
    return 0;
}

static int cmp_gft(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    if (x->g != y->g)
        return x->g < y->g ? -1 : 1;
    if (x->f != y->f)
        return x->f < y->f ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return 0;
}

/* Mark, per run of equal (g, key1), the samples whose key2 is the run's
 * most frequent key2. Samples sorted by (g, key1, key2). by_t: key1 = t. */
static void mark_majority(const sample *s, size_t n, int by_t, uint8_t *ok)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        uint64_t k1 = by_t ? s[i].t : s[i].f;
        while (j < n && s[j].g == s[i].g && (by_t ? s[j].t : s[j].f) == k1)
            j++;
        /* [i, j) one (g, key1) run; find the longest sub-run of key2 */
        size_t best_a = i, best_len = 0, a = i;
        while (a < j) {
            size_t b = a;
            uint64_t k2 = by_t ? s[a].f : s[a].t;
            while (b < j && (by_t ? s[b].f : s[b].t) == k2)
                b++;
            if (b - a > best_len) {
                best_len = b - a;
                best_a = a;
            }
            a = b;
        }
        for (size_t q = i; q < j; q++)
            if (q < best_a || q >= best_a + best_len)
                ok[s[q].idx] = 0;
        i = j;
    }
}

static size_t disagreeing(sample *s, size_t n, uint8_t *ok)
{
    for (size_t i = 0; i < n; i++) {
        s[i].idx = (uint32_t)i;
        ok[i] = 1;
    }
    qsort(s, n, sizeof *s, cmp_gtf);
    mark_majority(s, n, 1, ok);
    qsort(s, n, sizeof *s, cmp_gft);
    mark_majority(s, n, 0, ok);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += ok[i] ? 0 : 1;
    return bad;
}

static uint64_t found_label(const gx_hash_fn *h, uint64_t bits)
{
    if (h->table)
        return h->table[bits];
    if (h->modulo)
        return bits % h->modulo;
    return bits;
}

/* Open-addressing map with generation stamps (no clearing per use). */
typedef struct gmap {
    uint64_t *key, *val;
    uint32_t *gen;
    size_t cap;
    uint32_t cur;
} gmap;

static int gmap_init(gmap *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n)
        m->cap <<= 1;
    m->key = malloc(m->cap * sizeof *m->key);
    m->val = malloc(m->cap * sizeof *m->val);
    m->gen = calloc(m->cap, sizeof *m->gen);
    m->cur = 0;
    return m->key && m->val && m->gen ? 0 : -1;
}

static void gmap_free(gmap *m)
{
    free(m->key);
    free(m->val);
    free(m->gen);
}

/* Returns 1 when key is new (stored) or maps to val; 0 on a conflict. */
static int gmap_check(gmap *m, uint64_t key, uint64_t val)
{
    size_t i = (size_t)(gx_mix64(key) & (m->cap - 1));
    for (;;) {
        if (m->gen[i] != m->cur) {
            m->gen[i] = m->cur;
            m->key[i] = key;
            m->val[i] = val;
            return 1;
        }
        if (m->key[i] == key)
            return m->val[i] == val;
        i = (i + 1) & (m->cap - 1);
    }
}

/* A found label reduced modulo `mod` when mod > 0 (hash_job.label_mod). */
static uint64_t found_class(const gx_hash_fn *h, uint64_t bits, uint64_t mod)
{
    uint64_t f = found_label(h, bits);
    return mod ? f % mod : f;
}

/* Is there a bijection within groups with found labels F(fb ^ c) (mod `mod`)? */
static int exact_with_offset(const sample *s, const uint64_t *fb, size_t n, const gx_hash_fn *fh,
                             uint64_t mod, uint64_t c, gmap *m1, gmap *m2)
{
    m1->cur++;
    m2->cur++;
    for (size_t i = 0; i < n; i++) {
        uint64_t f = found_class(fh, fb[i] ^ c, mod);
        if (!gmap_check(m1, (s[i].g << 32) ^ s[i].t, f) ||
            !gmap_check(m2, (s[i].g << 32) ^ f, s[i].t))
            return 0;
    }
    return 1;
}

typedef struct hash_job {
    const gx_hash_fn *truth, *found;
    const gx_hash_fn *group_by; /* truth slice hash for the set compare, or NULL */
    int line_bits, lo, hi;
    uint32_t parts;
    size_t per_part;
    uint64_t seed;
    int offset_search;
    uint64_t label_mod; /* > 0: compare labels modulo this (near-far: slice within a partition) */
} hash_job;

static uint64_t bit_range(int lo, int hi)
{
    if (lo > hi)
        return 0;
    uint64_t top = hi >= 63 ? ~(uint64_t)0 : (((uint64_t)1 << (hi + 1)) - 1);
    return top & ~(((uint64_t)1 << lo) - 1);
}

/* Fraction of sampled lines that disagree; -1 on out of memory. */
static double hash_disagreement(const hash_job *j)
{
    size_t n = j->per_part;
    sample *s = malloc(n * sizeof *s);
    uint64_t *fb = malloc(n * sizeof *fb);
    uint8_t *ok = malloc(n);
    gmap m1 = {0}, m2 = {0};
    double result = -1;
    if (!s || !fb || !ok || gmap_init(&m1, n) || gmap_init(&m2, n))
        goto done;
    gx_rng rng;
    gx_rng_seed(&rng, j->seed);
    const uint64_t pa_mask = bit_range(j->line_bits, PA_BITS - 1);
    const uint64_t in = bit_range(j->lo, j->hi) & pa_mask;
    const int nf = j->found->n_masks;
    size_t bad_total = 0;
    for (uint32_t part = 0; part < j->parts; part++) {
        uint64_t base = part == 0 ? 0 : (gx_rng_next(&rng) & pa_mask & ~in);
        for (size_t i = 0; i < n; i++) {
            uint64_t pa = base | (gx_rng_next(&rng) & in);
            s[i].t = gx_hash_eval(j->truth, pa);
            if (j->label_mod)
                s[i].t %= j->label_mod;
            s[i].g = j->group_by ? gx_hash_eval(j->group_by, pa) : 0;
            fb[i] = gx_hash_bits(j->found, pa);
            s[i].f = found_class(j->found, fb[i], j->label_mod);
        }
        if (exact_with_offset(s, fb, n, j->found, j->label_mod, 0, &m1, &m2))
            continue;
        int fixed = 0;
        if (j->offset_search && nf <= 16) {
            for (uint64_t c = 1; c < ((uint64_t)1 << nf) && !fixed; c++)
                fixed = exact_with_offset(s, fb, n, j->found, j->label_mod, c, &m1, &m2);
        }
        if (!fixed)
            bad_total += disagreeing(s, n, ok);
    }
    result = (double)bad_total / (double)(n * j->parts);
done:
    free(s);
    free(fb);
    free(ok);
    gmap_free(&m1);
    gmap_free(&m2);
    return result;
}

static void hash_text(char *buf, size_t cap, const gx_hash_fn *h)
{
    uint64_t all = 0;
    for (int i = 0; i < h->n_masks; i++)
        all |= h->masks[i];
    int lo = all ? __builtin_ctzll(all) : 0, hi = all ? 63 - __builtin_clzll(all) : 0;
    snprintf(buf, cap, "%d masks%s%s, bits %d..%d", h->n_masks, h->table ? " + table" : "",
             h->modulo ? " + modulo" : "", lo, hi);
}

void gx_cmp_hash(gx_compare_result *r, const char *field, const gx_profile *t,
                 const gx_profile *f, int is_set, const gx_compare_opts *o, int *err)
{
    const gx_hash_fn *th = is_set ? &t->l2.set_hash : &t->l2.slice_hash;
    const gx_hash_fn *fh = is_set ? &f->l2.set_hash : &f->l2.slice_hash;
    if (!th->present)
        return;
    gx_compare_row *row = gx_cmp_add_row(r, field);
    if (!row)
        return;
    hash_text(row->truth, sizeof row->truth, th);
    if (!f->l2.present || !fh->present) {
        snprintf(row->found, sizeof row->found, "-");
        row->verdict = GX_VERDICT_MISSING;
        return;
    }
    hash_text(row->found, sizeof row->found, fh);
    uint32_t line = t->l2.line_bytes ? t->l2.line_bytes : 128;
    int line_bits = gx_log2_u64(line);
    int page_bits = gx_log2_u64(t->memory.page_bytes ? t->memory.page_bytes : (2u << 20));
    /* the observable range: found's, else the truth slice hash's, else the page */
    const gx_hash_fn *fs = &f->l2.slice_hash, *ts = &t->l2.slice_hash;
    int lo = line_bits, hi = page_bits - 1;
    if (fh->obs_lo >= 0 && fh->obs_hi >= fh->obs_lo) {
        lo = fh->obs_lo;
        hi = fh->obs_hi;
    } else if (fs->obs_lo >= 0 && fs->obs_hi >= fs->obs_lo) {
        lo = fs->obs_lo;
        hi = fs->obs_hi;
    } else if (ts->obs_lo >= 0 && ts->obs_hi >= ts->obs_lo) {
        lo = ts->obs_lo;
        hi = ts->obs_hi;
    }
    if (lo < line_bits)
        lo = line_bits;
    if (hi > PA_BITS - 1)
        hi = PA_BITS - 1;
    uint64_t in = bit_range(lo, hi);
    int truth_outside = 0;
    for (int i = 0; i < th->n_masks; i++)
        if (th->masks[i] & ~in)
            truth_outside = 1;
    hash_job j = {th, fh, NULL, line_bits, lo, hi, o->hash_high_parts, o->hash_samples,
                  o->seed ^ (is_set ? 0x5e7ULL : 0x511ceULL), 0, 0};
    j.offset_search = truth_outside && (fh->table || fh->modulo);
    if (is_set && ts->present) {
        j.group_by = ts;
        uint64_t classes = (uint64_t)(t->l2.slices ? t->l2.slices : 1) *
                           (t->l2.sets_per_slice ? t->l2.sets_per_slice : 1);
        uint64_t want = classes * 8;
        if (want > ((uint64_t)1 << 18))
            want = (uint64_t)1 << 18;
        if (want > j.per_part)
            j.per_part = (size_t)want;
    }
    if (j.parts == 0)
        j.parts = 1;
    if (j.per_part < 64)
        j.per_part = 64;
    /* Near-far: a line sits in the partition of the SM that reads it (a
     * near copy), so only the slice within a partition is a property of the
     * address that timing can show; compare the slice hash modulo
     * slices/partitions (docs/profile-format.md). */
    if (!is_set && t->l2.topology == GX_TOPO_NEAR_FAR && t->l2.partitions > 1 && t->l2.slices)
        j.label_mod = t->l2.slices / t->l2.partitions;
    double d = hash_disagreement(&j);
    if (d < 0) {
        *err = GX_ENOMEM;
        return;
    }
    row->disagreement = d;
    snprintf(row->tolerance, sizeof row->tolerance, "bits %d..%d%s%s%s, %.3g%% differ",
             lo, hi, is_set && j.group_by ? " per slice" : "",
             j.label_mod ? ", within a partition" : "",
             j.offset_search ? ", per-page offset" : "", d * 100);
    row->verdict = d == 0 ? GX_VERDICT_MATCH : GX_VERDICT_MISMATCH;
}

