/* validate.c - gx_profile_validate and gx_profile_check_model: the field
 * table's per-field rules (fields.c) over every present field, then the
 * cross-field rules, one function per rule, each failure naming the field
 * and the rule (cachegrind check_cache style).
 *
 * Notes:
 * - Kinds "reference" and "simulated" are run by the sim target, so every
 *   field the model needs (GX_FF_REQ rows, and the conditional latencies
 *   below) must be present; a "measured" profile may leave anything absent,
 *   but what is present must be consistent. gx_profile_check_model applies
 *   the requirements to any kind: the model trusts a profile that passes it
 *   and re-checks nothing.
 * - Hash masks act on physical addresses but only their line-address bits
 *   matter, so a mask bit below log2(line_bytes) is an error (validate_hash.c).
 * - Policy specs are checked against the policy registry (policy.h). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "validate_internal.h"

int gx_vbad(gx_msg *msg, const char *field, const char *fmt, ...)
{
    char rule[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return gx_fail(msg, GX_ECONFIG, "%s: %s", field, rule);
}

static int needs_all(const gx_profile *p)
{
    return strcmp(p->provenance.kind, "reference") == 0 ||
           strcmp(p->provenance.kind, "simulated") == 0;
}

static int check_kind(const gx_vctx *v)
{
    const char *k = v->p->provenance.kind;
    if (!*k)
        return BAD("provenance.kind", "missing (one of reference, simulated, measured)");
    if (strcmp(k, "reference") && strcmp(k, "simulated") && strcmp(k, "measured"))
        return BAD("provenance.kind", "\"%s\" is not one of reference, simulated, measured", k);
    return GX_OK;
}

/* ---- the table walk ---- */

static int custom_absent(const gx_field *f, const gx_profile *p)
{
    if (f->custom == GX_FC_HASH_SLICE)
        return !p->l2.slice_hash.present;
    if (f->custom == GX_FC_HASH_SET)
        return !p->l2.set_hash.present;
    return 0;
}

static int walk(const gx_vctx *v, gx_fgroup g, const char *prefix, const char *name_prefix,
                const void *base);

static int walk_row(const gx_vctx *v, const gx_field *f, const char *name,
                    const char *name_prefix, const void *base)
{
    const int absent = f->type == GX_FT_CUSTOM ? custom_absent(f, v->p)
                                                : gx_field_absent(f, base);
    if (absent && (f->flags & v->req) && v->all)
        return BAD(name, "required %s", v->why);
    int rc = gx_field_check(f, base, name, v->msg);
    if (rc || absent)
        return rc;
    switch (f->type) {
    case GX_FT_OBJ:
        return walk(v, f->group, f->path, name_prefix, base);
    case GX_FT_SUB:
        return walk(v, f->sub, "", name, gx_fptr(base, f->off));
    case GX_FT_ARR: {
        int n = *(const int *)gx_fptr(base, f->aux_off);
        for (int i = 0; i < n; i++) {
            char e[192];
            snprintf(e, sizeof e, "%.160s[%d]", name, i);
            if ((rc = walk(v, f->sub, "", e, gx_fptr(base, f->off + (size_t)i * f->size))))
                return rc;
        }
        return GX_OK;
    }
    default:
        return GX_OK;
    }
}

static int walk(const gx_vctx *v, gx_fgroup g, const char *prefix, const char *name_prefix,
                const void *base)
{
    size_t n;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++) {
        if (!gx_field_is_child(&t[i], g, prefix))
            continue;
        char name[192];
        if (*name_prefix)
            snprintf(name, sizeof name, "%s.%s", name_prefix, t[i].path);
        else
            snprintf(name, sizeof name, "%s", t[i].path);
        int rc = walk_row(v, &t[i], name, name_prefix, base);
        if (rc)
            return rc;
    }
    return GX_OK;
}

/* ---- l2 rules ---- */

static int rule_sector_divides_line(const gx_vctx *v)
{
    uint32_t line = v->p->l2.line_bytes, sec = v->p->l2.sector_bytes;
    if (sec && line && (sec > line || line % sec))
        return BAD("l2.sector_bytes", "%u must divide line_bytes = %u (the line or a "
                   "power-of-two fraction of it)", sec, line);
    return GX_OK;
}

static int rule_partitions_divide_slices(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    if (p->l2.partitions && p->l2.slices && p->l2.slices % p->l2.partitions)
        return BAD("l2.partitions", "%u must divide slices = %u", p->l2.partitions,
                   p->l2.slices);
    return GX_OK;
}

static int rule_capacity(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    if (p->l2.line_bytes && p->l2.ways && p->l2.slices && p->l2.sets_per_slice &&
        p->l2.capacity_bytes) {
        uint64_t c = (uint64_t)p->l2.slices * p->l2.sets_per_slice * p->l2.ways *
                     p->l2.line_bytes;
        if (c != p->l2.capacity_bytes)
            return BAD("l2.capacity_bytes",
                       "%" PRIu64 " != slices*sets_per_slice*ways*line_bytes = %" PRIu64,
                       p->l2.capacity_bytes, c);
    }
    return GX_OK;
}

