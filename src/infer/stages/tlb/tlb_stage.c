/* tlb_stage.c - discovery stage "tlb": the translation hierarchy one SM
 * sees, from translation chases only (gx_target_xchase; method and
 * thresholds in docs/discovery.md, "tlb").
 *
 * Method:
 * 1. curve: mean latency (per-step medians) of chases of N pages at stride
 *    3 granules, N on a sqrt(2) grid up to the primitive's limit. Plateaus:
 *    runs of two or more points within TLB_JUMP_CYCLES / 2 of the run's
 *    first point; the points between are the knees. Each plateau's latency
 *    is measured again with PLATEAU_SAMPLES timed accesses.
 * 2. levels: plateau k is TLB level k when its geometry (tlb_geometry.c:
 *    a modulo index, else one that spreads power-of-two strides evenly,
 *    xor) finds an entry reach; the first plateau that is not a level is the
 *    walk (with whatever the page-walk caches hold at that distance).
 *    hit latency of level j >= 1 = its plateau - the one before;
 *    miss_cycles of level j = the next plateau - its own (the walk after
 *    the last). Level 0's hit latency adds to every access: a chase cannot
 *    tell it from the L2 hit, so it stays absent.
 * 3. walk: the walk plateau (pages 3 granules apart) against a chase of
 *    pages FAR_STRIDE apart beyond every level: page-walk caches (and
 *    neighbours of one fetch) show as a far walk that costs
 *    TLB_JUMP_CYCLES more (a report row: the profile has no field for it).
 * 4. sharing: for each level a chase of 3/4 of its entries (hits it) on SM
 *    0 while SM b thrashes 4x its entries at the same stride (3 x reach, a
 *    stride a modulo index spreads evenly; the reach for xor): shared when
 *    the mean misses. The first SM that does not share (bisection over
 *    1 .. sm_count - 1; domains are contiguous SM ranges) is the domain
 *    size: 1 sm, <= MAX_TPC_SMS tpc, less than the GPU gpc, else gpu.
 * Index: xor for a level of the xor path with sets, modulo for a modulo
 * level with sets whose check at 2 x reach missed, absent otherwise.
 * Fields it cannot establish stay absent; each written one has a
 * confidence. Needs the timer stage only (clock settling on a GPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../infer.h"
#include "../../infer_util.h"
#include "tlb_internal.h"
#include "tlb_model.h"
#include "tlb_stage.h"

/* The curve's strides in granules, tried in turn until one shows a level:
 * odd, so entries of any reach up to the stride spread evenly over a
 * power-of-two number of sets. 3 first (the finest that leaves room for
 * reaches of 2 granules); when entries cover many granules (Hopper's 32
 * MiB), a 3-granule chase hits one entry several times in a row, its
 * mean moves by a fraction of a level's step, and no plateau shows: then
 * 17 (past 32 MiB over 2 MiB granules) and 129 (past TLB_MAX_REACH). */
static const uint32_t CURVE_GRANULES[] = {3, 17, 129};
#define N_CURVES (sizeof CURVE_GRANULES / sizeof CURVE_GRANULES[0])
#define CURVE_SAMPLES 2048
#define PLATEAU_SAMPLES 16384
#define MAX_POINTS 40
#define MAX_PLATEAUS 8
#define FAR_STRIDE (1ULL << 30) /* 1 GiB: apart in every walk level below the top ones */
#define MAX_TPC_SMS 4           /* TPCs have held 2 SMs since Pascal; more is a GPC */
#define CONF_EXACT 0.99         /* all-or-nothing verdicts, each retried while unsure */
#define CONF_INCONSISTENT 0.5   /* sets x ways disagrees with the capacity knee */
#define CONF_LATENCY 0.95
/* A deeper level holds more: a plateau whose capacity knee is less than
 * twice the level before's is the walk, whose cost differs between the
 * strides the tests use (page-walk caches, neighbours of one fetch), seen
 * through that level's capacity. */
