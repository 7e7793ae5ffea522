/* profile_json.c - the profile's JSON form (docs/profile-format.md): parse
 * text into a gx_profile and write a gx_profile back, atomically, both by
 * walking the field table (fields.def).
 *
 * Notes:
 * - jansson with JSON_REJECT_DUPLICATES; a syntax error reads
 *   "SOURCE:LINE:COL: text" (GX_EPARSE). A field of the wrong type or out of
 *   range reads "SOURCE: FIELD: rule" (GX_ECONFIG), with the value given.
 * - JSON null and a missing key both mean "absent" (fields.h encoding).
 * - Numbers are strict: an integer field takes a JSON integer >= 0 (or a
 *   real with an integral value up to 2^53, which is exact), never a
 *   fraction, a negative or a value outside the field's range; 64-bit
 *   fields also take a decimal string, needed above 2^63-1 (jansson's
 *   integers are int64) and written only there. A double field takes any
 *   finite number inside its documented range; nothing is clamped.
 * - The whole loaded document is kept in p->doc; save writes the known
 *   fields over a copy of it, so unknown fields at any level (top, l2,
 *   hash, sim, tlb, array entries ...) survive a load/save round trip. Key
 *   order is the document's; new keys follow the table's order.
 * - Reals are written with 10 significant digits (JSON_REAL_PRECISION). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuxray/outfile.h"
#include "json_internal.h"

/* Above this a double does not hold every integer exactly. */
#define EXACT_INT_LIMIT 9007199254740992.0 /* 2^53 */

int gx_jbad(gx_pctx *c, const char *field, const char *fmt, ...)
{
    char rule[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return gx_fail(c->msg, GX_ECONFIG, "%s: %s: %s", c->src, field, rule);
}

void gx_jdescribe(const json_t *v, char *buf, size_t cap)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, cap, "an object");
        break;
    case JSON_ARRAY:
        snprintf(buf, cap, "an array");
        break;
    case JSON_STRING:
        if (json_string_length(v) <= 24)
            snprintf(buf, cap, "the string \"%s\"", json_string_value(v));
        else
            snprintf(buf, cap, "a string");
        break;
    case JSON_INTEGER:
        snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL: /* the shortest text that reads back as the same double */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, cap, "%.*g", prec, json_real_value(v));
            if (strtod(buf, NULL) == json_real_value(v))
                break;
        }
        break;
    case JSON_TRUE:
        snprintf(buf, cap, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, cap, "false");
        break;
    default:
        snprintf(buf, cap, "null");
        break;
    }
}

json_t *gx_jval(const json_t *obj, const char *key)
{
    if (!obj || !json_is_object(obj))
        return NULL;
    json_t *v = json_object_get(obj, key);
    return (v && !json_is_null(v)) ? v : NULL;
}

static int parse_decimal(const char *s, uint64_t *out)
{
    if (!*s || strlen(s) > 20)
        return -1;
    uint64_t x = 0;
    for (const char *q = s; *q; q++) {
        if (*q < '0' || *q > '9')
            return -1;
        unsigned d = (unsigned)(*q - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

int gx_jas_u64(const json_t *v, int strings_ok, uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0)
            return -1;
        *out = (uint64_t)i;
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!(d >= 0) || d != floor(d) || d > EXACT_INT_LIMIT)
            return -1;
        *out = (uint64_t)d;
        return 0;
    }
    if (strings_ok && json_is_string(v))
        return parse_decimal(json_string_value(v), out);
    return -1;
}

json_t *gx_ju64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return json_string(b);
}

json_t *gx_jnum(double v)
{
    if (!isfinite(v))
        return json_null();
    if (v == floor(v) && fabs(v) < 1e15)
        return json_integer((json_int_t)v);
    return json_real(v);
}

json_t *gx_jsub(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);
    if (o && json_is_object(o))
        return o;
    o = json_object();
    json_object_set_new(parent, key, o);
    return o;
}

void gx_jput(json_t *obj, const char *key, json_t *v, int always)
{
    if (v) {
        json_object_set_new(obj, key, v);
        return;
    }
    if (always || json_object_get(obj, key))
        json_object_set_new(obj, key, json_null());
}

/* ---------------------------------------------------------------- read */

