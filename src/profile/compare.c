/* compare.c - gx_compare: per-field verdicts of a found profile against the
 * truth (see compare.h for the rules), by the field table: every row with a
 * compare rule (fields.def) gives a verdict row, in the rows' cmp_order.
 *
 * Notes:
 * - A field is compared when it is present in the truth (its objects
 *   present, the value not absent); the found value counts as absent when
 *   the found profile lacks the field or an object above it.
 * - Array entries (tlb.levels[i]) are compared index by index, named
 *   "tlb.levels[0].entries"; a policy is compared at the ways of its own
 *   cache (the "ways" field next to it).
 * - Hash functions: compare_hash.c; levels_from_one_sm: cmp_levels. */
#include "gpuxray/compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_internal.h"
#include "gpuxray/policy.h"

/* Compared rows of one profile pair, at most (a bound above the table's
 * rows times the array entries). */
#define MAX_ITEMS 256

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

gx_compare_row *gx_cmp_add_row(gx_compare_result *r, const char *field)
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
    gx_compare_row *row = gx_cmp_add_row(r, field);
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
    gx_compare_row *row = gx_cmp_add_row(r, field);
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

static void cmp_policy(gx_compare_result *r, const char *field, const char *t, const char *f,
                       double tol, uint32_t ways)
{
    if (!*t)
        return;
    gx_compare_row *row = gx_cmp_add_row(r, field);
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

static void cmp_bool(gx_compare_result *r, const char *field, int t, int f)
{
    if (t < 0)
        return;
    gx_compare_row *row = gx_cmp_add_row(r, field);
    if (!row)
        return;
    snprintf(row->truth, sizeof row->truth, "%s", t ? "true" : "false");
    snprintf(row->found, sizeof row->found, "%s", f < 0 ? "-" : f ? "true" : "false");
    row->verdict = f < 0 ? GX_VERDICT_MISSING : t == f ? GX_VERDICT_MATCH : GX_VERDICT_MISMATCH;
}

static void cmp_enum(gx_compare_result *r, const char *field, const gx_field *fd, int t, int f)
{
    const char *tn = gx_field_enum_name(fd, t), *fn = gx_field_enum_name(fd, f);
    if (!*tn)
        return;
    gx_compare_row *row = gx_cmp_add_row(r, field);
    if (!row)
        return;
    snprintf(row->truth, sizeof row->truth, "%s", tn);
    snprintf(row->found, sizeof row->found, "%s", *fn ? fn : "-");
    row->verdict = !*fn ? GX_VERDICT_MISSING : t == f ? GX_VERDICT_MATCH : GX_VERDICT_MISMATCH;
}

/* "4096,65536,2097152" */
static void list_text(char *buf, size_t cap, const gx_field *fd, const void *base)
{
    size_t o = 0;
    int n = *(const int *)gx_fptr(base, fd->aux_off);
    buf[0] = '\0';
    for (int i = 0; i < n && o < cap; i++) {
        const void *e = gx_fptr(base, fd->off + (size_t)i * fd->size);
        uint64_t v = fd->size == sizeof(uint32_t) ? *(const uint32_t *)e : *(const uint64_t *)e;
        int w = snprintf(buf + o, cap - o, "%s%" PRIu64, i ? "," : "", v);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

static void cmp_list(gx_compare_result *r, const char *field, const gx_field *fd,
                     const void *tb, const void *fb)
{
    if (gx_field_absent(fd, tb))
        return;
    gx_compare_row *row = gx_cmp_add_row(r, field);
    if (!row)
        return;
    list_text(row->truth, sizeof row->truth, fd, tb);
    if (!fb || gx_field_absent(fd, fb)) {
        snprintf(row->found, sizeof row->found, "-");
        row->verdict = GX_VERDICT_MISSING;
        return;
    }
    list_text(row->found, sizeof row->found, fd, fb);
    row->verdict = strcmp(row->truth, row->found) == 0 ? GX_VERDICT_MATCH : GX_VERDICT_MISMATCH;
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
    gx_compare_row *row = gx_cmp_add_row(r, "l2.levels_from_one_sm");
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

/* ------------------------------------------------------ the table walk */

typedef struct item {
    const gx_field *f;
    char name[128];
    const void *tb, *fb; /* the field's group struct in truth / found; fb NULL: absent */
    int order, seq;
} item;

typedef struct items {
    item v[MAX_ITEMS];
    int n;
} items;

static void add_item(items *c, const gx_field *f, const char *name, const void *tb,
                     const void *fb, int order)
{
    if (c->n >= MAX_ITEMS)
        return;
    item *it = &c->v[c->n];
    it->f = f;
    snprintf(it->name, sizeof it->name, "%s", name);
    it->tb = tb;
    it->fb = fb;
    it->order = order;
    it->seq = c->n++;
}

static void collect(items *c, gx_fgroup g, const char *prefix, const char *name_prefix,
                    const void *tb, const void *fb, int order);

static void collect_array(items *c, const gx_field *f, const char *name, const void *tb,
                          const void *fb)
{
    int tn = *(const int *)gx_fptr(tb, f->aux_off);
    int fn = fb ? *(const int *)gx_fptr(fb, f->aux_off) : 0;
    for (int i = 0; i < tn && i < f->max_count; i++) {
        char e[128];
        snprintf(e, sizeof e, "%.100s[%d]", name, i);
        const void *te = gx_fptr(tb, f->off + (size_t)i * f->size);
        const void *fe = i < fn ? gx_fptr(fb, f->off + (size_t)i * f->size) : NULL;
        collect(c, f->sub, "", e, te, fe, f->cmp_order);
    }
}

static void collect(items *c, gx_fgroup g, const char *prefix, const char *name_prefix,
                    const void *tb, const void *fb, int order)
{
    size_t n;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++) {
        const gx_field *f = &t[i];
        if (!gx_field_is_child(f, g, prefix))
            continue;
        char name[128];
        if (*name_prefix)
            snprintf(name, sizeof name, "%s.%s", name_prefix, f->path);
        else
            snprintf(name, sizeof name, "%s", f->path);
        const int here = order ? order : f->cmp_order;
        if (f->type == GX_FT_OBJ) {
            if (!gx_field_absent(f, tb))
                collect(c, g, f->path, name_prefix, tb,
                        fb && !gx_field_absent(f, fb) ? fb : NULL, order);
        } else if (f->cmp == GX_CMP_NONE) {
            continue;
        } else if (f->type == GX_FT_SUB) {
            if (!gx_field_absent(f, tb))
                collect(c, f->sub, "", name, gx_fptr(tb, f->off),
                        fb && !gx_field_absent(f, fb) ? gx_fptr(fb, f->off) : NULL, here);
        } else if (f->type == GX_FT_ARR && f->cmp != GX_CMP_CUSTOM) {
            collect_array(c, f, name, tb, fb);
        } else {
            add_item(c, f, name, tb, fb, here);
        }
    }
}

static int item_order(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The ways of the cache a policy belongs to (the "ways" row beside it). */
static uint32_t sibling_ways(const gx_field *f, const void *base)
{
    char path[96];
    const char *d = strrchr(f->path, '.');
    int plen = d ? (int)(d - f->path) + 1 : 0;
    snprintf(path, sizeof path, "%.*sways", plen, f->path);
    const gx_field *w = gx_field_find(f->group, path);
    return w && w->type == GX_FT_U32 ? *(const uint32_t *)gx_fptr(base, w->off) : 0;
}

static void cmp_item(gx_compare_result *r, const item *it, const gx_profile *t,
                     const gx_profile *f, const gx_compare_opts *o, int *err)
{
    const gx_field *fd = it->f;
    const void *tv = gx_fptr(it->tb, fd->off), *fv = it->fb ? gx_fptr(it->fb, fd->off) : NULL;
    switch (fd->type) {
    case GX_FT_U32:
        cmp_uint(r, it->name, *(const uint32_t *)tv, fv ? *(const uint32_t *)fv : 0);
        break;
    case GX_FT_U64:
        cmp_uint(r, it->name, *(const uint64_t *)tv, fv ? *(const uint64_t *)fv : 0);
        break;
    case GX_FT_DBL:
        cmp_latency(r, it->name, *(const double *)tv, fv ? *(const double *)fv : NAN,
                    o->latency_rel_tol);
        break;
    case GX_FT_STR:
        cmp_policy(r, it->name, tv, fv ? (const char *)fv : "", o->policy_param_abs_tol,
                   sibling_ways(fd, it->tb));
        break;
    case GX_FT_ENUM:
        cmp_enum(r, it->name, fd, *(const int *)tv, fv ? *(const int *)fv : 0);
        break;
    case GX_FT_BOOL:
        cmp_bool(r, it->name, *(const int *)tv, fv ? *(const int *)fv : -1);
        break;
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32:
        cmp_list(r, it->name, fd, it->tb, it->fb);
        break;
    case GX_FT_ARR:
        if (fd->custom == GX_FC_L2_LEVELS)
            cmp_levels(r, t, f, o);
        break;
    case GX_FT_CUSTOM:
        if (fd->custom == GX_FC_HASH_SLICE || fd->custom == GX_FC_HASH_SET)
            gx_cmp_hash(r, it->name, t, f, fd->custom == GX_FC_HASH_SET, o, err);
        break;
    default:
        break;
    }
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
    items *c = malloc(sizeof *c);
    if (!c)
        return gx_fail(msg, GX_ENOMEM, "gx_compare: out of memory");
    c->n = 0;
    collect(c, GX_FG_root, "", "", truth, found, 0);
    qsort(c->v, (size_t)c->n, sizeof c->v[0], item_order);
    int err = GX_OK;
    for (int i = 0; i < c->n && err == GX_OK; i++)
        cmp_item(result, &c->v[i], truth, found, &o, &err);
    free(c);
    if (err != GX_OK)
        return gx_fail(msg, err, "gx_compare: out of memory");
    count(result);
    return GX_OK;
}