#define MIN_GROWTH 2
/* An xor level's knee at the curve's odd stride: from about 0.15 to 7.6
 * times its entries (its sets' loads at 3 and 17 entries apart, over 1-12
 * index bits and 2-64 ways), in pages; in bytes at most this times its
 * entries x reach (with a stride below the reach, pages share entries). */
#define MIXED_SPAN 8
/* after_xor's capacity hint, in bytes of the xor level: its clean miss
 * chase's (2.25 pages per entry) */
#define CLEAN_HINT 2.25

typedef struct point {
    uint32_t n;
    double cycles;
} point;

typedef struct plateau {
    uint32_t first, last; /* steps of its first and last curve point */
    double cycles;
    int hidden;           /* not the curve's: a level's clean miss (probe_hidden) */
} plateau;

typedef struct tlb_state {
    gx_infer *ctx;
    tlb_meter m;
    uint64_t granule;
    uint64_t curve_stride; /* the curve's stride (CURVE_GRANULES granules) */
    point pts[MAX_POINTS];
    int n_pts;
    plateau pl[MAX_PLATEAUS];
    int n_pl;
    tlb_geom lv[GX_MAX_TLB_LEVELS];
    int n_lv;
    double walk_near, walk_far;
    uint32_t domain[GX_MAX_TLB_LEVELS]; /* SMs of one instance; 0 unknown */
} tlb_state;

static int curve(tlb_state *s)
{
    const uint64_t stride = s->curve_stride;
    const uint32_t max = tlb_max_steps(stride);
    uint32_t prev = 0;
    for (int k = 2; k <= 30 && s->n_pts < MAX_POINTS; k++) {
        uint32_t n = (uint32_t)lround(pow(2.0, k / 2.0));
        if (n > max)
            break;
        if (n == prev)
            continue;
        prev = n;
        point *p = &s->pts[s->n_pts];
        int rc = tlb_mean(&s->m, stride, n, CURVE_SAMPLES, &p->cycles, s->ctx->msg);
        if (rc != GX_OK)
            return rc;
        p->n = n;
        s->n_pts++;
        json_t *o = json_pack("{s:I, s:I, s:o}", "stride_bytes", (json_int_t)stride, "steps",
                              (json_int_t)n, "cycles", infer_json_num(p->cycles));
        infer_data_append(s->ctx, "tlb", "curve", o);
    }
    return GX_OK;
}

/* The plateau's latency again, precisely, in the middle of its run. */
static int plateau_cycles(tlb_state *s, plateau *p)
{
    uint32_t mid = (uint32_t)lround(sqrt((double)p->first * (double)p->last));
    double sum = 0;
    int reps = 0;
    for (uint64_t got = 0; got < PLATEAU_SAMPLES; reps++) {
        double v;
        int rc = tlb_mean(&s->m, s->curve_stride, mid, PLATEAU_SAMPLES, &v, s->ctx->msg);
        if (rc != GX_OK)
            return rc;
        sum += v;
        uint64_t rounds = (PLATEAU_SAMPLES + mid - 1) / mid;
        got += (uint64_t)mid * (rounds < GX_XCHASE_MAX_ROUNDS ? rounds : GX_XCHASE_MAX_ROUNDS - 1);
    }
    p->cycles = sum / reps;
    return GX_OK;
}

/* Runs of two or more curve points within TLB_JUMP_CYCLES / 2 of the run's
 * mean; neighbouring runs closer than TLB_JUMP_CYCLES once measured
 * precisely are one plateau (a point of the knee's spread split it). */