static void full_name(char *out, size_t cap, const char *prefix, const char *path)
{
    if (prefix && *prefix)
        snprintf(out, cap, "%s.%s", prefix, path);
    else
        snprintf(out, cap, "%s", path);
}

static int rd_int(gx_pctx *c, const gx_field *f, const json_t *v, const char *name,
                  uint64_t *out)
{
    const int is64 = f->type == GX_FT_U64 || f->type == GX_FT_LIST_U64;
    if (gx_jas_u64(v, is64, out) != 0) {
        char d[64];
        gx_jdescribe(v, d, sizeof d);
        if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
            json_real_value(v) > EXACT_INT_LIMIT)
            return gx_jbad(c, name, "expected an exact integer, got %s (a real above 2^53%s)",
                           d, is64 ? "; write it as an integer or a decimal string" : "");
        return gx_jbad(c, name, "expected a non-negative integer%s, got %s",
                       is64 ? " (or a decimal string)" : "", d);
    }
    gx_msg m;
    if (gx_field_check_int(f, *out, name, &m) != GX_OK)
        return gx_fail(c->msg, GX_ECONFIG, "%s: %s", c->src, m.text);
    return GX_OK;
}

static int rd_list(gx_pctx *c, const gx_field *f, const json_t *v, const char *name, void *base)
{
    char d[64], e[192];
    if (!json_is_array(v)) {
        gx_jdescribe(v, d, sizeof d);
        return gx_jbad(c, name, "expected an array of integers, got %s", d);
    }
    if (json_array_size(v) > (size_t)f->max_count)
        return gx_jbad(c, name, "%zu entries: at most %d", json_array_size(v), f->max_count);
    for (size_t i = 0; i < json_array_size(v); i++) {
        uint64_t x = 0;
        snprintf(e, sizeof e, "%.160s[%zu]", name, i);
        int rc = rd_int(c, f, json_array_get(v, i), e, &x);
        if (rc)
            return rc;
        void *p = gx_fptr(base, f->off + i * f->size);
        if (f->size == sizeof(uint32_t))
            *(uint32_t *)p = (uint32_t)x;
        else
            *(uint64_t *)p = x;
    }
    *(int *)gx_fptr(base, f->aux_off) = (int)json_array_size(v);
    return GX_OK;
}

static int rd_leaf(gx_pctx *c, const gx_field *f, const json_t *v, const char *name, void *base)
{
    char d[64];
    void *p = gx_fptr(base, f->off);
    switch (f->type) {
    case GX_FT_U32:
    case GX_FT_U64: {
        uint64_t x = 0;
        int rc = rd_int(c, f, v, name, &x);
        if (rc)
            return rc;
        if (f->size == sizeof(uint32_t))
            *(uint32_t *)p = (uint32_t)x;
        else
            *(uint64_t *)p = x;
        if (f->aux_off != GX_FNONE)
            *(int *)gx_fptr(base, f->aux_off) = 1;
        return GX_OK;
    }
    case GX_FT_DBL: {
        if (!json_is_number(v)) {
            gx_jdescribe(v, d, sizeof d);
            return gx_jbad(c, name, "expected a number, got %s", d);
        }
        gx_msg m;
        if (gx_field_check_dbl(f, json_number_value(v), name, &m) != GX_OK)
            return gx_fail(c->msg, GX_ECONFIG, "%s: %s", c->src, m.text);
        *(double *)p = json_number_value(v);
        return GX_OK;
    }
    case GX_FT_BOOL:
        if (!json_is_boolean(v)) {
            gx_jdescribe(v, d, sizeof d);
            return gx_jbad(c, name, "expected true or false, got %s", d);
        }
        *(int *)p = json_is_true(v) ? 1 : 0;
        return GX_OK;
    case GX_FT_STR:
        if (!json_is_string(v)) {
            gx_jdescribe(v, d, sizeof d);
            return gx_jbad(c, name, "expected a string, got %s", d);
        }
        if (json_string_length(v) >= f->size)
            return gx_jbad(c, name, "string longer than %zu characters", f->size - 1);
        snprintf((char *)p, f->size, "%s", json_string_value(v));
        return GX_OK;
    case GX_FT_ENUM: {
        char nm[128];
        gx_field_names_text(f, nm, sizeof nm);
        int e = json_is_string(v) ? gx_field_enum_value(f, json_string_value(v)) : -1;
        if (e < 0) {
            gx_jdescribe(v, d, sizeof d);
            return gx_jbad(c, name, "expected one of %s, got %s", nm, d);
        }
        *(int *)p = e;
        return GX_OK;
    }
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32:
        return rd_list(c, f, v, name, base);
    default:
        return GX_OK;
    }
}

