/* compare.c - gx_compare: per-field verdicts of a found profile against the
 * truth (see compare.h for the rules).
 *
 * Notes:
 * - Hash functions are compared as partitions of sampled line addresses.
 *   Disagreement = fraction of samples that do not follow the majority
 *   mapping in both directions (truth label -> found label and back) within
 *   their group; it is 0 exactly when the two labelings are related by a
 *   bijection in every group.
 * - Sampling uses the project rng with opts->seed, so a verdict is
 *   reproducible. Physical addresses are sampled below bit 48. */
#include "gpuxray/compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/hash.h"
#include "gpuxray/policy.h"
#include "gpuxray/rng.h"
#include "gpuxray/bits.h"

#define PA_BITS 48

void gx_compare_opts_default(gx_compare_opts *o)
{
    o->latency_rel_tol = 0.05;
    o->level_capacity_rel_tol = 0.125;
    o->level_latency_rel_tol = 0.05;
    o->policy_param_abs_tol = 0.03;
    o->hash_samples = 8192;
    o->hash_high_parts = 4;
    o->seed = 1;
}

const char *gx_verdict_name(gx_verdict v)
{
    switch (v) {
    case GX_VERDICT_MATCH:
        return "match";
    case GX_VERDICT_MISMATCH:
        return "mismatch";
    default:
        return "missing";
    }
}

const gx_compare_row *gx_compare_find(const gx_compare_result *r, const char *field)
{
    for (int i = 0; i < r->n_rows; i++)
        if (strcmp(r->rows[i].field, field) == 0)
            return &r->rows[i];
    return NULL;
}

static gx_compare_row *add_row(gx_compare_result *r, const char *field)
{
    if (r->n_rows >= GX_COMPARE_MAX_ROWS)
        return NULL;
    gx_compare_row *row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    snprintf(row->field, sizeof row->field, "%s", field);
    row->disagreement = NAN;
    return row;
}

static void count(gx_compare_result *r)
{
    r->n_match = r->n_mismatch = r->n_missing = 0;
    for (int i = 0; i < r->n_rows; i++) {
        if (r->rows[i].verdict == GX_VERDICT_MATCH)
            r->n_match++;
        else if (r->rows[i].verdict == GX_VERDICT_MISMATCH)
            r->n_mismatch++;
        else
            r->n_missing++;
    }
}

/* ------------------------------------------------------ scalar fields */

static void cmp_uint(gx_compare_result *r, const char *field, uint64_t t, uint64_t f)
{
    if (!t)
        return;
    gx_compare_row *row = add_row(r, field);
    if (!row)
        return;
    snprintf(row->truth, sizeof row->truth, "%" PRIu64, t);
    if (!f) {
        snprintf(row->found, sizeof row->found, "-");
        row->verdict = GX_VERDICT_MISSING;
        return;
    }
    snprintf(row->found, sizeof row->found, "%" PRIu64, f);
    row->verdict = t == f ? GX_VERDICT_MATCH : GX_VERDICT_MISMATCH;
}

static int within_rel(double t, double f, double tol)
{
    return fabs(f - t) <= tol * fabs(t);
}

static void cmp_latency(gx_compare_result *r, const char *field, double t, double f,
                        double tol)
{
    if (isnan(t))
        return;
    gx_compare_row *row = add_row(r, field);
    if (!row)
        return;
    snprintf(row->truth, sizeof row->truth, "%.1f", t);
    snprintf(row->tolerance, sizeof row->tolerance, "+-%.3g%% relative", tol * 100);
    if (isnan(f)) {
        snprintf(row->found, sizeof row->found, "-");
        row->verdict = GX_VERDICT_MISSING;
        return;
    }
    snprintf(row->found, sizeof row->found, "%.1f", f);
    row->verdict = within_rel(t, f, tol) ? GX_VERDICT_MATCH : GX_VERDICT_MISMATCH;
}

