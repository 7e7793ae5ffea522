/* profile_json.c - the profile's JSON form (Contract 1 of DESIGN.md): parse
 * text into a gx_profile, and write a gx_profile back, atomically.
 *
 * Notes:
 * - jansson with JSON_REJECT_DUPLICATES; a syntax error reads
 *   "SOURCE:LINE:COL: text" (GX_EPARSE). A field of the wrong type or out of
 *   range reads "SOURCE: FIELD: rule" (GX_ECONFIG).
 * - JSON null and a missing key both mean "absent" (profile.h encoding).
 * - The whole loaded document is kept in p->doc; save writes the known
 *   fields over a copy of it, so unknown fields at any level (top, l2,
 *   hash, sim, ...) and `tlb` survive a load/save round trip. Key order is
 *   the document's; new keys follow Contract 1's order.
 * - Masks are written as "0x..." strings (read: strings or integers),
 *   tables as integer arrays, modulo as an integer or null. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuxray/profile.h"

#define GX_TABLE_MAX_BITS 24

typedef struct pctx {
    const char *src;
    gx_msg *msg;
} pctx;

static int bad(pctx *c, const char *field, const char *fmt, const char *detail)
{
    char rule[512];
    snprintf(rule, sizeof rule, fmt, detail ? detail : "");
    return gx_fail(c->msg, GX_ECONFIG, "%s: %s: %s", c->src, field, rule);
}

static void join(char *out, size_t cap, const char *prefix, const char *key)
{
    if (prefix && *prefix)
        snprintf(out, cap, "%s.%s", prefix, key);
    else
        snprintf(out, cap, "%s", key);
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* Value of key, NULL when missing or null. */
static json_t *val(const json_t *obj, const char *key)
{
    if (!obj || !json_is_object(obj))
        return NULL;
    json_t *v = json_object_get(obj, key);
    return (v && !json_is_null(v)) ? v : NULL;
}

static int rd_obj(pctx *c, const json_t *obj, const char *prefix, const char *key, json_t **out)
{
    char f[128];
    json_t *v = val(obj, key);
    *out = NULL;
    if (!v)
        return GX_OK;
    if (!json_is_object(v)) {
        join(f, sizeof f, prefix, key);
        return bad(c, f, "expected an object, got %s", type_name(v));
    }
    *out = v;
    return GX_OK;
}

static int as_u64(const json_t *v, uint64_t *out)
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
        if (d < 0 || d != floor(d) || d > 9007199254740992.0)
            return -1;
        *out = (uint64_t)d;
        return 0;
    }
    return -1;
}

static int rd_u64(pctx *c, const json_t *obj, const char *prefix, const char *key, uint64_t max,
                  uint64_t *out)
{
    char f[128];
    json_t *v = val(obj, key);
    if (!v)
        return GX_OK;
    uint64_t x = 0;
    join(f, sizeof f, prefix, key);
    if (as_u64(v, &x) != 0)
        return bad(c, f, "expected a non-negative integer, got %s", type_name(v));
    if (x > max) {
        char d[64];
        snprintf(d, sizeof d, "%" PRIu64 " > %" PRIu64, x, max);
        return bad(c, f, "out of range (%s)", d);
    }
    *out = x;
    return GX_OK;
}

static int rd_u32(pctx *c, const json_t *obj, const char *prefix, const char *key, uint32_t *out)
{
    uint64_t x = *out;
    int rc = rd_u64(c, obj, prefix, key, UINT32_MAX, &x);
    *out = (uint32_t)x;
    return rc;
}

static int rd_num(pctx *c, const json_t *obj, const char *prefix, const char *key, double *out)
{
    char f[128];
    json_t *v = val(obj, key);
    if (!v)
        return GX_OK;
    if (!json_is_number(v)) {
        join(f, sizeof f, prefix, key);
        return bad(c, f, "expected a number, got %s", type_name(v));
    }
    *out = json_number_value(v);
    return GX_OK;
}