static int rd_group(gx_pctx *c, const json_t *obj, gx_fgroup g, const char *prefix,
                    const char *name_prefix, void *base);

/* An object (or null) of the same group, a nested struct, or an array. */
static int rd_container(gx_pctx *c, const gx_field *f, const json_t *v, const char *name,
                        const char *name_prefix, void *base)
{
    char d[64];
    if (f->type == GX_FT_ARR) {
        if (!json_is_array(v)) {
            gx_jdescribe(v, d, sizeof d);
            return gx_jbad(c, name, "expected an array, got %s", d);
        }
        if (json_array_size(v) > (size_t)f->max_count)
            return gx_jbad(c, name, "%zu entries: at most %d", json_array_size(v), f->max_count);
        for (size_t i = 0; i < json_array_size(v); i++) {
            char e[192];
            snprintf(e, sizeof e, "%.160s[%zu]", name, i);
            json_t *el = json_array_get(v, i);
            if (!json_is_object(el)) {
                gx_jdescribe(el, d, sizeof d);
                return gx_jbad(c, e, "expected an object, got %s", d);
            }
            void *eb = gx_fptr(base, f->off + i * f->size);
            gx_fields_init(f->sub, eb);
            int rc = rd_group(c, el, f->sub, "", e, eb);
            if (rc)
                return rc;
        }
        *(int *)gx_fptr(base, f->aux_off) = (int)json_array_size(v);
        return GX_OK;
    }
    if (!json_is_object(v)) {
        gx_jdescribe(v, d, sizeof d);
        return gx_jbad(c, name, "expected an object%s, got %s",
                       (f->flags & GX_FF_NULLABLE) ? " or null" : "", d);
    }
    if (f->type == GX_FT_SUB) {
        void *sb = gx_fptr(base, f->off);
        gx_fields_init(f->sub, sb);
        *(int *)gx_fptr(sb, f->aux_off) = 1;
        return rd_group(c, v, f->sub, "", name, sb);
    }
    if (f->aux_off != GX_FNONE)
        *(int *)gx_fptr(base, f->aux_off) = 1;
    return rd_group(c, v, f->group, f->path, name_prefix, base);
}

static int rd_group(gx_pctx *c, const json_t *obj, gx_fgroup g, const char *prefix,
                    const char *name_prefix, void *base)
{
    size_t n;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++) {
        const gx_field *f = &t[i];
        if (!gx_field_is_child(f, g, prefix))
            continue;
        char name[192];
        full_name(name, sizeof name, name_prefix, f->path);
        int rc;
        if (f->type == GX_FT_CUSTOM) {
            rc = gx_jread_custom(c, f, obj, name, base);
        } else {
            json_t *v = gx_jval(obj, gx_field_key(f));
            if (!v)
                continue;
            if (f->type == GX_FT_OBJ || f->type == GX_FT_SUB || f->type == GX_FT_ARR)
                rc = rd_container(c, f, v, name, name_prefix, base);
            else
                rc = rd_leaf(c, f, v, name, base);
        }
        if (rc)
            return rc;
    }
    return GX_OK;
}

static int rd_header(gx_pctx *c, const json_t *root)
{
    json_t *f = json_object_get(root, "format");
    if (!f || !json_is_string(f) || strcmp(json_string_value(f), "gpuxray-profile") != 0)
        return gx_jbad(c, "format", "must be \"gpuxray-profile\"");
    json_t *v = json_object_get(root, "version");
    if (!v || !json_is_integer(v) || json_integer_value(v) != GX_PROFILE_VERSION) {
        if (v && json_is_integer(v))
            return gx_jbad(c, "version", "%" JSON_INTEGER_FORMAT " != %d (supported version)",
                           json_integer_value(v), GX_PROFILE_VERSION);
        return gx_jbad(c, "version", "missing or not an integer; expected %d (supported "
                       "version)", GX_PROFILE_VERSION);
    }
    return GX_OK;
}

