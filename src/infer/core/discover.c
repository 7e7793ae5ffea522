/* discover.c - the discovery pipeline (Contract 3): runs the stages in
 * order (timer, levels, line, slices, ways, sets, policy), honours --only
 * (prerequisites run anyway), records each stage's cost from the target's
 * counters, fills the measured profile's provenance / device / memory
 * fields and cross-checks l2.capacity_bytes against the geometry.
 *
 * Notes:
 * - A stage that fails (or is unsure) is recorded with its message; stages
 *   that depend on it are skipped with a note. Its fields stay absent.
 * - Slices run before ways (ways builds slice-guided pools when same-offset
 *   pools do not evict). A stage whose results name arena offsets (the
 *   slice hash's reference page) is marked pins_arena in the stage table:
 *   before it runs, every selected later stage's arena hook allocates the
 *   arena that stage will need (the ways stage's pools span as many pages
 *   as the target allows), so no later replacement invalidates them.
 * - l2.capacity_bytes goes into the profile only when the geometry
 *   (slices x sets_per_slice x ways x line_bytes) is complete and agrees
 *   with the capacity the levels measured (within 12.5 %): the geometry is
 *   exact, the levels' halfway crossing only approximate. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../evset/evset.h"
#include "gpuxray/slicepredict.h"
#include "../infer.h"
#include "../infer_util.h"
#include "../stages/tlb/tlb_stage.h"

#ifndef GX_TOOL_VERSION
#define GX_TOOL_VERSION "0.1.0"
#endif


enum {
    ST_TIMER = 0,
    ST_LEVELS,
    ST_LINE,
    ST_SLICES,
    ST_WAYS,
    ST_SETS,
    ST_POLICY,
    ST_SMEM,
    ST_TLB,
    ST_COUNT
};

#define BIT(s) (1u << (s))

/* The stage's own result struct in the context (results.h). */
#define OWNS(field)                                                                \
    .own_off = offsetof(gx_infer, field), .own_len = sizeof(((gx_infer *)0)->field)

static const struct {
    const char *name;
    int (*fn)(gx_infer *);
    unsigned needs;            /* direct prerequisites */
    size_t own_off, own_len;   /* its result struct (none: it writes only the profile) */
    unsigned also_writes;      /* stages whose results it may change besides its own */
    int (*arena)(gx_infer *);  /* allocates the arena the stage will need, before a
                                  pins_arena stage runs (NULL: the default arena) */
    int pins_arena;            /* its results name offsets of the current arena */
} stages[ST_COUNT] = {
    {.name = "timer", .fn = gx_stage_timer, OWNS(timer)},
    {.name = "levels", .fn = gx_stage_levels, .needs = BIT(ST_TIMER), OWNS(levels)},
    {.name = "line", .fn = gx_stage_line, .needs = BIT(ST_TIMER) | BIT(ST_LEVELS), OWNS(line)},
    {.name = "slices", .fn = gx_stage_slices, .needs = BIT(ST_LINE), OWNS(slices),
     .pins_arena = 1},
    {.name = "ways", .fn = gx_stage_ways, .needs = BIT(ST_LINE), OWNS(ways),
     .arena = gx_ways_arena_prepare},
    {.name = "sets", .fn = gx_stage_sets, .needs = BIT(ST_WAYS) | BIT(ST_SLICES), OWNS(sets)},
    /* the policy stage grows the eviction sets' pools (gx_ways_grow_pool) */
    {.name = "policy", .fn = gx_stage_policy, .needs = BIT(ST_WAYS), OWNS(policy),
     .also_writes = BIT(ST_WAYS)},
    {.name = "smem", .fn = gx_stage_smem},
    {.name = "tlb", .fn = gx_stage_tlb, .needs = BIT(ST_TIMER)},
};

/* The stage names, comma-separated, in pipeline order: written from the
 * table above (the only list of stages), on the first call (the command
 * line asks before any discovery runs). */