static int rd_str(pctx *c, const json_t *obj, const char *prefix, const char *key, char *buf,
                  size_t cap)
{
    char f[128];
    json_t *v = val(obj, key);
    if (!v)
        return GX_OK;
    join(f, sizeof f, prefix, key);
    if (!json_is_string(v))
        return bad(c, f, "expected a string, got %s", type_name(v));
    if (json_string_length(v) >= cap) {
        char d[32];
        snprintf(d, sizeof d, "%zu", cap - 1);
        return bad(c, f, "string longer than %s characters", d);
    }
    snprintf(buf, cap, "%s", json_string_value(v));
    return GX_OK;
}

static int rd_bool(pctx *c, const json_t *obj, const char *prefix, const char *key, int *out)
{
    char f[128];
    json_t *v = val(obj, key);
    if (!v)
        return GX_OK;
    if (!json_is_boolean(v)) {
        join(f, sizeof f, prefix, key);
        return bad(c, f, "expected true or false, got %s", type_name(v));
    }
    *out = json_is_true(v) ? 1 : 0;
    return GX_OK;
}

static int parse_mask(const json_t *v, uint64_t *out)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
            return -1;
        const char *d = s + 2;
        while (*d == '0' && d[1])
            d++;
        if (strlen(d) > 16)
            return -1;
        for (const char *q = d; *q; q++)
            if (!strchr("0123456789abcdefABCDEF", *q))
                return -1;
        *out = (uint64_t)strtoull(d, NULL, 16);
        return 0;
    }
    return as_u64(v, out);
}

static int rd_hash(pctx *c, const json_t *obj, const char *prefix, const char *key, int is_set,
                   gx_hash_fn *h)
{
    char f[128], g[160];
    json_t *o = NULL;
    int rc = rd_obj(c, obj, prefix, key, &o);
    if (rc || !o)
        return rc;
    join(f, sizeof f, prefix, key);
    h->present = 1;
    json_t *m = val(o, "masks");
    if (m) {
        snprintf(g, sizeof g, "%s.masks", f);
        if (!json_is_array(m))
            return bad(c, g, "expected an array of hex strings, got %s", type_name(m));
        if (json_array_size(m) > GX_MAX_MASKS) {
            char d[32];
            snprintf(d, sizeof d, "%d", GX_MAX_MASKS);
            return bad(c, g, "more than %s masks", d);
        }
        for (size_t i = 0; i < json_array_size(m); i++) {
            uint64_t x = 0;
            if (parse_mask(json_array_get(m, i), &x) != 0) {
                snprintf(g, sizeof g, "%s.masks[%zu]", f, i);
                return bad(c, g, "expected a 64-bit mask as \"0x...\" or an integer%s", "");
            }
            h->masks[i] = x;
        }
        h->n_masks = (int)json_array_size(m);
    }
    json_t *t = val(o, "table");
    if (t) {
        snprintf(g, sizeof g, "%s.table", f);
        if (is_set)
            return bad(c, g, "a set hash has no table (use modulo)%s", "");
        if (!json_is_array(t))
            return bad(c, g, "expected an array of integers, got %s", type_name(t));
        if (h->n_masks > GX_TABLE_MAX_BITS) {
            char d[32];
            snprintf(d, sizeof d, "%d", GX_TABLE_MAX_BITS);
            return bad(c, g, "a table needs n_masks <= %s", d);
        }
        size_t want = (size_t)1 << h->n_masks;
        if (json_array_size(t) != want) {
            char d[96];
            snprintf(d, sizeof d, "%zu entries != 2^n_masks = %zu", json_array_size(t), want);
            return bad(c, g, "%s", d);
        }
        h->table = malloc(want * sizeof *h->table);
        if (!h->table)
            return gx_fail(c->msg, GX_ENOMEM, "%s: out of memory", c->src);
        for (size_t i = 0; i < want; i++) {
            uint64_t x = 0;
            if (as_u64(json_array_get(t, i), &x) != 0 || x > UINT32_MAX) {
                snprintf(g, sizeof g, "%s.table[%zu]", f, i);
                return bad(c, g, "expected a non-negative integer%s", "");
            }
            h->table[i] = (uint32_t)x;
        }
    }
    snprintf(g, sizeof g, "%s", f);
    if ((rc = rd_u64(c, o, g, "modulo", UINT32_MAX, &h->modulo)))
        return rc;
    json_t *ob = val(o, "observable_bits");
    if (ob) {
        snprintf(g, sizeof g, "%s.observable_bits", f);
        uint64_t lo = 0, hi = 0;
        if (!json_is_array(ob) || json_array_size(ob) != 2 ||
            as_u64(json_array_get(ob, 0), &lo) != 0 || as_u64(json_array_get(ob, 1), &hi) != 0 ||
            lo > 1000 || hi > 1000)
            return bad(c, g, "expected [lo, hi], two bit numbers%s", "");
        h->obs_lo = (int)lo;
        h->obs_hi = (int)hi;
    }
    return GX_OK;
}

