/* fields.c - the profile's field table (fields.def instantiated), defaults
 * and the per-field rule every module applies: range, power of two,
 * finiteness, enum and boolean values, policy spec, list lengths.
 *
 * Notes:
 * - A rule message names the field, the value and the documented range:
 *   "l2.ways: 65 must be in 1..64". The reader applies the same rule as the
 *   validator, so a JSON value and a struct value fail with one text.
 * - Doubles: finite and inside [lo, hi] ((lo, hi] with GX_FF_LO_OPEN).
 *   NaN is "absent" only where the default is NaN.
 * - Integers whose default is 0 and whose range starts above 0 use 0 for
 *   "absent"; the reader refuses an explicit 0 for them (null is absent). */
#include "fields.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/policy.h"

#define GX_NAN __builtin_nan("")

static const char *const gx_topology_names[] = {"", "uniform", "near-far", NULL};
static const char *const gx_sharing_names[] = {"", "sm", "tpc", "gpc", "gpu", NULL};
static const char *const gx_tlb_index_names[] = {"", "modulo", "xor", NULL};

#define OFF(g, m) offsetof(gx_fg_##g, m)
#define MSIZE(g, m) sizeof(((gx_fg_##g *)0)->m)
#define MCOUNT(g, m) ((int)(sizeof(((gx_fg_##g *)0)->m) / sizeof(((gx_fg_##g *)0)->m[0])))
#define BASE(g, p, t) .group = GX_FG_##g, .path = p, .type = t, .ddef = GX_NAN

#define GX_OBJ(g, p, w, fl, d)                                                                 \
    {BASE(g, p, GX_FT_OBJ), .off = GX_FNONE, .aux_off = GX_FNONE, .wmode = w, .flags = fl,      \
     .unit = "", .doc = d},
#define GX_OBJ_P(g, p, pres, w, fl, d)                                                         \
    {BASE(g, p, GX_FT_OBJ), .off = GX_FNONE, .aux_off = OFF(g, pres), .wmode = w, .flags = fl,  \
     .unit = "", .doc = d},
