/* json_custom.c - JSON of the profile fields with their own handler (rows
 * GX_FT_CUSTOM of fields.def): the index functions l2.hash.slice and
 * l2.hash.set, and the confidence map.
 *
 * Notes:
 * - An index function: "masks" (hex strings "0x..." or integers), "table"
 *   (slice hash only: 2^masks integers), "modulo" (set hash only),
 *   "observable_bits" [lo, hi]. Unknown members of the object are kept.
 *   Masks are written as "0x..." strings, tables as integer arrays.
 * - The rules linking a hash to the geometry are the validator's
 *   (validate_hash.c); the reader checks shapes and types only. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_internal.h"

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
    return gx_jas_u64(v, 0, out);
}

static int rd_masks(gx_pctx *c, const json_t *m, const char *f, gx_hash_fn *h)
{
    char g[160], d[64];
    snprintf(g, sizeof g, "%s.masks", f);
    if (!json_is_array(m)) {
        gx_jdescribe(m, d, sizeof d);
        return gx_jbad(c, g, "expected an array of hex strings, got %s", d);
    }
    if (json_array_size(m) > GX_MAX_MASKS)
        return gx_jbad(c, g, "%zu masks: at most %d (the model evaluates at most %d)",
                       json_array_size(m), GX_MAX_MASKS, GX_HASH_MAX_MASKS);
    for (size_t i = 0; i < json_array_size(m); i++) {
        uint64_t x = 0;
        if (parse_mask(json_array_get(m, i), &x) != 0) {
            snprintf(g, sizeof g, "%s.masks[%zu]", f, i);
            gx_jdescribe(json_array_get(m, i), d, sizeof d);
            return gx_jbad(c, g, "expected a 64-bit mask as \"0x...\" or an integer, got %s", d);
        }
        h->masks[i] = x;
    }
    h->n_masks = (int)json_array_size(m);
    return GX_OK;
}

static int rd_table(gx_pctx *c, const json_t *t, const char *f, gx_hash_fn *h)
{
    char g[160], d[64];
    snprintf(g, sizeof g, "%s.table", f);
    if (!json_is_array(t)) {
        gx_jdescribe(t, d, sizeof d);
        return gx_jbad(c, g, "expected an array of integers, got %s", d);
    }
    if (h->n_masks > GX_HASH_MAX_MASKS)
        return gx_jbad(c, g, "a table needs n_masks <= %d, got %d", GX_HASH_MAX_MASKS,
                       h->n_masks);
    size_t want = (size_t)1 << h->n_masks;
    if (json_array_size(t) != want)
        return gx_jbad(c, g, "%zu entries != 2^n_masks = %zu", json_array_size(t), want);
    h->table = malloc(want * sizeof *h->table);
    if (!h->table)
        return gx_fail(c->msg, GX_ENOMEM, "%s: out of memory", c->src);
    for (size_t i = 0; i < want; i++) {
        uint64_t x = 0;
        if (gx_jas_u64(json_array_get(t, i), 0, &x) != 0 || x > UINT32_MAX) {
            snprintf(g, sizeof g, "%s.table[%zu]", f, i);
            gx_jdescribe(json_array_get(t, i), d, sizeof d);
            return gx_jbad(c, g, "expected an integer in 0..%u, got %s", UINT32_MAX, d);
        }
        h->table[i] = (uint32_t)x;
    }
    return GX_OK;
}

static int rd_hash(gx_pctx *c, const json_t *o, const char *f, gx_hash_fn *h)
{
    char g[160], d[64];
    int rc;
    h->present = 1;
    json_t *m = gx_jval(o, "masks");
    if (m && (rc = rd_masks(c, m, f, h)))
        return rc;
    json_t *t = gx_jval(o, "table");
    if (t) {
        if ((rc = rd_table(c, t, f, h)))
            return rc;
    }
    json_t *mo = gx_jval(o, "modulo");
    if (mo) {
        snprintf(g, sizeof g, "%s.modulo", f);
        uint64_t x = 0;
        if (gx_jas_u64(mo, 0, &x) != 0 || x > UINT32_MAX) {
            gx_jdescribe(mo, d, sizeof d);
            return gx_jbad(c, g, "expected an integer in 0..%u, got %s", UINT32_MAX, d);
        }
        h->modulo = x;
    }
    json_t *ob = gx_jval(o, "observable_bits");
    if (ob) {
        snprintf(g, sizeof g, "%s.observable_bits", f);
        uint64_t lo = 0, hi = 0;
        if (!json_is_array(ob) || json_array_size(ob) != 2 ||
            gx_jas_u64(json_array_get(ob, 0), 0, &lo) != 0 ||
            gx_jas_u64(json_array_get(ob, 1), 0, &hi) != 0 || lo > 63 || hi > 63) {
            gx_jdescribe(ob, d, sizeof d);
            return gx_jbad(c, g, "expected [lo, hi], two bit numbers in 0..63, got %s", d);
        }
        h->obs_lo = (int)lo;
        h->obs_hi = (int)hi;
    }
    return GX_OK;
}

static int rd_confidence(gx_pctx *c, const json_t *o, gx_profile *p)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        char f[160], d[64];
        snprintf(f, sizeof f, "confidence.%s", k);
        if (json_is_null(v))
            continue;
        if (!json_is_number(v)) {
            gx_jdescribe(v, d, sizeof d);
            return gx_jbad(c, f, "expected a number, got %s", d);
        }
        if (strlen(k) == 0 || strlen(k) >= sizeof p->confidence[0].key)
            return gx_jbad(c, f, "key must have 1..%zu characters",
                           sizeof p->confidence[0].key - 1);
        double x = json_number_value(v);
        if (!(x >= 0 && x <= 1))
            return gx_jbad(c, f, "%g must be in 0..1", x);
        if (gx_profile_set_confidence(p, k, x) != GX_OK)
            return gx_jbad(c, f, "more than %d confidence entries", GX_MAX_CONFIDENCE);
    }
    return GX_OK;
}

int gx_jread_custom(gx_pctx *c, const gx_field *f, const json_t *obj, const char *name,
                    void *base)
{
    gx_profile *p = base;
    json_t *v = gx_jval(obj, gx_field_key(f));
    if (!v)
        return GX_OK;
    if (!json_is_object(v)) {
        char d[64];
        gx_jdescribe(v, d, sizeof d);
        return gx_jbad(c, name, "expected an object, got %s", d);
    }
    switch (f->custom) {
    case GX_FC_HASH_SLICE:
        return rd_hash(c, v, name, &p->l2.slice_hash);
    case GX_FC_HASH_SET:
        return rd_hash(c, v, name, &p->l2.set_hash);
    case GX_FC_CONFIDENCE:
        return rd_confidence(c, v, p);
    default:
        return GX_OK;
    }
}

static void hash_json(json_t *o, const gx_hash_fn *h, int is_set)
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
    gx_jput(o, "table", t, !is_set);
    gx_jput(o, "modulo", h->modulo ? gx_ju64(h->modulo) : NULL, is_set);
    json_t *ob = NULL;
    if (h->obs_lo >= 0 && h->obs_hi >= 0)
        ob = json_pack("[ii]", h->obs_lo, h->obs_hi);
    gx_jput(o, "observable_bits", ob, !is_set);
}

void gx_jwrite_custom(const gx_field *f, json_t *obj, const void *base)
{
    const gx_profile *p = base;
    const char *key = gx_field_key(f);
    if (f->custom == GX_FC_CONFIDENCE) {
        json_t *conf = json_object();
        for (int i = 0; i < p->n_confidence; i++)
            json_object_set_new(conf, p->confidence[i].key, gx_jnum(p->confidence[i].value));
        json_object_set_new(obj, key, conf);
        return;
    }
    const int is_set = f->custom == GX_FC_HASH_SET;
    const gx_hash_fn *h = is_set ? &p->l2.set_hash : &p->l2.slice_hash;
    if (h->present)
        hash_json(gx_jsub(obj, key), h, is_set);
    else
        gx_jput(obj, key, NULL, 1);
}