static int find_plateaus(tlb_state *s)
{
    int i = 0;
    while (i < s->n_pts && s->n_pl < MAX_PLATEAUS) {
        int j = i + 1;
        double sum = s->pts[i].cycles;
        while (j < s->n_pts && fabs(s->pts[j].cycles - sum / (j - i)) < TLB_JUMP_CYCLES / 2)
            sum += s->pts[j++].cycles;
        if (j - i >= 2) {
            plateau *p = &s->pl[s->n_pl];
            p->hidden = 0;
            p->first = s->pts[i].n;
            p->last = s->pts[j - 1].n;
            int rc = plateau_cycles(s, p);
            if (rc != GX_OK)
                return rc;
            plateau *q = s->n_pl ? &s->pl[s->n_pl - 1] : NULL;
            if (q && fabs(p->cycles - q->cycles) < TLB_JUMP_CYCLES) {
                q->last = p->last;
                if ((rc = plateau_cycles(s, q)) != GX_OK)
                    return rc;
            } else {
                s->n_pl++;
            }
        }
        i = j;
    }
    return GX_OK;
}

/* After an xor level found at plateau k: what a chase that overflows it
 * at a stride it spreads evenly costs (tlb_geometry.c's clean miss: the
 * next level's hit, or the walk) replaces the curve's next plateau within
 * TLB_JUMP_CYCLES of it, and is a plateau of its own when the curve's
 * next one lies farther or there is none (the curve's odd
 * stride mixes the xor level's hits and misses over the next level's
 * range, which then shows no run of its own); its capacity hint: the
 * clean chase's pages. */
static void after_xor(tlb_state *s, int k, const tlb_geom *g)
{
    if (!(g->next_cycles > g->cycles + TLB_JUMP_CYCLES))
        return;
    if (k + 1 < s->n_pl && fabs(s->pl[k + 1].cycles - g->next_cycles) <= TLB_JUMP_CYCLES) {
        s->pl[k + 1].cycles = g->next_cycles; /* the same, without the curve's mixture */
        return;
    }
    if (s->n_pl == MAX_PLATEAUS)
        return;
    memmove(&s->pl[k + 2], &s->pl[k + 1], (size_t)(s->n_pl - k - 1) * sizeof s->pl[0]);
    s->n_pl++;
    double pages = ceil(CLEAN_HINT * (double)g->bytes / (double)s->curve_stride);
    uint32_t n = pages < 1 ? 1 : pages > tlb_max_steps(s->curve_stride)
                                     ? tlb_max_steps(s->curve_stride)
                                     : (uint32_t)pages;
    s->pl[k + 1].first = s->pl[k + 1].last = n;
    s->pl[k + 1].cycles = g->next_cycles;
    s->pl[k + 1].hidden = 0;
}

/* Before plateau k is taken for the walk: a level the curve did not show.
 * An xor level's odd-stride knee spreads over several times its entries,
 * so when the curve's odd stride spreads the level past `last` unevenly
 * too, its hits and misses mix and no run shows (a modulo level before it
 * shows its own). The clean miss of the last level found (its overflowing
 * chase at a power-of-two stride, which an xor level spreads evenly) more
 * than TLB_JUMP_CYCLES under plateau k and over that level is a hidden
 * plateau before k, tried by the xor path alone; when it is no level the
 * walk stays plateau k (every result of a hierarchy without one stays). */
static int probe_hidden(tlb_state *s, int k, const tlb_geom *last, int *added)
{
    double v;
    *added = 0;
    if (s->n_pl == MAX_PLATEAUS)
        return GX_OK;
    int rc = tlb_clean_miss(&s->m, last, &v, s->ctx->msg);
    if (rc != GX_OK || !(v > last->cycles + TLB_JUMP_CYCLES) ||
        !(v < s->pl[k].cycles - TLB_JUMP_CYCLES))
        return rc;
    memmove(&s->pl[k + 1], &s->pl[k], (size_t)(s->n_pl - k) * sizeof s->pl[0]);
    s->n_pl++;
    plateau *p = &s->pl[k];
    double pages = ceil(CLEAN_HINT * (double)last->bytes / (double)s->curve_stride);
    p->first = p->last = pages < 1 ? 1 : pages > tlb_max_steps(s->curve_stride)
                                             ? tlb_max_steps(s->curve_stride)
                                             : (uint32_t)pages;
    p->cycles = v;
    p->hidden = 1;
    *added = 1;
    return GX_OK;
}