static int rd_topology(pctx *c, const json_t *l2, gx_topology *t)
{
    json_t *v = val(l2, "topology");
    if (!v)
        return GX_OK;
    if (!json_is_string(v))
        return bad(c, "l2.topology", "expected \"uniform\" or \"near-far\", got %s",
                   type_name(v));
    const char *s = json_string_value(v);
    if (strcmp(s, "uniform") == 0)
        *t = GX_TOPO_UNIFORM;
    else if (strcmp(s, "near-far") == 0)
        *t = GX_TOPO_NEAR_FAR;
    else
        return bad(c, "l2.topology", "unknown topology \"%s\" (uniform, near-far)", s);
    return GX_OK;
}

static int rd_levels(pctx *c, const json_t *l2, gx_profile *p)
{
    json_t *a = val(l2, "levels_from_one_sm");
    if (!a)
        return GX_OK;
    if (!json_is_array(a))
        return bad(c, "l2.levels_from_one_sm", "expected an array, got %s", type_name(a));
    if (json_array_size(a) > GX_MAX_LEVELS) {
        char d[32];
        snprintf(d, sizeof d, "%d", GX_MAX_LEVELS);
        return bad(c, "l2.levels_from_one_sm", "more than %s levels", d);
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        char f[64];
        snprintf(f, sizeof f, "l2.levels_from_one_sm[%zu]", i);
        json_t *e = json_array_get(a, i);
        if (!json_is_object(e))
            return bad(c, f, "expected an object, got %s", type_name(e));
        gx_level *lv = &p->l2.levels[i];
        lv->capacity_bytes = 0;
        lv->latency_cycles = NAN;
        int rc;
        if ((rc = rd_u64(c, e, f, "capacity_bytes", UINT64_MAX, &lv->capacity_bytes)) ||
            (rc = rd_num(c, e, f, "latency_cycles", &lv->latency_cycles)))
            return rc;
    }
    p->l2.n_levels = (int)json_array_size(a);
    return GX_OK;
}