static int rule_near_far_partitions(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    if (p->l2.topology == GX_TOPO_NEAR_FAR && p->l2.partitions && p->l2.partitions < 2)
        return BAD("l2.partitions", "near-far topology needs partitions >= 2, got %u",
                   p->l2.partitions);
    return GX_OK;
}

/* hit for uniform, near_hit and far_hit for near-far */
static int rule_topology_latencies(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    if (!v->all)
        return GX_OK;
    if (p->l2.topology == GX_TOPO_UNIFORM && isnan(p->l2.hit_cycles))
        return BAD("l2.latency_cycles.hit", "required %s", v->why);
    if (p->l2.topology == GX_TOPO_NEAR_FAR && isnan(p->l2.near_hit_cycles))
        return BAD("l2.latency_cycles.near_hit", "required %s", v->why);
    if (p->l2.topology == GX_TOPO_NEAR_FAR && isnan(p->l2.far_hit_cycles))
        return BAD("l2.latency_cycles.far_hit", "required %s", v->why);
    return GX_OK;
}

static int rule_far_stream_near_far(const gx_vctx *v)
{
    if (!isnan(v->p->l2.far_stream_extra_cycles) && v->p->l2.topology != GX_TOPO_NEAR_FAR)
        return BAD("l2.latency_cycles.far_stream_extra", "applies to a near-far topology only");
    return GX_OK;
}

static int rule_far_exceeds_near(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    if (!isnan(p->l2.near_hit_cycles) && !isnan(p->l2.far_hit_cycles) &&
        !(p->l2.far_hit_cycles > p->l2.near_hit_cycles))
        return BAD("l2.latency_cycles.far_hit", "%g must exceed near_hit = %g",
                   p->l2.far_hit_cycles, p->l2.near_hit_cycles);
    return GX_OK;
}

static int rule_dram_exceeds_l2(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    double top = isnan(p->l2.far_hit_cycles) ? p->l2.hit_cycles : p->l2.far_hit_cycles;
    if (!isnan(top) && !isnan(p->memory.dram_latency_cycles) &&
        !(p->memory.dram_latency_cycles > top))
        return BAD("memory.dram_latency_cycles", "%g must exceed the slowest L2 hit = %g",
                   p->memory.dram_latency_cycles, top);
    return GX_OK;
}

static int rule_levels_increase(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    for (int i = 1; i < p->l2.n_levels; i++)
        if (p->l2.levels[i].capacity_bytes <= p->l2.levels[i - 1].capacity_bytes) {
            char f[64];
            snprintf(f, sizeof f, "l2.levels_from_one_sm[%d].capacity_bytes", i);
            return BAD(f, "%" PRIu64 " must exceed the previous level's %" PRIu64
                       " (levels increase)", p->l2.levels[i].capacity_bytes,
                       p->l2.levels[i - 1].capacity_bytes);
        }
    return GX_OK;
}

static int rule_confidence(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    if (p->n_confidence < 0 || p->n_confidence > GX_MAX_CONFIDENCE)
        return BAD("confidence", "%d entries (0..%d)", p->n_confidence, GX_MAX_CONFIDENCE);
    for (int i = 0; i < p->n_confidence; i++) {
        double c = p->confidence[i].value;
        if (!(c >= 0 && c <= 1)) {
            char f[96];
            snprintf(f, sizeof f, "confidence.%s", p->confidence[i].key);
            return BAD(f, "%g must be in 0..1", c);
        }
    }
    return GX_OK;
}

/* The l2 rules, in order; they run when l2 is present. */
static const gx_vrule L2_RULES[] = {
    rule_sector_divides_line, rule_partitions_divide_slices, rule_capacity,
    rule_near_far_partitions, rule_topology_latencies,       rule_far_stream_near_far,
    rule_far_exceeds_near,    rule_dram_exceeds_l2,          rule_levels_increase,
    gx_vrule_hashes,
};

static int run(const gx_vctx *v)
{
    int rc;
    if ((rc = check_kind(v)) || (rc = walk(v, GX_FG_root, "", "", v->p)))
        return rc;
    if (v->p->l2.present)
        for (size_t i = 0; i < sizeof L2_RULES / sizeof L2_RULES[0]; i++)
            if ((rc = L2_RULES[i](v)))
                return rc;
    if ((rc = rule_confidence(v)))
        return rc;
    if (v->p->tlb.present && (rc = gx_vrule_tlb(v)))
        return rc;
    if (v->p->smem.present && (rc = gx_vrule_smem(v)))
        return rc;
    return GX_OK;
}

int gx_profile_validate(const gx_profile *p, gx_msg *msg)
{
    if (!p)
        return gx_fail(msg, GX_EINVAL, "gx_profile_validate: profile is NULL");
    char why[48];
    snprintf(why, sizeof why, "for a %s profile", p->provenance.kind);
    gx_vctx v = {p, needs_all(p), GX_FF_REQ, why, msg};
    return run(&v);
}

int gx_profile_check_model(const gx_profile *p, gx_msg *msg)
{
    if (!p)
        return gx_fail(msg, GX_EINVAL, "gx_profile_check_model: profile is NULL");
    gx_vctx v = {p, 1, GX_FF_MODEL, "by the model", msg};
    return run(&v);
}