static int levels(tlb_state *s)
{
    const uint64_t stride = s->curve_stride;
    int walk_set = 0; /* walk_near holds the first plateau past the last level */
    int probed = 0;   /* probe_hidden ran past this many levels */
    for (int k = 0; k < s->n_pl; k++) {
        if (s->n_lv == GX_MAX_TLB_LEVELS)
            break;
        tlb_geom g;
        double next = k + 1 < s->n_pl ? s->pl[k + 1].cycles : 0;
        int rc = tlb_geometry(&s->m, s->pl[k].cycles, next, stride, s->pl[k].last,
                              s->pl[k].hidden, &g, s->ctx->msg);
        if (rc != GX_OK)
            return rc;
        const tlb_geom *prev = s->n_lv ? &s->lv[s->n_lv - 1] : NULL;
        if (g.reach && prev &&
            (g.bytes < MIN_GROWTH * prev->bytes || (g.entries && g.entries <= prev->entries))) {
            snprintf(g.why, sizeof g.why, "repeats the level before (the walk at another cost)");
            g.reach = 0;
        }
        if (g.reach && (!g.entries || !g.consistent)) {
            /* a level answers every test of tlb_geometry.c consistently;
             * past the TLBs the walk's own caches (page-walk caches, the
             * L2 holding page-table lines) make knees that do not */
            infer_progress(s->ctx, "tlb: plateau %d is no level: %s", k,
                           g.why[0] ? g.why : "sets x ways disagrees with the knee");
            g.reach = 0;
        }
        if (!g.reach && s->pl[k].hidden) /* no hidden level: the next is the walk, as found */
            return GX_OK;
        if (!g.reach) { /* not a TLB level: the walk */
            if (!walk_set)
                s->walk_near = s->pl[k].cycles;
            walk_set = 1;
            if (!s->n_lv)
                infer_progress(s->ctx, "tlb: first plateau is no level: %s", g.why);
            /* past an xor level the curve's odd stride fills its sets
             * unevenly: its knee spreads over MIXED_SPAN x its entries and
             * shows plateaus of hits mixed with misses before the next
             * level's; those repeat it or fail, and the next may still
             * be a level */
            if (prev && prev->index == GX_TLB_INDEX_XOR &&
                (double)s->pl[k].last * (double)stride <=
                    MIXED_SPAN * (double)prev->entries * (double)prev->reach)
                continue;
            if (prev && probed < s->n_lv) {
                probed = s->n_lv;
                int added = 0;
                if ((rc = probe_hidden(s, k, prev, &added)) != GX_OK)
                    return rc;
                if (added) {
                    k--; /* the hidden plateau, now at k, then this one again */
                    continue;
                }
            }
            return GX_OK;
        }
        walk_set = 0;
        if (g.index == GX_TLB_INDEX_XOR || (prev && prev->index == GX_TLB_INDEX_XOR)) {
            double c;
            if ((rc = tlb_clean_cycles(&s->m, &g, PLATEAU_SAMPLES, &c, s->ctx->msg)) != GX_OK)
                return rc;
            if (c == c)
                g.cycles = c;
        }
        s->lv[s->n_lv++] = g;
        if (g.index == GX_TLB_INDEX_XOR)
            after_xor(s, k, &g);
    }
    return GX_OK;
}

static int walk_far(tlb_state *s)
{
    if (!s->n_lv)
        return GX_OK;
    uint32_t n = tlb_max_steps(FAR_STRIDE);
    const tlb_geom *last = &s->lv[s->n_lv - 1];
    uint32_t want = last->entries ? 4 * last->entries : n;
    if (want < n)
        n = want;
    return tlb_mean(&s->m, FAR_STRIDE, n, CURVE_SAMPLES, &s->walk_far, s->ctx->msg);
}

