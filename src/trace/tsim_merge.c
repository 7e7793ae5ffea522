/* tsim_merge.c - the partial statistics of every shard of one run
 * (tsim_shard.c) added up into the run one process would have made
 * (tsimpar.h): counters, levels, slices and histograms add, minima and
 * maxima combine, total cycles add as exact fixed-point sums, an access
 * split between shards takes the largest of its shards' latencies once.
 *
 * Notes: the partials must be of one run (the same profile digest, trace
 * digest, record count, shard count and configuration), each shard 0..N-1
 * exactly once; anything else is refused with a message that names the
 * file and the problem. The translation and shared-memory reports come from
 * shard 0 as rendered (every shard ran them over the whole trace). */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/tsimpar.h"
#include "tsim_internal.h"

/* The most slices a partial may declare (a sanity bound far above any
 * GPU's: the merge allocates one counter per slice). */
#define MERGE_MAX_SLICES (1u << 20)

/* Keys that must be equal in every partial of one run. */
static const char *const same_keys[] = {
    "profile", "profile_digest", "trace_digest", "trace_records", "shards", "topology",
    "partitions", "slices", "sm_count", "sector_bytes", "page_bytes", "config"};

static int bad(gx_msg *msg, const char *name, const char *what, const char *key)
{
    return gx_fail(msg, GX_EINVAL, "%s: %s%s%s", name, key ? key : "", key ? ": " : "", what);
}

static json_t *get(json_t *o, const char *key, json_type t, const char *name, gx_msg *msg)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    if (!v || json_typeof(v) != t) {
        (void)bad(msg, name, "missing or of the wrong type", key);
        return NULL;
    }
    return v;
}

static int get_u64(json_t *o, const char *key, const char *name, gx_msg *msg, uint64_t *out)
{
    json_t *v = get(o, key, JSON_INTEGER, name, msg);
    if (!v)
        return GX_EINVAL;
    if (json_integer_value(v) < 0)
        return bad(msg, name, "negative", key);
    *out = (uint64_t)json_integer_value(v);
    return GX_OK;
}

static int parse_hex_u64(const char *t, uint64_t *out)
{
    char *end;
    if (!t || !*t || *t == '-' || *t == '+')
        return -1;
    *out = strtoull(t, &end, 16);
    return *end ? -1 : 0;
}

/* null -> def; a C99 hex float -> its exact value */
static int get_hexf(json_t *v, double def, double *out)
{
    if (json_is_null(v)) {
        *out = def;
        return 0;
    }
    const char *t = json_string_value(v);
    char *end;
    if (!t || !*t)
        return -1;
    *out = strtod(t, &end);
    return *end || !isfinite(*out) ? -1 : 0;
}

/* ---- one partial ---- */

typedef struct part {
    json_t *root;
    const char *name;
    uint32_t shard, shards;
} part;

static int load_part(const char *text, const char *name, part *p, gx_msg *msg)
{
    json_error_t err;
    p->name = name;
    p->root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!p->root)
        return gx_fail(msg, GX_EINVAL, "%s: not JSON: line %d: %s", name, err.line, err.text);
    json_t *f = json_object_get(p->root, "format");
    json_t *ver = json_object_get(p->root, "version");
    if (!json_is_string(f) || strcmp(json_string_value(f), "gpuxray-sim-partial") ||
        !json_is_integer(ver) || json_integer_value(ver) != 1)
        return bad(msg, name, "not partial statistics of `gpuxray sim --shard` (format "
                   "gpuxray-sim-partial, version 1)", NULL);
    uint64_t sh = 0, n = 0;
    int rc = get_u64(p->root, "shard", name, msg, &sh);
    if (rc == GX_OK)
        rc = get_u64(p->root, "shards", name, msg, &n);
    if (rc != GX_OK)
        return rc;
    if (n < 1 || n > GX_TSIM_MAX_SHARDS || sh >= n)
        return gx_fail(msg, GX_EINVAL, "%s: shard %" PRIu64 " of %" PRIu64 ": out of range",
                       name, sh, n);
    p->shard = (uint32_t)sh;
    p->shards = (uint32_t)n;
    return GX_OK;
}