static int rd_root(gx_pctx *c, const json_t *root, gx_profile *p)
{
    if (!json_is_object(root)) {
        char d[64];
        gx_jdescribe(root, d, sizeof d);
        return gx_jbad(c, "(document)", "expected a JSON object, got %s", d);
    }
    int rc = rd_header(c, root);
    if (rc)
        return rc;
    p->provenance.kind[0] = '\0'; /* required: absent is an error, not "measured" */
    return rd_group(c, root, GX_FG_root, "", "", p);
}

static int parse_buf(const char *buf, size_t len, const char *src, gx_profile **out, gx_msg *msg)
{
    json_error_t err;
    *out = NULL;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return gx_fail(msg, GX_EPARSE, "%s:%d:%d: %s", src, err.line, err.column, err.text);
    gx_profile *p = gx_profile_new();
    if (!p) {
        json_decref(root);
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", src);
    }
    p->doc = root;
    gx_pctx c = {src, msg};
    int rc = rd_root(&c, root, p);
    if (rc == GX_OK) {
        gx_msg vm;
        gx_msg_clear(&vm);
        rc = gx_profile_validate(p, &vm);
        if (rc != GX_OK)
            gx_fail(msg, rc, "%s: %s", src, vm.text);
    }
    if (rc != GX_OK) {
        gx_profile_free(p);
        return rc;
    }
    *out = p;
    return GX_OK;
}

int gx_profile_parse(const char *text, const char *source_name, gx_profile **out, gx_msg *msg)
{
    if (!out)
        return gx_fail(msg, GX_EINVAL, "gx_profile_parse: out is NULL");
    if (!text)
        return gx_fail(msg, GX_EINVAL, "gx_profile_parse: text is NULL");
    return parse_buf(text, strlen(text), source_name ? source_name : "<text>", out, msg);
}