/* 1 shared, 0 not, -1 unsure. */
static int shares(tlb_state *s, const tlb_geom *g, uint32_t sm_b, int *out)
{
    uint32_t n = (uint32_t)ceil(0.75 * g->entries), nt = 4 * g->entries;
    /* a stride the level spreads evenly: odd multiples of the reach for a
     * modulo index; for xor the counts' power-of-two stride, past the
     * neighbours of one page-table fetch (SM 0's misses then cost a whole
     * walk: a neighbour page-walk cache's hit could hide them in the mean) */
    uint64_t stride = g->index == GX_TLB_INDEX_XOR ? tlb_count_stride(&s->m, g) : 3 * g->reach;
    if (nt > tlb_max_steps(stride))
        nt = tlb_max_steps(stride);
    *out = -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        double v;
        int rc = tlb_mean_thrash(&s->m, stride, n, sm_b, nt, &v, s->ctx->msg);
        if (rc != GX_OK)
            return rc;
        if (v > g->cycles + TLB_MISS_CYCLES) {
            *out = 1;
            return GX_OK;
        }
        if (v < g->cycles + TLB_HIT_CYCLES) {
            *out = 0;
            return GX_OK;
        }
    }
    return GX_OK;
}

static int sharing(tlb_state *s, int j)
{
    const tlb_geom *g = &s->lv[j];
    const uint32_t sms = s->ctx->info->sm_count;
    s->domain[j] = 0;
    if (!g->entries || sms < 2)
        return GX_OK;
    int v, rc;
    if ((rc = shares(s, g, 1, &v)) != GX_OK || v < 0)
        return rc;
    if (!v) {
        s->domain[j] = 1;
        return GX_OK;
    }
    if ((rc = shares(s, g, sms - 1, &v)) != GX_OK || v < 0)
        return rc;
    if (v) {
        s->domain[j] = sms;
        return GX_OK;
    }
    uint32_t lo = 1, hi = sms - 1; /* lo shares, hi does not */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((rc = shares(s, g, mid, &v)) != GX_OK || v < 0)
            return rc;
        if (v)
            lo = mid;
        else
            hi = mid;
    }
    s->domain[j] = hi;
    return GX_OK;
}

static void set_conf(gx_profile *p, int j, const char *field, double c)
{
    char key[64];
    snprintf(key, sizeof key, "tlb.levels[%d].%s", j, field);
    gx_profile_set_confidence(p, key, c);
}

static void write_level(tlb_state *s, int j)
{
    gx_profile *p = s->ctx->out;
    gx_tlb_level_cfg *l = &p->tlb.levels[j];
    const tlb_geom *g = &s->lv[j];
    const uint32_t sms = s->ctx->info->sm_count;
    gx_tlb_level_init(l);
    snprintf(l->name, sizeof l->name, "L%d", j + 1);
    double gc = g->consistent ? CONF_EXACT : CONF_INCONSISTENT;
    l->entry_bytes = g->reach;
    set_conf(p, j, "entry_bytes", gc);
    if (g->entries) {
        l->entries = g->entries;
        l->ways = g->ways;
        set_conf(p, j, "entries", gc);
        set_conf(p, j, "ways", gc);
    }
    if (g->index) {
        l->set_index = (gx_tlb_index)g->index;
        set_conf(p, j, "index", gc);
    }
    if (j > 0 && g->cycles > s->lv[j - 1].cycles) {
        l->hit_latency_cycles = g->cycles - s->lv[j - 1].cycles;
        set_conf(p, j, "hit_latency_cycles", CONF_LATENCY);
    }
    double next = j + 1 < s->n_lv ? s->lv[j + 1].cycles : s->walk_near;
    if (next > g->cycles) {
        l->miss_cycles = next - g->cycles;
        set_conf(p, j, "miss_cycles", CONF_LATENCY);
    }
    uint32_t d = s->domain[j];
    if (d) {
        l->sharing = d == 1 ? GX_SHARE_SM : d >= sms ? GX_SHARE_GPU
                                 : d <= MAX_TPC_SMS ? GX_SHARE_TPC
                                                    : GX_SHARE_GPC;
        if (l->sharing == GX_SHARE_TPC)
            p->tlb.sms_per_tpc = d;
        if (l->sharing == GX_SHARE_GPC)
            p->tlb.sms_per_gpc = d;
        set_conf(p, j, "sharing", CONF_EXACT);
    }
}