const char *gx_discover_stage_names(void)
{
    static char names[ST_COUNT * 16];
    if (!names[0]) {
        size_t len = 0;
        for (int st = 0; st < ST_COUNT && len < sizeof names; st++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", st ? "," : "",
                                    stages[st].name);
    }
    return names;
}

/* Close a set of stages under prerequisites. */
static unsigned with_prereqs(unsigned sel)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int s = 0; s < ST_COUNT; s++)
            if ((sel & BIT(s)) && (sel | stages[s].needs) != sel) {
                sel |= stages[s].needs;
                changed = 1;
            }
    }
    return sel;
}

static int parse_only(const char *only, unsigned *sel, gx_msg *msg)
{
    *sel = 0;
    if (!only || !*only) {
        *sel = BIT(ST_COUNT) - 1;
        return GX_OK;
    }
    const char *p = only;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = -1;
        for (int s = 0; s < ST_COUNT; s++)
            if (strlen(stages[s].name) == len && strncmp(stages[s].name, p, len) == 0)
                found = s;
        if (found < 0)
            return gx_fail(msg, GX_EINVAL, "unknown stage '%.*s' in --only (stages: %s)",
                           (int)len, p, gx_discover_stage_names());
        *sel |= BIT(found);
        p += len;
        if (*p == ',')
            p++;
    }
    if (!*sel)
        return gx_fail(msg, GX_EINVAL, "--only names no stage (stages: %s)",
                       gx_discover_stage_names());
    *sel = with_prereqs(*sel);
    return GX_OK;
}