static int check_same(const part *a, const part *b, gx_msg *msg)
{
    for (size_t k = 0; k < sizeof same_keys / sizeof *same_keys; k++) {
        json_t *x = json_object_get(a->root, same_keys[k]);
        json_t *y = json_object_get(b->root, same_keys[k]);
        if (!x || !y)
            return bad(msg, x ? b->name : a->name, "missing", same_keys[k]);
        if (!json_equal(x, y))
            return gx_fail(msg, GX_EINVAL,
                           "%s: %s differs from %s's: the partials are of different runs (a "
                           "different profile, trace, configuration or shard count)",
                           b->name, same_keys[k], a->name);
    }
    return GX_OK;
}

/* Every shard 0..N-1 exactly once. */
static int check_cover(const part *p, uint32_t n, gx_msg *msg)
{
    uint32_t N = p[0].shards;
    int32_t *seen = malloc((size_t)N * sizeof *seen);
    if (!seen)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    for (uint32_t k = 0; k < N; k++)
        seen[k] = -1;
    int rc = GX_OK;
    for (uint32_t i = 0; i < n && rc == GX_OK; i++) {
        if (seen[p[i].shard] >= 0)
            rc = gx_fail(msg, GX_EINVAL, "shard %u of %u given twice: %s and %s", p[i].shard,
                         N, p[seen[p[i].shard]].name, p[i].name);
        seen[p[i].shard] = (int32_t)i;
    }
    for (uint32_t k = 0; k < N && rc == GX_OK; k++)
        if (seen[k] < 0)
            rc = gx_fail(msg, GX_EINVAL, "shard %u of %u is missing (%u partial%s given)", k, N,
                         n, n == 1 ? "" : "s");
    free(seen);
    return rc;
}

/* ---- the merged run ---- */

static int get_u32(json_t *o, const char *key, const char *name, uint32_t lo, uint32_t hi,
                   gx_msg *msg, uint32_t *out)
{
    uint64_t v = 0;
    int rc = get_u64(o, key, name, msg, &v);
    if (rc == GX_OK && (v < lo || v > hi))
        rc = gx_fail(msg, GX_EINVAL, "%s: %s: %" PRIu64 " out of range %u..%u", name, key, v,
                     lo, hi);
    if (rc == GX_OK)
        *out = (uint32_t)v;
    return rc;
}

static int get_dec_u64(json_t *o, const char *key, const char *name, gx_msg *msg,
                       uint64_t *out)
{
    json_t *v = get(o, key, JSON_STRING, name, msg);
    if (!v)
        return GX_EINVAL;
    const char *t = json_string_value(v);
    char *end;
    if (!*t || *t == '-' || *t == '+')
        return bad(msg, name, "not a decimal number", key);
    *out = strtoull(t, &end, 10);
    return *end ? bad(msg, name, "not a decimal number", key) : GX_OK;
}

/* The run's shape and configuration from one partial. */
static int shape(gx_tsim *s, const part *p, gx_msg *msg)
{
    json_t *r = p->root, *v, *cfg;
    const char *n = p->name;
    if (!(v = get(r, "profile", JSON_STRING, n, msg)))
        return GX_EINVAL;
    snprintf(s->name, sizeof s->name, "%s", json_string_value(v));
    if (!(v = get(r, "topology", JSON_STRING, n, msg)))
        return GX_EINVAL;
    const char *t = json_string_value(v);
    s->topo = !strcmp(t, gx_topology_name(GX_TOPO_NEAR_FAR)) ? GX_TOPO_NEAR_FAR
              : !strcmp(t, gx_topology_name(GX_TOPO_UNIFORM)) ? GX_TOPO_UNIFORM
                                                                : GX_TOPO_UNKNOWN;
    if (s->topo == GX_TOPO_UNKNOWN)
        return bad(msg, n, "not a topology", "topology");
    int rc = get_u32(r, "partitions", n, 1, MERGE_MAX_SLICES, msg, &s->partitions);
    if (rc == GX_OK)
        rc = get_u32(r, "slices", n, 1, MERGE_MAX_SLICES, msg, &s->slices);
    if (rc == GX_OK)
        rc = get_u32(r, "sm_count", n, 1, UINT32_MAX, msg, &s->sm_count);
    if (rc == GX_OK)
        rc = get_u32(r, "sector_bytes", n, 1, UINT32_MAX, msg, &s->sector_bytes);
    if (rc == GX_OK)
        rc = get_u64(r, "page_bytes", n, msg, &s->page_bytes);
    if (rc != GX_OK)
        return rc;
    if (!(cfg = get(r, "config", JSON_OBJECT, n, msg)))
        return GX_EINVAL;
    json_t *no = json_object_get(cfg, "noise"), *sk = json_object_get(cfg, "skew");
    if (!json_is_boolean(no) || !json_is_boolean(sk))
        return bad(msg, n, "noise and skew must be true or false", "config");
    s->cfg.noise = json_is_true(no);
    s->cfg.skew = json_is_true(sk);
    rc = get_dec_u64(cfg, "seed", n, msg, &s->cfg.seed);
    if (rc == GX_OK)
        rc = get_dec_u64(cfg, "frames_seed", n, msg, &s->cfg.frames_seed);
    if (rc == GX_OK)
        rc = get_dec_u64(cfg, "phys_bytes", n, msg, &s->cfg.phys_bytes);
    return rc;
}