static void cmp_policy(gx_compare_result *r, const char *t, const char *f, double tol,
                       uint32_t ways)
{
    if (!*t)
        return;
    gx_compare_row *row = add_row(r, "l2.policy");
    if (!row)
        return;
    snprintf(row->truth, sizeof row->truth, "%s", t);
    if (!*f) {
        snprintf(row->found, sizeof row->found, "-");
        row->verdict = GX_VERDICT_MISSING;
        return;
    }
    snprintf(row->found, sizeof row->found, "%s", f);
    if (strcmp(t, f) == 0) {
        row->verdict = GX_VERDICT_MATCH;
        return;
    }
    gx_policy pt, pf;
    gx_msg m;
    row->verdict = GX_VERDICT_MISMATCH;
    if (gx_policy_from_spec(t, &pt, &m) != GX_OK || gx_policy_from_spec(f, &pf, &m) != GX_OK)
        return;
    if (strcmp(pt.spec, pf.spec) == 0) {
        row->verdict = GX_VERDICT_MATCH;
        return;
    }
    if (ways && gx_policy_equivalent(pt.spec, pf.spec, ways)) {
        snprintf(row->tolerance, sizeof row->tolerance, "indistinguishable at %u ways", ways);
        row->verdict = GX_VERDICT_MATCH;
        return;
    }
    /* same family with one numeric parameter (a probability): tolerance */
    const char *at = strchr(pt.spec, ':'), *af = strchr(pf.spec, ':');
    if (pt.ops != pf.ops || !at || !af)
        return;
    char *et = NULL, *ef = NULL;
    double vt = strtod(at + 1, &et), vf = strtod(af + 1, &ef);
    if (et == at + 1 || ef == af + 1 || *et || *ef)
        return;
    snprintf(row->tolerance, sizeof row->tolerance, "parameter +-%.3g absolute", tol);
    if (fabs(vt - vf) <= tol + 1e-12)
        row->verdict = GX_VERDICT_MATCH;
}

static void cmp_topology(gx_compare_result *r, gx_topology t, gx_topology f)
{
    if (t == GX_TOPO_UNKNOWN)
        return;
    gx_compare_row *row = add_row(r, "l2.topology");
    if (!row)
        return;
    snprintf(row->truth, sizeof row->truth, "%s", gx_topology_name(t));
    snprintf(row->found, sizeof row->found, "%s", f == GX_TOPO_UNKNOWN ? "-" : gx_topology_name(f));
    row->verdict = f == GX_TOPO_UNKNOWN ? GX_VERDICT_MISSING
                   : t == f             ? GX_VERDICT_MATCH
                                        : GX_VERDICT_MISMATCH;
}