static void fill_header(gx_infer *ctx, const gx_discover_opts *opts)
{
    gx_profile *p = ctx->out;
    const gx_target_info *in = ctx->info;
    snprintf(p->name, sizeof p->name, "measured %.100s", in->name[0] ? in->name : in->spec);
    snprintf(p->provenance.kind, sizeof p->provenance.kind, "measured");
    snprintf(p->provenance.target, sizeof p->provenance.target, "%s", in->spec);
    snprintf(p->provenance.tool_version, sizeof p->provenance.tool_version, "%s",
             GX_TOOL_VERSION);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(p->provenance.created, sizeof p->provenance.created, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    p->provenance.seed = opts ? opts->seed : 0;
    p->provenance.seed_given = opts != NULL;
    snprintf(p->device.name, sizeof p->device.name, "%s", in->name);
    p->device.sm_count = in->sm_count;
    p->device.sm_clock_mhz = in->sm_clock_mhz;
    p->device.api_l2_bytes = in->api_l2_bytes;
    p->memory.page_bytes = in->page_bytes;
}

/* l2.capacity_bytes: exact from a complete geometry that agrees with the levels. */
static void capacity_check(gx_infer *ctx)
{
    gx_profile *p = ctx->out;
    char v[128], m[160], a[32], b[32];
    uint64_t lv = ctx->levels.have ? ctx->levels.l2_capacity : 0;
    int complete = p->l2.slices && p->l2.sets_per_slice && p->l2.ways && p->l2.line_bytes;
    if (!complete) {
        if (!lv)
            return;
        snprintf(v, sizeof v, "~%s", infer_fmt_bytes(lv, a, sizeof a));
        infer_report_row(ctx, "l2.capacity_bytes", v,
                         "residency estimate of the last L2 level (geometry incomplete)", 0.5, 0);
        return;
    }
    uint64_t geom = (uint64_t)p->l2.slices * p->l2.sets_per_slice * p->l2.ways * p->l2.line_bytes;
    double rel = lv ? fabs((double)geom - (double)lv) / (double)lv : NAN;
    snprintf(v, sizeof v, "%llu", (unsigned long long)geom);
    if (lv && rel <= 0.125) {
        double conf = 1.0;
        const char *keys[] = {"l2.slices", "l2.sets_per_slice", "l2.ways", "l2.line_bytes"};
        for (int i = 0; i < 4; i++) {
            double c = gx_profile_confidence(p, keys[i]);
            if (isfinite(c) && c < conf)
                conf = c;
        }
        p->l2.capacity_bytes = geom;
        gx_profile_set_confidence(p, "l2.capacity_bytes", conf);
        snprintf(m, sizeof m, "slices x sets x ways x line; levels say %s (%.1f%% off)",
                 infer_fmt_bytes(lv, a, sizeof a), 100 * rel);
        infer_report_row(ctx, "l2.capacity_bytes", v, m, conf, 1);
    } else {
        snprintf(m, sizeof m, "geometry %s disagrees with the levels' %s",
                 infer_fmt_bytes(geom, a, sizeof a), lv ? infer_fmt_bytes(lv, b, sizeof b) : "?");
        infer_report_row(ctx, "l2.capacity_bytes", v, m, 0.2, 0);
    }
}

/* Before stage s, whose results name offsets of the current arena: the
 * arenas of the selected stages after it, so that none of them replaces the
 * arena later. A failure is left to the stage itself to report. */
static void prepare_arenas(gx_infer *ctx, unsigned sel, int s)
{
    for (int q = s + 1; q < ST_COUNT; q++)
        if ((sel & BIT(q)) && stages[q].arena) {
            (void)stages[q].arena(ctx);
            gx_msg_clear(ctx->msg);
        }
}

/* Run stage s and hold it to the rule of results.h: it changes no other
 * stage's result struct (before is scratch for the copy). A breach is a
 * pipeline error, named, and fails the stage. */
static int run_stage(gx_infer *ctx, int s, gx_infer *before)
{
    memcpy(before, ctx, sizeof *ctx); /* ~4 KB a stage: nothing beside its probes */
    int rc = stages[s].fn(ctx);
    for (int q = 0; q < ST_COUNT; q++) {
        size_t off = stages[q].own_off, len = stages[q].own_len;
        if (q == s || !len || (stages[s].also_writes & BIT(q)))
            continue;
        if (memcmp((const char *)ctx + off, (const char *)before + off, len) != 0)
            return gx_fail(ctx->msg, GX_EINVAL,
                           "stage %s changed the %s stage's results (stages write only their own)",
                           stages[s].name, stages[q].name);
    }
    return rc;
}

static void free_ctx(gx_infer *ctx)
{
    for (int i = 0; i < ctx->ways.n_evsets && i < GX_INFER_MAX_EVSETS; i++) {
        free(ctx->ways.evsets[i].lines);
        free(ctx->ways.evsets[i].pool);
    }
    gx_hash_clear(&ctx->slices.hash);
    gx_hash_clear(&ctx->sets.hash);
    gx_slicepred_free(ctx->slices.pred);
    ctx->slices.pred = NULL;
    gx_slicepred_free(ctx->slices.lpred);
    ctx->slices.lpred = NULL;
}

static void record_stage(gx_report *rep, const char *name, int status, const char *note,
                         const gx_target_stats *a, const gx_target_stats *b)
{
    if (!rep || rep->n_stages >= GX_REPORT_MAX_STAGES)
        return;
    gx_stage_cost *c = &rep->stages[rep->n_stages++];
    snprintf(c->stage, sizeof c->stage, "%s", name);
    c->status = status;
    /* cut to fit (a note is one line of the table); memcpy, not snprintf, whose
     * truncation gcc -O3 reports as a warning */
    size_t len = note ? strnlen(note, sizeof c->note - 1) : 0;
    if (len)
        memcpy(c->note, note, len);
    c->note[len] = '\0';
    c->calls = b->calls - a->calls;
    c->accesses = b->accesses - a->accesses;
    c->serial_accesses = b->serial_accesses - a->serial_accesses;
    c->seconds = b->seconds - a->seconds;
}

int gx_discover(gx_target *t, const gx_discover_opts *opts, gx_profile **found,
                gx_report *report, gx_msg *msg)
{
    if (!t || !found)
        return gx_fail(msg, GX_EINVAL, "gx_discover: NULL argument");
    *found = NULL;
    unsigned sel = 0;
    int rc = parse_only(opts ? opts->only : NULL, &sel, msg);
    if (rc != GX_OK)
        return rc;
    gx_report local_report;
    gx_report *rep = report ? report : &local_report;
    memset(rep, 0, sizeof *rep);
    if (opts && opts->record && report)
        rep->data = json_object(); /* NULL on out of memory: nothing recorded */
    gx_infer *ctx = calloc(1, sizeof *ctx), *snap = malloc(sizeof *snap);
    gx_msg stage_msg;
    if (!ctx || !snap) {
        free(ctx);
        free(snap);
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    }
    ctx->t = t;
    ctx->info = gx_target_get_info(t);
    gx_rng_seed(&ctx->rng, opts ? opts->seed : 1);
    ctx->msg = &stage_msg;
    ctx->progress = opts ? opts->progress : NULL;
    ctx->progress_user = opts ? opts->progress_user : NULL;
    ctx->report = rep;
    ctx->levels.hit_latency = ctx->levels.miss_latency = NAN; /* unknown until the levels stage */
    ctx->out = gx_profile_new();
    if (!ctx->out) {
        free(ctx);
        free(snap);
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    }
    fill_header(ctx, opts);
    gx_target_stats start, before, after;
    gx_target_get_stats(t, &start);
    unsigned ok = 0;
    int first_err = GX_OK;
    for (int s = 0; s < ST_COUNT; s++) {
        if (!(sel & BIT(s)))
            continue;
        unsigned need = with_prereqs(stages[s].needs);
        gx_target_get_stats(t, &before);
        if ((need & ok) != need) {
            char note[160] = "skipped: needs";
            for (int q = 0; q < ST_COUNT; q++)
                if ((need & BIT(q)) && !(ok & BIT(q))) {
                    size_t len = strlen(note);
                    snprintf(note + len, sizeof note - len, " %s", stages[q].name);
                }
            record_stage(rep, stages[s].name, GX_EUNSURE, note, &before, &before);
            if (first_err == GX_OK)
                first_err = GX_EUNSURE;
            continue;
        }
        infer_progress(ctx, "stage %s ...", stages[s].name);
        gx_msg_clear(&stage_msg);
        if (stages[s].pins_arena)
            prepare_arenas(ctx, sel, s);
        int src = run_stage(ctx, s, snap);
        gx_target_get_stats(t, &after);
        record_stage(rep, stages[s].name, src, src == GX_OK ? "" : stage_msg.text, &before,
                     &after);
        infer_progress(ctx, "stage %s: %s (%.2f s, %llu accesses)", stages[s].name,
                       src == GX_OK ? "ok" : gx_strerror(src), after.seconds - before.seconds,
                       (unsigned long long)(after.accesses - before.accesses));
        if (src == GX_OK)
            ok |= BIT(s);
        else if (first_err == GX_OK)
            first_err = src;
        if (src == GX_ENODEV || src == GX_EDEVICE || src == GX_ENOMEM)
            break; /* the target or the host is gone: stop */
    }
    capacity_check(ctx);
    gx_target_get_stats(t, &after);
    ctx->out->provenance.queries = after.calls - start.calls;
    ctx->out->provenance.accesses = after.accesses - start.accesses;
    ctx->out->provenance.seconds = after.seconds - start.seconds;
    gx_msg vmsg;
    if (gx_profile_validate(ctx->out, &vmsg) != GX_OK)
        infer_report_row(ctx, "profile validation", "FAILED", vmsg.text, NAN, 0);
    *found = ctx->out;
    free_ctx(ctx);
    free(ctx);
    free(snap);
    if (first_err != GX_OK) {
        for (int i = 0; i < rep->n_stages; i++)
            if (rep->stages[i].status != GX_OK) {
                gx_fail(msg, first_err, "stage %s: %s", rep->stages[i].stage,
                        rep->stages[i].note[0] ? rep->stages[i].note
                                               : gx_strerror(rep->stages[i].status));
                break;
            }
        return first_err;
    }
    return GX_OK;
}