static const char *const count_keys[] = {"accesses", "reads",    "writes",        "atomics",
                                         "bytes",    "l2_accesses", "shared_reads",
                                         "shared_writes", "maps", "invalidations"};

static int add_counts(gx_tsim *s, const part *p, gx_msg *msg)
{
    json_t *c = get(p->root, "counts", JSON_OBJECT, p->name, msg);
    if (!c)
        return GX_EINVAL;
    uint64_t *dst[] = {&s->accesses,       &s->op_count[0],    &s->op_count[1],
                       &s->op_count[2],    &s->bytes,          &s->l2_accesses,
                       &s->other_count[0], &s->other_count[1], &s->other_count[2],
                       &s->other_count[3]};
    for (size_t k = 0; k < sizeof count_keys / sizeof *count_keys; k++) {
        uint64_t v = 0;
        int rc = get_u64(c, count_keys[k], p->name, msg, &v);
        if (rc != GX_OK)
            return rc;
        *dst[k] += v;
    }
    return GX_OK;
}

static int add_level(gx_l2_level_stats *l, json_t *a, const char *name, const char *key,
                     gx_msg *msg)
{
    uint64_t v[4];
    if (!json_is_array(a) || json_array_size(a) != 4)
        return bad(msg, name, "not [accesses, hits, sector_misses, line_misses]", key);
    for (size_t k = 0; k < 4; k++) {
        json_t *e = json_array_get(a, k);
        if (!json_is_integer(e) || json_integer_value(e) < 0)
            return bad(msg, name, "not [accesses, hits, sector_misses, line_misses]", key);
        v[k] = (uint64_t)json_integer_value(e);
    }
    l->accesses += v[0];
    l->hits += v[1];
    l->sector_misses += v[2];
    l->line_misses += v[3];
    return GX_OK;
}

static int add_l2(gx_tsim *s, const part *p, gx_msg *msg)
{
    gx_tsim_ext *x = s->ext;
    json_t *l = get(p->root, "l2", JSON_OBJECT, p->name, msg);
    if (!l)
        return GX_EINVAL;
    int rc = add_level(&x->level[0], json_object_get(l, "near"), p->name, "l2.near", msg);
    if (rc == GX_OK)
        rc = add_level(&x->level[1], json_object_get(l, "far"), p->name, "l2.far", msg);
    uint64_t d = 0;
    if (rc == GX_OK)
        rc = get_u64(l, "dram", p->name, msg, &d);
    if (rc != GX_OK)
        return rc;
    x->dram_accesses += d;
    json_t *sa = json_object_get(l, "slice_accesses");
    if (!json_is_array(sa) || json_array_size(sa) != s->slices)
        return bad(msg, p->name, "not one count per slice", "l2.slice_accesses");
    for (uint32_t i = 0; i < s->slices; i++) {
        json_t *e = json_array_get(sa, i);
        if (!json_is_integer(e) || json_integer_value(e) < 0)
            return bad(msg, p->name, "not one count per slice", "l2.slice_accesses");
        x->slice_accesses[i] += (uint64_t)json_integer_value(e);
    }
    return GX_OK;
}

/* split accesses of every shard: (index, latency) */
typedef struct split_acc {
    uint64_t index;
    double lat;
} split_acc;

typedef struct split_list {
    split_acc *a;
    size_t n, cap;
} split_list;