int gx_profile_load(const char *path, gx_profile **out, gx_msg *msg)
{
    if (!out)
        return gx_fail(msg, GX_EINVAL, "gx_profile_load: out is NULL");
    *out = NULL;
    if (!path)
        return gx_fail(msg, GX_EINVAL, "gx_profile_load: path is NULL");
    FILE *f = fopen(path, "rb");
    if (!f)
        return gx_fail(msg, GX_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int rerr = ferror(f) ? errno : 0;
    fclose(f);
    if (!buf)
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    if (rerr) {
        free(buf);
        return gx_fail(msg, GX_EIO, "%s: read error: %s", path, strerror(rerr));
    }
    int rc = parse_buf(buf, n, path, out, msg);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- write */

static json_t *leaf_json(const gx_field *f, const void *base)
{
    const void *p = gx_fptr(base, f->off);
    switch (f->type) {
    case GX_FT_U32:
        return gx_ju64(*(const uint32_t *)p);
    case GX_FT_U64:
        return gx_ju64(*(const uint64_t *)p);
    case GX_FT_DBL: {
        double v = *(const double *)p;
        if ((f->flags & GX_FF_REAL) && isfinite(v))
            return json_real(v);
        return gx_jnum(v);
    }
    case GX_FT_BOOL:
        return json_boolean(*(const int *)p > 0);
    case GX_FT_STR:
        return json_string((const char *)p);
    case GX_FT_ENUM: {
        const char *nm = gx_field_enum_name(f, *(const int *)p);
        return *nm ? json_string(nm) : json_null();
    }
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32: {
        json_t *a = json_array();
        int cnt = *(const int *)gx_fptr(base, f->aux_off);
        for (int i = 0; i < cnt && i < f->max_count; i++) {
            const void *e = gx_fptr(base, f->off + (size_t)i * f->size);
            json_array_append_new(a, gx_ju64(f->size == sizeof(uint32_t) ? *(const uint32_t *)e
                                                                          : *(const uint64_t *)e));
        }
        return a;
    }
    default:
        return json_null();
    }
}

static void wr_leaf(const gx_field *f, json_t *obj, const void *base)
{
    const char *key = gx_field_key(f);
    const int absent = gx_field_absent(f, base);
    switch (f->wmode) {
    case GX_W_VALUE:
        json_object_set_new(obj, key, leaf_json(f, base));
        return;
    case GX_W_NONZERO: {
        int differs = f->type == GX_FT_DBL ? *(const double *)gx_fptr(base, f->off) != f->ddef
                                           : !absent;
        if (differs || json_object_get(obj, key))
            json_object_set_new(obj, key, leaf_json(f, base));
        return;
    }
    default:
        gx_jput(obj, key, absent ? NULL : leaf_json(f, base), f->wmode != GX_W_KEEP);
        return;
    }
}

static void wr_group(json_t *obj, gx_fgroup g, const char *prefix, const void *base);

/* Does an object row have a member that is not absent? */
static int any_member(const gx_field *o, const void *base)
{
    size_t n, len = strlen(o->path);
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++)
        if (t[i].group == o->group && strncmp(t[i].path, o->path, len) == 0 &&
            t[i].path[len] == '.' && t[i].type != GX_FT_OBJ && !gx_field_absent(&t[i], base))
            return 1;
    return 0;
}

static void wr_array(const gx_field *f, json_t *obj, const void *base)
{
    const char *key = gx_field_key(f);
    int cnt = *(const int *)gx_fptr(base, f->aux_off);
    if (cnt <= 0) {
        gx_jput(obj, key, NULL, f->wmode != GX_W_KEEP);
        return;
    }
    json_t *old = json_object_get(obj, key), *a = json_array();
    for (int i = 0; i < cnt && i < f->max_count; i++) {
        json_t *el = old && json_is_array(old) ? json_array_get(old, (size_t)i) : NULL;
        el = el && json_is_object(el) ? json_incref(el) : json_object();
        wr_group(el, f->sub, "", gx_fptr(base, f->off + (size_t)i * f->size));
        json_array_append_new(a, el);
    }
    json_object_set_new(obj, key, a);
}

static void wr_object(const gx_field *f, json_t *obj, const void *base)
{
    const char *key = gx_field_key(f);
    if (gx_field_absent(f, base)) {
        if (f->wmode == GX_W_OBJ_DELETE)
            json_object_del(obj, key);
        else
            json_object_set_new(obj, key, json_null());
        return;
    }
    if (f->type == GX_FT_SUB) {
        wr_group(gx_jsub(obj, key), f->sub, "", gx_fptr(base, f->off));
        return;
    }
    if (f->wmode == GX_W_OBJ_IF_ANY && !any_member(f, base) && !json_object_get(obj, key))
        return;
    wr_group(gx_jsub(obj, key), f->group, f->path, base);
}

static void wr_group(json_t *obj, gx_fgroup g, const char *prefix, const void *base)
{
    size_t n;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++) {
        const gx_field *f = &t[i];
        if (!gx_field_is_child(f, g, prefix))
            continue;
        switch (f->type) {
        case GX_FT_OBJ:
        case GX_FT_SUB:
            wr_object(f, obj, base);
            break;
        case GX_FT_ARR:
            wr_array(f, obj, base);
            break;
        case GX_FT_CUSTOM:
            gx_jwrite_custom(f, obj, base);
            break;
        default:
            wr_leaf(f, obj, base);
            break;
        }
    }
}

static json_t *build(const gx_profile *p)
{
    json_t *root = NULL;
    if (p->doc && json_is_object((json_t *)p->doc))
        root = json_deep_copy((json_t *)p->doc);
    else
        root = json_object();
    if (!root)
        return NULL;
    json_object_set_new(root, "format", json_string("gpuxray-profile"));
    json_object_set_new(root, "version", json_integer(GX_PROFILE_VERSION));
    wr_group(root, GX_FG_root, "", p);
    return root;
}

char *gx_profile_to_json(const gx_profile *p)
{
    if (!p)
        return NULL;
    json_t *root = build(p);
    if (!root)
        return NULL;
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!s)
        return NULL;
    /* a trailing newline, so the file is a proper text file */
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return t;
}

int gx_profile_save(const gx_profile *p, const char *path, gx_msg *msg)
{
    if (!p || !path)
        return gx_fail(msg, GX_EINVAL, "gx_profile_save: NULL argument");
    char *text = gx_profile_to_json(p);
    if (!text)
        return gx_fail(msg, GX_ENOMEM, "%s: cannot serialise the profile (out of memory)", path);
    int rc = gx_out_write_file(path, text, strlen(text), msg); /* rules: outfile.h */
    free(text);
    return rc;
}