#define GX_SUB(g, p, m, sg, w, fl, c, o, d)                                                    \
    {BASE(g, p, GX_FT_SUB), .off = OFF(g, m), .size = MSIZE(g, m),                             \
     .aux_off = offsetof(gx_fg_##sg, present), .sub = GX_FG_##sg, .wmode = w, .flags = fl,      \
     .cmp = c, .cmp_order = o, .unit = "", .doc = d},
#define GX_ARR(g, p, cnt, m, sg, fl, w, c, o, cu, d)                                          \
    {BASE(g, p, GX_FT_ARR), .off = OFF(g, m), .size = sizeof(gx_fg_##sg),                      \
     .aux_off = OFF(g, cnt), .max_count = MCOUNT(g, m), .sub = GX_FG_##sg, .flags = fl,         \
     .wmode = w, .cmp = c, .cmp_order = o, .custom = cu, .unit = "", .doc = d},
#define GX_INT(t, g, p, m, given, lo, hi, def, fl, w, c, o, u, d)                              \
    {BASE(g, p, t), .off = OFF(g, m), .size = MSIZE(g, m), .aux_off = given, .ilo = lo,        \
     .ihi = hi, .idef = def, .flags = fl, .wmode = w, .cmp = c, .cmp_order = o, .unit = u,      \
     .doc = d},
#define GX_U32(g, p, m, lo, hi, def, fl, w, c, o, u, d)                                        \
    GX_INT(GX_FT_U32, g, p, m, GX_FNONE, lo, hi, def, fl, w, c, o, u, d)
#define GX_U64(g, p, m, lo, hi, def, fl, w, c, o, u, d)                                        \
    GX_INT(GX_FT_U64, g, p, m, GX_FNONE, lo, hi, def, fl, w, c, o, u, d)
#define GX_U64G(g, p, m, gv, lo, hi, def, fl, w, c, o, u, d)                                   \
    GX_INT(GX_FT_U64, g, p, m, OFF(g, gv), lo, hi, def, fl, w, c, o, u, d)
#define GX_DBL(g, p, m, lo, hi, def, fl, w, c, o, u, d)                                        \
    {.group = GX_FG_##g, .path = p, .type = GX_FT_DBL, .off = OFF(g, m), .size = MSIZE(g, m),   \
     .aux_off = GX_FNONE, .dlo = lo, .dhi = hi, .ddef = def, .flags = fl, .wmode = w,           \
     .cmp = c, .cmp_order = o, .unit = u, .doc = d},
#define GX_BOOL(g, p, m, fl, w, d)                                                             \
    {BASE(g, p, GX_FT_BOOL), .off = OFF(g, m), .size = MSIZE(g, m), .aux_off = GX_FNONE,       \
     .flags = fl, .wmode = w, .unit = "", .doc = d},
#define GX_BOOLC(g, p, m, fl, w, c, o, d)                                                      \
    {BASE(g, p, GX_FT_BOOL), .off = OFF(g, m), .size = MSIZE(g, m), .aux_off = GX_FNONE,       \
     .flags = fl, .wmode = w, .cmp = c, .cmp_order = o, .unit = "", .doc = d},
#define GX_STR(g, p, m, fl, w, c, o, d)                                                        \
    {BASE(g, p, GX_FT_STR), .off = OFF(g, m), .size = MSIZE(g, m), .aux_off = GX_FNONE,        \
     .flags = fl, .wmode = w, .cmp = c, .cmp_order = o, .unit = "", .doc = d},
#define GX_ENUM(g, p, m, nm, fl, w, c, o, d)                                                   \
    {BASE(g, p, GX_FT_ENUM), .off = OFF(g, m), .size = MSIZE(g, m), .aux_off = GX_FNONE,       \
     .names = nm, .flags = fl, .wmode = w, .cmp = c, .cmp_order = o, .unit = "", .doc = d},
#define GX_LIST(t, g, p, cnt, m, lo, hi, fl, w, c, o, u, d)                                    \
    {BASE(g, p, t), .off = OFF(g, m), .size = sizeof(((gx_fg_##g *)0)->m[0]),                  \
     .aux_off = OFF(g, cnt), .max_count = MCOUNT(g, m), .ilo = lo, .ihi = hi, .flags = fl,      \
     .wmode = w, .cmp = c, .cmp_order = o, .unit = u, .doc = d},
#define GX_LU64(g, p, cnt, m, lo, hi, fl, w, c, o, u, d)                                       \
    GX_LIST(GX_FT_LIST_U64, g, p, cnt, m, lo, hi, fl, w, c, o, u, d)
#define GX_LU32(g, p, cnt, m, lo, hi, fl, w, c, o, u, d)                                       \
    GX_LIST(GX_FT_LIST_U32, g, p, cnt, m, lo, hi, fl, w, c, o, u, d)
#define GX_CUSTOM(g, p, h, fl, c, o, d)                                                        \
    {BASE(g, p, GX_FT_CUSTOM), .off = GX_FNONE, .aux_off = GX_FNONE, .custom = h, .flags = fl,  \
     .cmp = c, .cmp_order = o, .unit = "", .doc = d},

static const gx_field FIELDS[] = {
#include "fields.def"
};

static const struct {
    const char *name;
    size_t size;
} GROUPS[GX_FG_COUNT] = {
    [GX_FG_root] = {"", sizeof(gx_fg_root)},
    [GX_FG_l2level] = {"l2.levels_from_one_sm[]", sizeof(gx_fg_l2level)},
    [GX_FG_tlblevel] = {"tlb.levels[]", sizeof(gx_fg_tlblevel)},
    [GX_FG_region] = {"tlb.page_table.regions[]", sizeof(gx_fg_region)},
    [GX_FG_smallcache] = {"tlb.walker.pwc", sizeof(gx_fg_smallcache)}, /* and neighbour_pwc */
};

const gx_field *gx_fields(size_t *n)
{
    *n = sizeof FIELDS / sizeof FIELDS[0];
    return FIELDS;
}

size_t gx_fgroup_size(gx_fgroup g)
{
    return (unsigned)g < GX_FG_COUNT ? GROUPS[g].size : 0;
}

const char *gx_fgroup_name(gx_fgroup g)
{
    return (unsigned)g < GX_FG_COUNT ? GROUPS[g].name : "?";
}

void gx_field_doc_name(const gx_field *f, char *buf, size_t cap)
{
    const char *g = gx_fgroup_name(f->group);
    snprintf(buf, cap, "%s%s%s", g, *g ? "." : "", f->path);
}

const gx_field *gx_field_find(gx_fgroup g, const char *path)
{
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        if (FIELDS[i].group == g && strcmp(FIELDS[i].path, path) == 0)
            return &FIELDS[i];
    return NULL;
}

int gx_field_is_child(const gx_field *r, gx_fgroup g, const char *prefix)
{
    if (r->group != g)
        return 0;
    size_t n = strlen(prefix);
    const char *rest = r->path;
    if (n) {
        if (strncmp(r->path, prefix, n) != 0 || r->path[n] != '.')
            return 0;
        rest = r->path + n + 1;
    }
    return *rest && !strchr(rest, '.');
}

const char *gx_field_key(const gx_field *r)
{
    const char *d = strrchr(r->path, '.');
    return d ? d + 1 : r->path;
}

/* ---- values ---- */

static uint64_t get_int(const gx_field *f, const void *base)
{
    if (f->size == sizeof(uint32_t))
        return *(const uint32_t *)gx_fptr(base, f->off);
    return *(const uint64_t *)gx_fptr(base, f->off);
}

static void set_int(const gx_field *f, void *base, uint64_t v)
{
    if (f->size == sizeof(uint32_t))
        *(uint32_t *)gx_fptr(base, f->off) = (uint32_t)v;
    else
        *(uint64_t *)gx_fptr(base, f->off) = v;
}

void gx_fields_init(gx_fgroup g, void *base)
{
    size_t n;
    const gx_field *t = gx_fields(&n);
    memset(base, 0, gx_fgroup_size(g));
    for (size_t i = 0; i < n; i++) {
        const gx_field *f = &t[i];
        if (f->group != g)
            continue;
        switch (f->type) {
        case GX_FT_U32:
        case GX_FT_U64:
            set_int(f, base, f->idef);
            break;
        case GX_FT_DBL:
            *(double *)gx_fptr(base, f->off) = f->ddef;
            break;
        case GX_FT_BOOL:
            *(int *)gx_fptr(base, f->off) = -1;
            break;
        case GX_FT_SUB:
            gx_fields_init(f->sub, gx_fptr(base, f->off));
            break;
        case GX_FT_ARR:
            for (int k = 0; k < f->max_count; k++)
                gx_fields_init(f->sub, gx_fptr(base, f->off + (size_t)k * f->size));
            break;
        default:
            break;
        }
    }
}

int gx_field_absent(const gx_field *f, const void *base)
{
    switch (f->type) {
    case GX_FT_OBJ:
    case GX_FT_SUB:
        if (f->aux_off == GX_FNONE)
            return 0;
        return !*(const int *)gx_fptr(base, f->type == GX_FT_SUB ? f->off + f->aux_off
                                                                  : f->aux_off);
    case GX_FT_U32:
    case GX_FT_U64:
        return f->idef == 0 && get_int(f, base) == 0 &&
               (f->aux_off == GX_FNONE || !*(const int *)gx_fptr(base, f->aux_off));
    case GX_FT_DBL:
        return isnan(f->ddef) && isnan(*(const double *)gx_fptr(base, f->off));
    case GX_FT_BOOL:
        return *(const int *)gx_fptr(base, f->off) == -1;
    case GX_FT_STR:
        return *(const char *)gx_fptr(base, f->off) == '\0';
    case GX_FT_ENUM:
        return *(const int *)gx_fptr(base, f->off) == 0;
    case GX_FT_ARR:
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32:
        return *(const int *)gx_fptr(base, f->aux_off) == 0;
    default:
        return 0;
    }
}

/* ---- rules ---- */

static uint64_t type_max(const gx_field *f)
{
    return (f->type == GX_FT_U32 || f->type == GX_FT_LIST_U32) ? UINT32_MAX : UINT64_MAX;
}

void gx_field_range_text(const gx_field *f, char *buf, size_t cap)
{
    if (f->type == GX_FT_DBL) {
        if ((f->flags & GX_FF_LO_OPEN) && f->dlo == 0)
            snprintf(buf, cap, "a positive number%s%s, at most %g",
                     *f->unit ? " of " : "", f->unit, f->dhi);
        else
            snprintf(buf, cap, "%s %g and <= %g%s%s", (f->flags & GX_FF_LO_OPEN) ? ">" : ">=",
                     f->dlo, f->dhi, *f->unit ? " " : "", f->unit);
        return;
    }
    const char *p2 = (f->flags & GX_FF_POW2) ? "a power of two " : "";
    if (f->ihi == type_max(f)) {
        if (f->ilo == 0)
            snprintf(buf, cap, "%s%s", *p2 ? "a power of two" : "any value", "");
        else if (f->ilo == 1 && !*p2)
            snprintf(buf, cap, "> 0");
        else
            snprintf(buf, cap, "%s>= %" PRIu64, p2, f->ilo);
    } else {
        snprintf(buf, cap, "%sin %" PRIu64 "..%" PRIu64, p2, f->ilo, f->ihi);
    }
}

int gx_field_check_int(const gx_field *f, uint64_t v, const char *name, gx_msg *msg)
{
    if (v >= f->ilo && v <= f->ihi && (!(f->flags & GX_FF_POW2) || gx_is_pow2_u64(v)))
        return GX_OK;
    char r[96];
    gx_field_range_text(f, r, sizeof r);
    return gx_fail(msg, GX_ECONFIG, "%s: %" PRIu64 " must be %s", name, v, r);
}

int gx_field_check_dbl(const gx_field *f, double v, const char *name, gx_msg *msg)
{
    int lo_ok = (f->flags & GX_FF_LO_OPEN) ? v > f->dlo : v >= f->dlo;
    if (isfinite(v) && lo_ok && v <= f->dhi)
        return GX_OK;
    char r[96];
    gx_field_range_text(f, r, sizeof r);
    return gx_fail(msg, GX_ECONFIG, "%s: %g must be %s", name, v, r);
}

static int names_count(const char *const *names)
{
    int n = 0;
    while (names[n])
        n++;
    return n;
}

/* "uniform, near-far" */
static void names_text(const char *const *names, char *buf, size_t cap)
{
    if (!cap)
        return;
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 1; names[i] && o < cap; i++) {
        int w = snprintf(buf + o, cap - o, "%s%s", i > 1 ? ", " : "", names[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

static int check_list(const gx_field *f, const void *base, const char *name, gx_msg *msg)
{
    int n = *(const int *)gx_fptr(base, f->aux_off);
    if (n < 0 || n > f->max_count)
        return gx_fail(msg, GX_ECONFIG, "%s: %d entries (0..%d)", name, n, f->max_count);
    if (f->type == GX_FT_ARR)
        return GX_OK;
    for (int i = 0; i < n; i++) {
        char e[160];
        snprintf(e, sizeof e, "%s[%d]", name, i);
        const void *p = gx_fptr(base, f->off + (size_t)i * f->size);
        uint64_t v = f->size == sizeof(uint32_t) ? *(const uint32_t *)p : *(const uint64_t *)p;
        int rc = gx_field_check_int(f, v, e, msg);
        if (rc)
            return rc;
    }
    return GX_OK;
}

int gx_field_check(const gx_field *f, const void *base, const char *name, gx_msg *msg)
{
    const int elem = (f->flags & GX_FF_ELEM) != 0;
    switch (f->type) {
    case GX_FT_U32:
    case GX_FT_U64:
        if (gx_field_absent(f, base) && !elem)
            return GX_OK;
        return gx_field_check_int(f, get_int(f, base), name, msg);
    case GX_FT_DBL: {
        double v = *(const double *)gx_fptr(base, f->off);
        if (gx_field_absent(f, base))
            return elem ? gx_fail(msg, GX_ECONFIG, "%s: required in every entry", name) : GX_OK;
        return gx_field_check_dbl(f, v, name, msg);
    }
    case GX_FT_BOOL: {
        int v = *(const int *)gx_fptr(base, f->off);
        if (v < -1 || v > 1)
            return gx_fail(msg, GX_ECONFIG, "%s: must be true or false", name);
        return GX_OK;
    }
    case GX_FT_STR: {
        const char *s = (const char *)gx_fptr(base, f->off);
        if (!*s)
            return elem ? gx_fail(msg, GX_ECONFIG, "%s: required in every entry", name) : GX_OK;
        if (!memchr(s, '\0', f->size))
            return gx_fail(msg, GX_ECONFIG, "%s: not terminated", name);
        if (f->flags & GX_FF_POLICY) {
            gx_policy pol;
            gx_msg pm;
            gx_msg_clear(&pm);
            if (gx_policy_from_spec(s, &pol, &pm) != GX_OK)
                return gx_fail(msg, GX_ECONFIG, "%s: \"%s\" is not a known policy spec: %s",
                               name, s, pm.text);
        }
        return GX_OK;
    }
    case GX_FT_ENUM: {
        int v = *(const int *)gx_fptr(base, f->off);
        if (v < 0 || v >= names_count(f->names)) {
            char nm[128];
            names_text(f->names, nm, sizeof nm);
            return gx_fail(msg, GX_ECONFIG, "%s: unknown value %d (%s)", name, v, nm);
        }
        return GX_OK;
    }
    case GX_FT_ARR:
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32:
        return check_list(f, base, name, msg);
    default:
        return GX_OK;
    }
}

/* An enum value's name, "" when absent or out of range. */
const char *gx_field_enum_name(const gx_field *f, int v)
{
    return (v > 0 && v < names_count(f->names)) ? f->names[v] : "";
}

void gx_field_names_text(const gx_field *f, char *buf, size_t cap)
{
    names_text(f->names, buf, cap);
}

int gx_field_enum_value(const gx_field *f, const char *name)
{
    for (int i = 1; f->names[i]; i++)
        if (strcmp(f->names[i], name) == 0)
            return i;
    return -1;
}