static void report(tlb_state *s)
{
    gx_infer *ctx = s->ctx;
    char v[128], m[200], a[32], b[32];
    for (int j = 0; j < s->n_lv; j++) {
        const tlb_geom *g = &s->lv[j];
        const gx_tlb_level_cfg *l = &ctx->out->tlb.levels[j];
        char name[48];
        snprintf(name, sizeof name, "tlb.levels[%d]", j);
        if (g->entries)
            snprintf(v, sizeof v, "%u entries = %u sets x %u ways, %s each%s", g->entries,
                     g->sets, g->ways, infer_fmt_bytes(g->reach, a, sizeof a),
                     g->index == GX_TLB_INDEX_XOR      ? ", xor index"
                     : g->index == GX_TLB_INDEX_MODULO ? ", modulo index"
                                                       : "");
        else
            snprintf(v, sizeof v, "reach %s, entries unknown", infer_fmt_bytes(g->reach, a,
                                                                               sizeof a));
        snprintf(m, sizeof m, "capacity knee %s; %s%s%s", infer_fmt_bytes(g->bytes, b, sizeof b),
                 g->consistent ? "sets x ways agrees" : "sets x ways DISAGREES",
                 g->why[0] ? "; " : "", g->why);
        infer_report_row(ctx, name, v, m, g->consistent ? CONF_EXACT : CONF_INCONSISTENT, 1);
        snprintf(name, sizeof name, "tlb.levels[%d].latency", j);
        snprintf(v, sizeof v, "hit %s%.1f, miss +%.1f cycles", j ? "+" : "(in the L2 hit) ",
                 j ? l->hit_latency_cycles : g->cycles, l->miss_cycles);
        snprintf(m, sizeof m, "plateaus of the %llu-granule curve",
                 (unsigned long long)(s->curve_stride / s->granule));
        infer_report_row(ctx, name, v, m, CONF_LATENCY, 1);
        snprintf(name, sizeof name, "tlb.levels[%d].sharing", j);
        snprintf(v, sizeof v, "%s", s->domain[j] ? gx_sharing_name(l->sharing) : "unknown");
        snprintf(m, sizeof m, "SM 0 timing, SM b thrashing: first SM apart = %u", s->domain[j]);
        infer_report_row(ctx, name, v, m, s->domain[j] ? CONF_EXACT : 0, s->domain[j] != 0);
    }
    if (s->n_lv) {
        int grows = s->walk_far > s->walk_near + TLB_JUMP_CYCLES;
        snprintf(v, sizeof v, "%s", s->walk_near > 0 ? (grows ? "grows" : "flat") : "unknown");
        if (s->walk_near > 0)
            snprintf(m, sizeof m,
                     "first plateau past the last level (the walk?): %.1f cycles at %llu "
                     "granules apart, %.1f at 1 GiB apart",
                     s->walk_near - s->lv[s->n_lv - 1].cycles,
                     (unsigned long long)(s->curve_stride / s->granule),
                     s->walk_far - s->lv[s->n_lv - 1].cycles);
        else /* no plateau followed the last level: no walk to compare */
            snprintf(m, sizeof m, "no plateau past the last level at %llu granules apart; "
                     "%.1f cycles over it at 1 GiB apart",
                     (unsigned long long)(s->curve_stride / s->granule),
                     s->walk_far - s->lv[s->n_lv - 1].cycles);
        /* page-walk caches (or neighbours of one fetch) show as a walk that
         * costs more when the pages walked lie further apart */
        infer_report_row(ctx, "tlb.walk_vs_distance", v, m, NAN, 0);
    }
    snprintf(v, sizeof v, "%llu", (unsigned long long)s->granule);
    infer_report_row(ctx, "tlb.granule_bytes", v,
                     "allocation granularity (the API's); the translation page of allocated "
                     "memory: bench/tlb_page (walks per byte)",
                     NAN, 0);
}