static int rd_l2(pctx *c, const json_t *root, gx_profile *p)
{
    json_t *l2 = NULL, *lat = NULL, *nf = NULL, *hash = NULL;
    int rc = rd_obj(c, root, "", "l2", &l2);
    if (rc || !l2)
        return rc;
    p->l2.present = 1;
    if ((rc = rd_u32(c, l2, "l2", "line_bytes", &p->l2.line_bytes)) ||
        (rc = rd_u32(c, l2, "l2", "sector_bytes", &p->l2.sector_bytes)) ||
        (rc = rd_u32(c, l2, "l2", "ways", &p->l2.ways)) ||
        (rc = rd_u32(c, l2, "l2", "partitions", &p->l2.partitions)) ||
        (rc = rd_u32(c, l2, "l2", "slices", &p->l2.slices)) ||
        (rc = rd_u32(c, l2, "l2", "sets_per_slice", &p->l2.sets_per_slice)) ||
        (rc = rd_u64(c, l2, "l2", "capacity_bytes", UINT64_MAX, &p->l2.capacity_bytes)) ||
        (rc = rd_str(c, l2, "l2", "policy", p->l2.policy, sizeof p->l2.policy)) ||
        (rc = rd_topology(c, l2, &p->l2.topology)) ||
        (rc = rd_obj(c, l2, "l2", "near_far", &nf)) ||
        (rc = rd_bool(c, nf, "l2.near_far", "copy_to_near", &p->l2.near_far.copy_to_near)) ||
        (rc = rd_bool(c, nf, "l2.near_far", "victims_to_far", &p->l2.near_far.victims_to_far)) ||
        (rc = rd_obj(c, l2, "l2", "latency_cycles", &lat)) ||
        (rc = rd_num(c, lat, "l2.latency_cycles", "hit", &p->l2.hit_cycles)) ||
        (rc = rd_num(c, lat, "l2.latency_cycles", "near_hit", &p->l2.near_hit_cycles)) ||
        (rc = rd_num(c, lat, "l2.latency_cycles", "far_hit", &p->l2.far_hit_cycles)) ||
        (rc = rd_num(c, lat, "l2.latency_cycles", "far_stream_extra",
                     &p->l2.far_stream_extra_cycles)) ||
        (rc = rd_levels(c, l2, p)) || (rc = rd_obj(c, l2, "l2", "hash", &hash)) ||
        (rc = rd_hash(c, hash, "l2.hash", "slice", 0, &p->l2.slice_hash)) ||
        (rc = rd_hash(c, hash, "l2.hash", "set", 1, &p->l2.set_hash)))
        return rc;
    return GX_OK;
}

static int rd_confidence(pctx *c, const json_t *root, gx_profile *p)
{
    json_t *o = NULL;
    int rc = rd_obj(c, root, "", "confidence", &o);
    if (rc || !o)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        char f[160];
        snprintf(f, sizeof f, "confidence.%s", k);
        if (json_is_null(v))
            continue;
        if (!json_is_number(v))
            return bad(c, f, "expected a number, got %s", type_name(v));
        if (strlen(k) == 0 || strlen(k) >= sizeof p->confidence[0].key)
            return bad(c, f, "key must have 1..63 characters%s", "");
        if (gx_profile_set_confidence(p, k, json_number_value(v)) != GX_OK)
            return bad(c, f, "too many confidence entries%s", "");
    }
    return GX_OK;
}

static int rd_sim(pctx *c, const json_t *root, gx_profile *p)
{
    json_t *s = NULL, *n = NULL;
    int rc = rd_obj(c, root, "", "sim", &s);
    if (rc || !s)
        return rc;
    p->sim.present = 1;
    if ((rc = rd_obj(c, s, "sim", "noise", &n)) ||
        (rc = rd_num(c, n, "sim.noise", "jitter_cycles", &p->sim.jitter_cycles)) ||
        (rc = rd_num(c, n, "sim.noise", "outlier_rate", &p->sim.outlier_rate)) ||
        (rc = rd_num(c, n, "sim.noise", "outlier_cycles", &p->sim.outlier_cycles)) ||
        (rc = rd_num(c, n, "sim.noise", "background_evictions_per_kaccess",
                     &p->sim.background_evictions_per_kaccess)) ||
        (rc = rd_num(c, s, "sim", "sm_slice_skew_cycles", &p->sim.sm_slice_skew_cycles)) ||
        (rc = rd_u64(c, s, "sim", "frames_seed", UINT64_MAX, &p->sim.frames_seed)))
        return rc;
    return GX_OK;
}

static int rd_header(pctx *c, const json_t *root)
{
    json_t *f = json_object_get(root, "format");
    if (!f || !json_is_string(f) || strcmp(json_string_value(f), "gpuxray-profile") != 0)
        return bad(c, "format", "must be \"gpuxray-profile\"%s", "");
    json_t *v = json_object_get(root, "version");
    if (!v || !json_is_integer(v) || json_integer_value(v) != GX_PROFILE_VERSION) {
        char d[64];
        if (v && json_is_integer(v))
            snprintf(d, sizeof d, "%lld != %d", (long long)json_integer_value(v),
                     GX_PROFILE_VERSION);
        else
            snprintf(d, sizeof d, "missing or not an integer; expected %d", GX_PROFILE_VERSION);
        return bad(c, "version", "%s (supported version)", d);
    }
    return GX_OK;
}