static int add_splits(split_list *L, json_t *arr, const char *name, gx_msg *msg)
{
    if (!json_is_array(arr))
        return bad(msg, name, "missing or not a list", "latency.split");
    for (size_t k = 0; k < json_array_size(arr); k++) {
        json_t *e = json_array_get(arr, k);
        json_t *i = json_array_get(e, 0);
        double lat = 0;
        if (json_array_size(e) != 2 || !json_is_integer(i) || json_integer_value(i) < 0 ||
            json_is_null(json_array_get(e, 1)) || get_hexf(json_array_get(e, 1), 0, &lat))
            return bad(msg, name, "not [index, hex latency] pairs", "latency.split");
        if (L->n == L->cap) {
            size_t cap = L->cap ? 2 * L->cap : 1024;
            split_acc *na = realloc(L->a, cap * sizeof *na);
            if (!na)
                return gx_fail(msg, GX_ENOMEM, "out of memory");
            L->a = na;
            L->cap = cap;
        }
        L->a[L->n++] = (split_acc){(uint64_t)json_integer_value(i), lat};
    }
    return GX_OK;
}

static int add_latency(gx_tsim *s, const part *p, split_list *L, gx_msg *msg)
{
    json_t *l = get(p->root, "latency", JSON_OBJECT, p->name, msg);
    json_t *th = l ? get(l, "total_hi", JSON_INTEGER, p->name, msg) : NULL;
    json_t *tl = th ? get(l, "total_lo", JSON_STRING, p->name, msg) : NULL;
    if (!tl)
        return GX_EINVAL;
    uint64_t tlo = 0;
    double lo = 0, hi = 0;
    if (parse_hex_u64(json_string_value(tl), &tlo))
        return bad(msg, p->name, "not a hex number", "latency.total_lo");
    gx_cyc_sum t = gx_cyc_from((int64_t)json_integer_value(th), tlo);
    if (get_hexf(json_object_get(l, "min"), INFINITY, &lo) ||
        get_hexf(json_object_get(l, "max"), -INFINITY, &hi))
        return bad(msg, p->name, "min and max: hex floats or null", "latency");
    gx_cyc_merge(&s->total, &t);
    s->min_cycles = lo < s->min_cycles ? lo : s->min_cycles;
    s->max_cycles = hi > s->max_cycles ? hi : s->max_cycles;
    json_t *h = json_object_get(l, "histogram");
    if (!json_is_array(h))
        return bad(msg, p->name, "missing or not a list", "latency.histogram");
    for (size_t k = 0; k < json_array_size(h); k++) {
        json_t *e = json_array_get(h, k), *b = json_array_get(e, 0), *c = json_array_get(e, 1);
        if (json_array_size(e) != 2 || !json_is_integer(b) || !json_is_integer(c) ||
            json_integer_value(b) < 0 || json_integer_value(b) >= GX_TSIM_LAT_BINS ||
            json_integer_value(c) < 0)
            return bad(msg, p->name, "not [bin, count] pairs of the histogram's bins",
                       "latency.histogram");
        s->hist[json_integer_value(b)] += (uint64_t)json_integer_value(c);
    }
    return add_splits(L, json_object_get(l, "split"), p->name, msg);
}

static int dup_block(json_t *o, const char *key, const char *name, const char *path,
                     char **out, gx_msg *msg)
{
    json_t *v = json_object_get(o, key);
    if (json_is_null(v))
        return GX_OK;
    if (!json_is_string(v))
        return bad(msg, name, "a string or null", path);
    *out = strdup(json_string_value(v));
    return *out ? GX_OK : gx_fail(msg, GX_ENOMEM, "out of memory");
}