/* Every plateau of the last curve: what lies past the levels found (the
 * walk at the page-walk caches' changing hit rates, or a level whose
 * geometry the model of tlb_geometry.c cannot describe) stays visible. */
static void report_plateaus(tlb_state *s)
{
    char v[256], m[96];
    size_t at = 0;
    v[0] = '\0';
    for (int k = 0; k < s->n_pl && at < sizeof v; k++) {
        int w = snprintf(v + at, sizeof v - at, "%s%.1f (%u-%u)", k ? ", " : "",
                         s->pl[k].cycles, s->pl[k].first, s->pl[k].last);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    snprintf(m, sizeof m, "cycles (pages) of the %llu-granule curve; %d level(s) found",
             (unsigned long long)(s->curve_stride / s->granule), s->n_lv);
    infer_report_row(s->ctx, "tlb.plateaus", s->n_pl ? v : "none", m, NAN, 0);
}

int gx_stage_tlb(gx_infer *ctx)
{
    tlb_state *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(ctx->msg, GX_ENOMEM, "tlb: out of memory");
    s->ctx = ctx;
    s->granule = ctx->info->page_bytes ? ctx->info->page_bytes : 2u << 20;
    tlb_meter_init(&s->m, ctx, 0, s->granule);
    int rc = GX_OK;
    for (size_t c = 0; rc == GX_OK && c < N_CURVES && !s->n_lv; c++) {
        s->curve_stride = CURVE_GRANULES[c] * s->granule;
        if (tlb_max_steps(s->curve_stride) < 64)
            break;
        s->n_pts = s->n_pl = 0;
        s->walk_near = 0;
        rc = curve(s);
        if (rc == GX_OK)
            rc = find_plateaus(s);
        if (rc == GX_OK)
            rc = levels(s);
    }
    if (rc == GX_OK)
        rc = walk_far(s);
    for (int j = 0; rc == GX_OK && j < s->n_lv; j++)
        rc = sharing(s, j);
    if (rc == GX_OK && s->n_lv) {
        gx_profile *p = ctx->out;
        gx_tlb_cfg_init(&p->tlb);
        p->tlb.present = 1;
        p->tlb.n_levels = s->n_lv;
        for (int j = 0; j < s->n_lv; j++)
            write_level(s, j);
        report(s);
        /* the parts no chase sees, so that sim runs what was found */
        int runnable = tlb_write_model(p, s->granule, ctx->line.line_bytes);
        infer_report_row(ctx, "tlb model parts", runnable ? "written" : "not written",
                         runnable ? "page table, walker and coalescer as stated model choices "
                                    "(tlb_model.c), the walk's cost measured"
                                  : "a level or the walk's cost is unknown",
                         NAN, 0);
        if (s->walk_near > s->lv[0].cycles)
            rc = tlb_page(ctx, &s->m, s->walk_near - s->lv[0].cycles);
    }
    if (rc == GX_OK && s->curve_stride)
        report_plateaus(s);
    if (rc == GX_OK && !s->n_lv) {
        /* a finding, not a failure: a target whose translation costs
         * nothing a chase can see (a simulated GPU without a tlb section) */
        infer_report_row(ctx, "tlb", "none visible",
                         "the curves at 3, 17 and 129 granules show no level with an entry reach",
                         NAN, 0);
    }
    tlb_meter_free(&s->m);
    free(s);
    return rc;
}