static int rd_root(pctx *c, const json_t *root, gx_profile *p)
{
    json_t *pv = NULL, *dev = NULL, *tim = NULL, *mem = NULL;
    int rc;
    if (!json_is_object(root))
        return bad(c, "(document)", "expected a JSON object, got %s", type_name(root));
    if ((rc = rd_header(c, root)))
        return rc;
    p->provenance.kind[0] = '\0';
    if ((rc = rd_str(c, root, "", "name", p->name, sizeof p->name)) ||
        (rc = rd_obj(c, root, "", "provenance", &pv)) ||
        (rc = rd_str(c, pv, "provenance", "kind", p->provenance.kind,
                     sizeof p->provenance.kind)) ||
        (rc = rd_str(c, pv, "provenance", "target", p->provenance.target,
                     sizeof p->provenance.target)) ||
        (rc = rd_str(c, pv, "provenance", "tool_version", p->provenance.tool_version,
                     sizeof p->provenance.tool_version)) ||
        (rc = rd_str(c, pv, "provenance", "created", p->provenance.created,
                     sizeof p->provenance.created)) ||
        (rc = rd_u64(c, pv, "provenance", "seed", UINT64_MAX, &p->provenance.seed)) ||
        (rc = rd_u64(c, pv, "provenance", "queries", UINT64_MAX, &p->provenance.queries)) ||
        (rc = rd_u64(c, pv, "provenance", "accesses", UINT64_MAX, &p->provenance.accesses)) ||
        (rc = rd_num(c, pv, "provenance", "seconds", &p->provenance.seconds)) ||
        (rc = rd_obj(c, root, "", "device", &dev)) ||
        (rc = rd_str(c, dev, "device", "name", p->device.name, sizeof p->device.name)) ||
        (rc = rd_u32(c, dev, "device", "sm_count", &p->device.sm_count)) ||
        (rc = rd_u32(c, dev, "device", "sm_clock_mhz", &p->device.sm_clock_mhz)) ||
        (rc = rd_u64(c, dev, "device", "api_l2_bytes", UINT64_MAX, &p->device.api_l2_bytes)) ||
        (rc = rd_obj(c, root, "", "timer", &tim)) ||
        (rc = rd_num(c, tim, "timer", "overhead_cycles", &p->timer_overhead_cycles)) ||
        (rc = rd_obj(c, root, "", "memory", &mem)) ||
        (rc = rd_u64(c, mem, "memory", "page_bytes", UINT64_MAX, &p->memory.page_bytes)) ||
        (rc = rd_num(c, mem, "memory", "dram_latency_cycles", &p->memory.dram_latency_cycles)) ||
        (rc = rd_l2(c, root, p)) || (rc = rd_confidence(c, root, p)) ||
        (rc = rd_sim(c, root, p)))
        return rc;
    json_t *tlb = json_object_get(root, "tlb");
    if (tlb && !json_is_null(tlb) && !json_is_object(tlb))
        return bad(c, "tlb", "expected an object or null, got %s", type_name(tlb));
    return GX_OK;
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
    pctx c = {src, msg};
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
    int rerr = ferror(f);
    fclose(f);
    if (!buf)
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    if (rerr) {
        free(buf);
        return gx_fail(msg, GX_EIO, "%s: read error", path);
    }
    int rc = parse_buf(buf, n, path, out, msg);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- save */

static json_t *jnum(double v)
{
    if (isnan(v))
        return json_null();
    if (v == floor(v) && fabs(v) < 1e15)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *ju64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

/* An object member, created (at the end) when missing or not an object. */
static json_t *sub(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);
    if (o && json_is_object(o))
        return o;
    o = json_object();
    json_object_set_new(parent, key, o);
    return o;
}

/* Set key to v; v == NULL means absent: null when `always` or the key exists. */
static void put(json_t *obj, const char *key, json_t *v, int always)
{
    if (v) {
        json_object_set_new(obj, key, v);
        return;
    }
    if (always || json_object_get(obj, key))
        json_object_set_new(obj, key, json_null());
}

static json_t *opt_u64(uint64_t v)
{
    return v ? ju64(v) : NULL;
}

static json_t *opt_num(double v)
{
    return isnan(v) ? NULL : jnum(v);
}

static json_t *opt_str(const char *s)
{
    return *s ? json_string(s) : NULL;
}

static json_t *hash_json(json_t *o, const gx_hash_fn *h, int is_set)
{
    json_t *m = json_array();
    for (int i = 0; i < h->n_masks; i++) {
        char b[24];
        snprintf(b, sizeof b, "0x%" PRIx64, h->masks[i]);
        json_array_append_new(m, json_string(b));
    }
    json_object_set_new(o, "masks", m);
    json_t *t = NULL;
    if (h->table) {
        t = json_array();
        size_t n = (size_t)1 << h->n_masks;
        for (size_t i = 0; i < n; i++)
            json_array_append_new(t, json_integer(h->table[i]));
    }
    put(o, "table", t, !is_set);
    put(o, "modulo", opt_u64(h->modulo), is_set);
    json_t *ob = NULL;
    if (h->obs_lo >= 0 && h->obs_hi >= 0)
        ob = json_pack("[ii]", h->obs_lo, h->obs_hi);
    put(o, "observable_bits", ob, !is_set);
    return o;
}

static void write_l2(json_t *root, const gx_profile *p)
{
    if (!p->l2.present) {
        json_object_set_new(root, "l2", json_null());
        return;
    }
    json_t *l2 = sub(root, "l2");
    put(l2, "line_bytes", opt_u64(p->l2.line_bytes), 1);
    put(l2, "sector_bytes", opt_u64(p->l2.sector_bytes), 1);
    put(l2, "ways", opt_u64(p->l2.ways), 1);
    put(l2, "partitions", opt_u64(p->l2.partitions), 1);
    put(l2, "slices", opt_u64(p->l2.slices), 1);
    put(l2, "sets_per_slice", opt_u64(p->l2.sets_per_slice), 1);
    put(l2, "capacity_bytes", opt_u64(p->l2.capacity_bytes), 1);
    put(l2, "policy", opt_str(p->l2.policy), 1);
    put(l2, "topology",
        p->l2.topology == GX_TOPO_UNKNOWN ? NULL : json_string(gx_topology_name(p->l2.topology)),
        1);
    if (p->l2.near_far.copy_to_near >= 0 || p->l2.near_far.victims_to_far >= 0 ||
        json_object_get(l2, "near_far")) {
        json_t *nf = sub(l2, "near_far");
        put(nf, "copy_to_near",
            p->l2.near_far.copy_to_near >= 0 ? json_boolean(p->l2.near_far.copy_to_near) : NULL,
            1);
        put(nf, "victims_to_far",
            p->l2.near_far.victims_to_far >= 0 ? json_boolean(p->l2.near_far.victims_to_far)
                                               : NULL,
            1);
    }
    json_t *lat = sub(l2, "latency_cycles");
    put(lat, "hit", opt_num(p->l2.hit_cycles), 1);
    put(lat, "near_hit", opt_num(p->l2.near_hit_cycles), 1);
    put(lat, "far_hit", opt_num(p->l2.far_hit_cycles), 1);
    if (!isnan(p->l2.far_stream_extra_cycles))
        put(lat, "far_stream_extra", opt_num(p->l2.far_stream_extra_cycles), 1);
    json_t *lv = json_array();
    for (int i = 0; i < p->l2.n_levels; i++)
        json_array_append_new(lv, json_pack("{s:o,s:o}", "capacity_bytes",
                                            ju64(p->l2.levels[i].capacity_bytes),
                                            "latency_cycles",
                                            jnum(p->l2.levels[i].latency_cycles)));
    if (p->l2.n_levels > 0)
        json_object_set_new(l2, "levels_from_one_sm", lv);
    else {
        json_decref(lv);
        put(l2, "levels_from_one_sm", NULL, 1);
    }
    json_t *hash = sub(l2, "hash");
    if (p->l2.slice_hash.present)
        hash_json(sub(hash, "slice"), &p->l2.slice_hash, 0);
    else
        put(hash, "slice", NULL, 1);
    if (p->l2.set_hash.present)
        hash_json(sub(hash, "set"), &p->l2.set_hash, 1);
    else
        put(hash, "set", NULL, 1);
}

static void write_sim(json_t *root, const gx_profile *p)
{
    if (!p->sim.present) {
        json_object_del(root, "sim");
        return;
    }
    json_t *s = sub(root, "sim");
    json_t *n = sub(s, "noise");
    json_object_set_new(n, "jitter_cycles", jnum(p->sim.jitter_cycles));
    json_object_set_new(n, "outlier_rate", jnum(p->sim.outlier_rate));
    json_object_set_new(n, "outlier_cycles", jnum(p->sim.outlier_cycles));
    json_object_set_new(n, "background_evictions_per_kaccess",
                        jnum(p->sim.background_evictions_per_kaccess));
    json_object_set_new(s, "sm_slice_skew_cycles", jnum(p->sim.sm_slice_skew_cycles));
    json_object_set_new(s, "frames_seed", ju64(p->sim.frames_seed));
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
    put(root, "name", opt_str(p->name), 1);
    json_t *pv = sub(root, "provenance");
    put(pv, "kind", opt_str(p->provenance.kind), 1);
    put(pv, "target", opt_str(p->provenance.target), 0);
    put(pv, "tool_version", opt_str(p->provenance.tool_version), 0);
    put(pv, "created", opt_str(p->provenance.created), 0);
    if (p->provenance.seed || json_object_get(pv, "seed"))
        json_object_set_new(pv, "seed", ju64(p->provenance.seed));
    if (p->provenance.queries || json_object_get(pv, "queries"))
        json_object_set_new(pv, "queries", ju64(p->provenance.queries));
    if (p->provenance.accesses || json_object_get(pv, "accesses"))
        json_object_set_new(pv, "accesses", ju64(p->provenance.accesses));
    if (p->provenance.seconds != 0 || json_object_get(pv, "seconds"))
        json_object_set_new(pv, "seconds", json_real(p->provenance.seconds));
    json_t *dev = sub(root, "device");
    put(dev, "name", opt_str(p->device.name), 1);
    put(dev, "sm_count", opt_u64(p->device.sm_count), 1);
    put(dev, "sm_clock_mhz", opt_u64(p->device.sm_clock_mhz), 1);
    put(dev, "api_l2_bytes", opt_u64(p->device.api_l2_bytes), 1);
    put(sub(root, "timer"), "overhead_cycles", opt_num(p->timer_overhead_cycles), 1);
    json_t *mem = sub(root, "memory");
    put(mem, "page_bytes", opt_u64(p->memory.page_bytes), 1);
    put(mem, "dram_latency_cycles", opt_num(p->memory.dram_latency_cycles), 1);
    write_l2(root, p);
    if (!json_object_get(root, "tlb"))
        json_object_set_new(root, "tlb", json_null());
    json_t *conf = json_object();
    for (int i = 0; i < p->n_confidence; i++)
        json_object_set_new(conf, p->confidence[i].key, jnum(p->confidence[i].value));
    json_object_set_new(root, "confidence", conf);
    write_sim(root, p);
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
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) {
        free(text);
        return gx_fail(msg, GX_ENOMEM, "%s: out of memory", path);
    }
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(text);
        free(tmp);
        return gx_fail(msg, GX_EIO, "%s: cannot create a temporary file: %s", path, strerror(e));
    }
    size_t len = strlen(text), off = 0;
    int e = 0;
    if (fchmod(fd, 0644) != 0)
        e = errno;
    while (!e && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            e = errno;
            break;
        }
        off += (size_t)w;
    }
    if (!e && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    free(tmp);
    free(text);
    if (e)
        return gx_fail(msg, GX_EIO, "%s: cannot write: %s", path, strerror(e));
    return GX_OK;
}