static void levels_text(char *buf, size_t cap, const gx_profile *p)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->l2.n_levels && o < cap; i++) {
        int w = snprintf(buf + o, cap - o, "%s%.6gKiB@%.0f", i ? " " : "",
                         (double)p->l2.levels[i].capacity_bytes / 1024.0,
                         p->l2.levels[i].latency_cycles);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

static void cmp_levels(gx_compare_result *r, const gx_profile *t, const gx_profile *f,
                       const gx_compare_opts *o)
{
    if (t->l2.n_levels == 0)
        return;
    gx_compare_row *row = add_row(r, "l2.levels_from_one_sm");
    if (!row)
        return;
    levels_text(row->truth, sizeof row->truth, t);
    /* A level's latency is a plateau seen from one SM: it includes that SM's
     * on-chip skew, which a reference profile may count in (hopper-like: the
     * H200's measured plateaus) and discovery may not (it reports the
     * fastest SM-slice pair). Allow the truth's skew amplitude on top of the
     * relative tolerance. */
    const double skew = t->sim.present && t->sim.sm_slice_skew_cycles > 0
                            ? t->sim.sm_slice_skew_cycles : 0.0;
    snprintf(row->tolerance, sizeof row->tolerance,
             "capacity +-%.3g%%, latency +-%.3g%% (+%.3g skew)",
             o->level_capacity_rel_tol * 100, o->level_latency_rel_tol * 100, skew);
    if (!f->l2.present || f->l2.n_levels == 0) {
        snprintf(row->found, sizeof row->found, "-");
        row->verdict = GX_VERDICT_MISSING;
        return;
    }
    levels_text(row->found, sizeof row->found, f);
    row->verdict = GX_VERDICT_MATCH;
    if (t->l2.n_levels != f->l2.n_levels) {
        row->verdict = GX_VERDICT_MISMATCH;
        return;
    }
    for (int i = 0; i < t->l2.n_levels; i++) {
        const gx_level *a = &t->l2.levels[i], *b = &f->l2.levels[i];
        if (!within_rel((double)a->capacity_bytes, (double)b->capacity_bytes,
                        o->level_capacity_rel_tol) ||
            isnan(b->latency_cycles) ||
            fabs(a->latency_cycles - b->latency_cycles) >
                o->level_latency_rel_tol * fabs(a->latency_cycles) + skew)
            row->verdict = GX_VERDICT_MISMATCH;
    }
}

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

static void cmp_hash(gx_compare_result *r, const char *field, const gx_profile *t,
                     const gx_profile *f, int is_set, const gx_compare_opts *o, int *err)
{
    const gx_hash_fn *th = is_set ? &t->l2.set_hash : &t->l2.slice_hash;
    const gx_hash_fn *fh = is_set ? &f->l2.set_hash : &f->l2.slice_hash;
    if (!th->present)
        return;
    gx_compare_row *row = add_row(r, field);
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

int gx_compare(const gx_profile *truth, const gx_profile *found, const gx_compare_opts *opts,
               gx_compare_result *result, gx_msg *msg)
{
    if (!truth || !found || !result)
        return gx_fail(msg, GX_EINVAL, "gx_compare: NULL argument");
    gx_compare_opts o;
    if (opts)
        o = *opts;
    else
        gx_compare_opts_default(&o);
    memset(result, 0, sizeof *result);
    const gx_profile *t = truth, *f = found;
    if (t->l2.present) {
        const int fp = f->l2.present;
        cmp_uint(result, "l2.line_bytes", t->l2.line_bytes, fp ? f->l2.line_bytes : 0);
        cmp_uint(result, "l2.sector_bytes", t->l2.sector_bytes, fp ? f->l2.sector_bytes : 0);
        cmp_uint(result, "l2.ways", t->l2.ways, fp ? f->l2.ways : 0);
        cmp_uint(result, "l2.slices", t->l2.slices, fp ? f->l2.slices : 0);
        cmp_uint(result, "l2.partitions", t->l2.partitions, fp ? f->l2.partitions : 0);
        cmp_uint(result, "l2.sets_per_slice", t->l2.sets_per_slice, fp ? f->l2.sets_per_slice : 0);
        cmp_uint(result, "l2.capacity_bytes", t->l2.capacity_bytes, fp ? f->l2.capacity_bytes : 0);
        cmp_policy(result, t->l2.policy, fp ? f->l2.policy : "", o.policy_param_abs_tol,
                   t->l2.ways);
        cmp_topology(result, t->l2.topology, fp ? f->l2.topology : GX_TOPO_UNKNOWN);
        cmp_latency(result, "l2.latency_cycles.hit", t->l2.hit_cycles,
                    fp ? f->l2.hit_cycles : NAN, o.latency_rel_tol);
        cmp_latency(result, "l2.latency_cycles.near_hit", t->l2.near_hit_cycles,
                    fp ? f->l2.near_hit_cycles : NAN, o.latency_rel_tol);
        cmp_latency(result, "l2.latency_cycles.far_hit", t->l2.far_hit_cycles,
                    fp ? f->l2.far_hit_cycles : NAN, o.latency_rel_tol);
    }
    cmp_latency(result, "memory.dram_latency_cycles", t->memory.dram_latency_cycles,
                f->memory.dram_latency_cycles, o.latency_rel_tol);
    if (t->l2.present) {
        int err = GX_OK;
        cmp_levels(result, t, f, &o);
        cmp_hash(result, "l2.hash.slice", t, f, 0, &o, &err);
        cmp_hash(result, "l2.hash.set", t, f, 1, &o, &err);
        if (err != GX_OK)
            return gx_fail(msg, err, "gx_compare: out of memory");
    }
    count(result);
    return GX_OK;
}