/* What shard 0 alone reports: shared memory, translation, pages. */
static int take_first(gx_tsim *s, const part *p, gx_msg *msg)
{
    gx_tsim_ext *x = s->ext;
    json_t *sm = get(p->root, "smem", JSON_OBJECT, p->name, msg);
    json_t *tr = sm ? get(p->root, "translation", JSON_OBJECT, p->name, msg) : NULL;
    json_t *pg = tr ? get(p->root, "pages", JSON_ARRAY, p->name, msg) : NULL;
    if (!pg)
        return GX_EINVAL;
    json_t *mod = json_object_get(sm, "modelled"), *note = json_object_get(sm, "note");
    if (!json_is_boolean(mod) || !json_is_string(note))
        return bad(msg, p->name, "modelled (true / false) and note (a string) required", "smem");
    x->smem_on = json_is_true(mod);
    snprintf(s->smem_note, sizeof s->smem_note, "%s", json_string_value(note));
    json_t *a = json_array_get(pg, 0), *b = json_array_get(pg, 1);
    if (json_array_size(pg) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
        json_integer_value(a) < 0 || json_integer_value(b) < 0)
        return bad(msg, p->name, "not [pages, frames]", "pages");
    x->pages = (uint64_t)json_integer_value(a);
    x->frames = (uint64_t)json_integer_value(b);
    int rc = dup_block(sm, "json", p->name, "smem.json", &x->smem_json, msg);
    if (rc == GX_OK)
        rc = dup_block(sm, "text", p->name, "smem.text", &x->smem_text, msg);
    if (rc == GX_OK)
        rc = dup_block(tr, "json", p->name, "translation.json", &x->xlate_json, msg);
    if (rc == GX_OK)
        rc = dup_block(tr, "text", p->name, "translation.text", &x->xlate_text, msg);
    return rc;
}

static int by_index(const void *a, const void *b)
{
    uint64_t x = ((const split_acc *)a)->index, y = ((const split_acc *)b)->index;
    return (x > y) - (x < y);
}

/* An access split between shards: the largest of its parts' latencies. */
static void account_splits(gx_tsim *s, split_list *L)
{
    if (L->n)
        qsort(L->a, L->n, sizeof *L->a, by_index);
    for (size_t i = 0; i < L->n;) {
        double m = L->a[i].lat;
        size_t j = i + 1;
        for (; j < L->n && L->a[j].index == L->a[i].index; j++)
            m = L->a[j].lat > m ? L->a[j].lat : m;
        gx_tsim_account(s, m);
        i = j;
    }
}

static gx_tsim *new_merged(void)
{
    gx_tsim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->hist = calloc(GX_TSIM_LAT_BINS, sizeof *s->hist);
    s->ext = calloc(1, sizeof *s->ext);
    s->min_cycles = INFINITY;
    s->max_cycles = -INFINITY;
    if (!s->hist || !s->ext) {
        gx_tsim_free(s);
        return NULL;
    }
    return s;
}

static int merge_parts(gx_tsim *s, const part *p, uint32_t n, gx_msg *msg)
{
    int rc = shape(s, &p[0], msg);
    if (rc != GX_OK)
        return rc;
    s->ext->slices = s->slices;
    s->ext->shards = p[0].shards;
    s->ext->slice_accesses = calloc(s->slices, sizeof *s->ext->slice_accesses);
    if (!s->ext->slice_accesses)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    split_list L = {NULL, 0, 0};
    for (uint32_t i = 0; i < n && rc == GX_OK; i++) {
        rc = add_counts(s, &p[i], msg);
        if (rc == GX_OK)
            rc = add_l2(s, &p[i], msg);
        if (rc == GX_OK)
            rc = add_latency(s, &p[i], &L, msg);
        if (rc == GX_OK && p[i].shard == 0)
            rc = take_first(s, &p[i], msg);
    }
    if (rc == GX_OK)
        account_splits(s, &L);
    free(L.a);
    return rc;
}

int gx_tsim_merge(const char *const *texts, const char *const *names, uint32_t n,
                  gx_tsim **out, gx_msg *msg)
{
    *out = NULL;
    if (!n)
        return gx_fail(msg, GX_EINVAL, "no partial statistics given");
    part *p = calloc(n, sizeof *p);
    if (!p)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    int rc = GX_OK;
    for (uint32_t i = 0; i < n && rc == GX_OK; i++)
        rc = load_part(texts[i], names[i], &p[i], msg);
    for (uint32_t i = 1; i < n && rc == GX_OK; i++)
        rc = check_same(&p[0], &p[i], msg);
    if (rc == GX_OK)
        rc = check_cover(p, n, msg);
    gx_tsim *s = NULL;
    if (rc == GX_OK && !(s = new_merged()))
        rc = gx_fail(msg, GX_ENOMEM, "out of memory");
    if (rc == GX_OK)
        rc = merge_parts(s, p, n, msg);
    for (uint32_t i = 0; i < n; i++)
        json_decref(p[i].root);
    free(p);
    if (rc != GX_OK) {
        gx_tsim_free(s);
        return rc;
    }
    *out = s;
    return GX_OK;
}

uint64_t gx_tsim_page_bytes(const gx_tsim *s)
{
    return s->page_bytes;
}
