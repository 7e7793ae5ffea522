/* doc.c - the report document: the profile's numbers (from discovery's
 * table when the raw data has it, else from the profile's fields with
 * their recorded confidence), the model's curve over the measured
 * footprints, the profile's optional sections (tlb, smem) and the raw data.
 *
 * Notes:
 * - "samples" of a discovery row is the number of accesses the stage that
 *   produced it made (the stage costs); rows name their finer counts in
 *   their method text.
 * - Without measured footprints the model curve runs at x2 steps from
 *   32 KiB to 4x the profile's L2 capacity (the levels stage's sweep). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/hash.h"
#include "report_int.h"

#define DOC_FIRST_BYTES (32u << 10) /* the levels stage's first footprint */
#define DOC_CAP_FACTOR 4.0          /* sweep to 4x the capacity: DRAM plateau reached */
#define DOC_MAX_POINTS 64

double rp_num(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *rp_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

json_t *rp_path(const json_t *o, const char *path)
{
    char part[64];
    const json_t *cur = o;
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof part)
            return NULL;
        memcpy(part, path, n);
        part[n] = 0;
        cur = json_object_get(cur, part);
        path += n + (dot ? 1 : 0);
    }
    return (json_t *)cur;
}

/* The discovery stage behind a table row. */
static const char *row_stage(const char *param)
{
    static const struct {
        const char *prefix, *stage;
    } map[] = {
        {"timer", "timer"},           {"l2.sector", "line"},         {"l2.line", "line"},
        {"l2.slices", "slices"},      {"l2.partitions", "slices"},   {"l2.hash.slice", "slices"},
        {"slice", "slices"},          {"home partition", "slices"}, {"l2.ways", "ways"},
        {"eviction", "ways"},         {"ways", "ways"},             {"l2.sets", "sets"},
        {"l2.hash.set", "sets"},      {"l2.policy", "policy"},       {"policy", "policy"},
        {"round-robin", "policy"},    {"l2.", "levels"},            {"memory.", "levels"},
        {"first plateau", "levels"},  {"hit skew", "levels"},       {"smem", "smem"},
        {"tlb", "tlb"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(param, map[i].prefix, strlen(map[i].prefix)))
            return map[i].stage;
    return NULL;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static void add_number(json_t *a, const char *param, const char *value, double conf,
                       const char *method, json_t *samples)
{
    json_array_append_new(a, json_pack("{s:s,s:s,s:o,s:s,s:o}", "parameter", param, "value",
                                       value, "confidence", num_or_null(conf), "method", method,
                                       "samples", samples ? samples : json_null()));
}

static void numbers_from_rows(json_t *a, const json_t *data)
{
    json_t *rows = rp_path(data, "rows.rows"), *stages = rp_path(data, "stages.stages");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *st = row_stage(rp_str(r, "parameter"));
        json_t *samples = NULL;
        size_t j;
        json_t *s;
        json_array_foreach(stages, j, s) if (st && !strcmp(rp_str(s, "stage"), st))
        {
            char buf[96];
            snprintf(buf, sizeof buf, "%.0f accesses (%s stage)", rp_num(s, "accesses"), st);
            samples = json_string(buf);
        }
        char method[320];
        snprintf(method, sizeof method, "%s%s", rp_str(r, "method"),
                 json_is_true(json_object_get(r, "superseded"))
                     ? " [tried first; a later row decides]"
                 : json_is_false(json_object_get(r, "in_profile")) &&
                         isfinite(rp_num(r, "confidence"))
                     ? " [not confident: left out of the profile]"
                     : "");
        add_number(a, rp_str(r, "parameter"), rp_str(r, "value"), rp_num(r, "confidence"),
                   method, samples);
    }
}

static void hash_text(const gx_hash_fn *h, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "%d masks:", h->n_masks);
    for (int i = 0; i < h->n_masks && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, " 0x%llx", (unsigned long long)h->masks[i]);
    if (k < len && h->table)
        k += (size_t)snprintf(buf + k, len - k, " + table");
    if (k < len && h->modulo)
        snprintf(buf + k, len - k, " mod %llu", (unsigned long long)h->modulo);
}

/* Numbers from the profile's fields (no discovery table at hand). */
static void numbers_from_profile(json_t *a, const gx_profile *p)
{
    char v[256], m[640];
    snprintf(m, sizeof m, "profile field (%s profile%s%s)",
             p->provenance.kind[0] ? p->provenance.kind : "unknown",
             p->provenance.target[0] ? ", target " : "", p->provenance.target);
#define U(key, val)                                                                        \
    do {                                                                                   \
        if (val) {                                                                         \
            snprintf(v, sizeof v, "%llu", (unsigned long long)(val));                     \
            add_number(a, key, v, gx_profile_confidence(p, key), m, NULL);                 \
        }                                                                                  \
    } while (0)
#define D(key, val)                                                                        \
    do {                                                                                   \
        if (isfinite(val)) {                                                               \
            snprintf(v, sizeof v, "%.0f", (double)(val));                                  \
            add_number(a, key, v, gx_profile_confidence(p, key), m, NULL);                 \
        }                                                                                  \
    } while (0)
    U("device.sm_count", p->device.sm_count);
    U("device.sm_clock_mhz", p->device.sm_clock_mhz);
    U("device.api_l2_bytes", p->device.api_l2_bytes);
    D("timer.overhead_cycles", p->timer_overhead_cycles);
    U("memory.page_bytes", p->memory.page_bytes);
    D("memory.dram_latency_cycles", p->memory.dram_latency_cycles);
    U("l2.line_bytes", p->l2.line_bytes);
    U("l2.sector_bytes", p->l2.sector_bytes);
    U("l2.ways", p->l2.ways);
    U("l2.partitions", p->l2.partitions);
    U("l2.slices", p->l2.slices);
    U("l2.sets_per_slice", p->l2.sets_per_slice);
    U("l2.capacity_bytes", p->l2.capacity_bytes);
    U("l2.persisting_carveout_bytes", p->l2.persisting_carveout_bytes);
    if (p->l2.policy[0])
        add_number(a, "l2.policy", p->l2.policy, gx_profile_confidence(p, "l2.policy"), m, NULL);
    if (p->l2.topology != GX_TOPO_UNKNOWN)
        add_number(a, "l2.topology", gx_topology_name(p->l2.topology),
                   gx_profile_confidence(p, "l2.topology"), m, NULL);
    D("l2.latency_cycles.hit", p->l2.hit_cycles);
    D("l2.latency_cycles.near_hit", p->l2.near_hit_cycles);
    D("l2.latency_cycles.far_hit", p->l2.far_hit_cycles);
    for (int i = 0; i < p->l2.n_levels; i++) {
        char key[48];
        snprintf(key, sizeof key, "l2.levels_from_one_sm[%d]", i);
        snprintf(v, sizeof v, "%llu B at %.0f cycles",
                 (unsigned long long)p->l2.levels[i].capacity_bytes,
                 p->l2.levels[i].latency_cycles);
        add_number(a, key, v, gx_profile_confidence(p, "l2.levels_from_one_sm"), m, NULL);
    }
    if (p->l2.slice_hash.present) {
        hash_text(&p->l2.slice_hash, v, sizeof v);
        add_number(a, "l2.hash.slice", v, gx_profile_confidence(p, "l2.hash.slice"), m, NULL);
    }
    if (p->l2.set_hash.present) {
        hash_text(&p->l2.set_hash, v, sizeof v);
        add_number(a, "l2.hash.set", v, gx_profile_confidence(p, "l2.hash.set"), m, NULL);
    }
#undef U
#undef D
}

/* Footprints: the measured curve's, else the levels stage's sweep. */
static size_t footprints(const gx_profile *p, const json_t *data, double *fp, size_t cap)
{
    size_t n = 0, i;
    json_t *pt;
    json_array_foreach(rp_path(data, "curve.points"), i, pt) if (n < cap)
    {
        double f = rp_num(pt, "footprint_bytes");
        if (f > 0)
            fp[n++] = f;
    }
    if (n)
        return n;
    double c = p->l2.capacity_bytes ? (double)p->l2.capacity_bytes
               : p->l2.n_levels    ? (double)p->l2.levels[p->l2.n_levels - 1].capacity_bytes
                                   : 0;
    if (!(c > 0))
        return 0;
    for (double f = DOC_FIRST_BYTES; f <= DOC_CAP_FACTOR * c && n < cap; f *= 2)
        fp[n++] = f;
    return n;
}

static json_t *model_section(const gx_profile *p, const gx_report_opts *o, const json_t *data)
{
    json_t *m = json_object();
    double fp[DOC_MAX_POINTS], cy[DOC_MAX_POINTS];
    size_t n = footprints(p, data, fp, DOC_MAX_POINTS);
    gx_msg msg;
    gx_msg_clear(&msg);
    int rc = GX_EINVAL;
    if (!o->model)
        snprintf(msg.text, sizeof msg.text, "the model run was not asked for");
    else if (!n)
        snprintf(msg.text, sizeof msg.text, "no footprints: the profile has no L2 capacity");
    else
        rc = rp_model_curve(p, o->profile_path, fp, n, o->seed, cy, &msg);
    json_object_set_new(m, "ran", json_boolean(rc == GX_OK));
    json_object_set_new(m, "note", json_string(rc == GX_OK ? "" : msg.text));
    json_object_set_new(m, "method",
                        json_string("the profile runs as sim:PROFILE (a measured one as its simulated twin: "
                                    "same fields); one thread on SM 0 chases a "
                                    "random cyclic chain, one 32 B slot per 256 B block, at each "
                                    "footprint (4096 timed steps after warm rounds)"));
    if (rc == GX_OK) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(a, json_pack("{s:f,s:o}", "footprint_bytes", fp[i], "cycles",
                                               num_or_null(cy[i])));
        json_object_set_new(m, "curve", a);
    }
    return m;
}

/* The profile's optional sections (tlb, smem), read from its JSON form so
 * they render whatever C struct holds them. */
static json_t *sections(const gx_profile *p)
{
    json_t *s = json_object();
    char *text = gx_profile_to_json(p);
    json_t *pj = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    const char *keys[] = {"tlb", "smem"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(pj, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(s, keys[i], v);
    }
    json_decref(pj);
    return s;
}

int rp_build_doc(const gx_profile *p, const gx_report_opts *o, json_t **doc, gx_msg *msg)
{
    const json_t *data = o->data;
    json_t *d = json_pack("{s:s,s:i}", "format", GX_REPORT_FORMAT, "version", RP_DOC_VERSION);
    json_t *numbers = json_array();
    if (!d || !numbers) {
        json_decref(d);
        json_decref(numbers);
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    }
    json_object_set_new(
        d, "profile",
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I}", "name", p->name, "kind", p->provenance.kind,
                  "target", p->provenance.target, "created", p->provenance.created, "device",
                  p->device.name, "sm_count", (json_int_t)p->device.sm_count, "sm_clock_mhz",
                  (json_int_t)p->device.sm_clock_mhz));
    if (rp_path(data, "rows.rows"))
        numbers_from_rows(numbers, data);
    else
        numbers_from_profile(numbers, p);
    json_object_set_new(d, "numbers", numbers);
    json_object_set_new(d, "model", model_section(p, o, data));
    json_object_set_new(d, "sections", sections(p));
    json_object_set_new(d, "data", data ? json_deep_copy(data) : json_object());
    /* without discovery data, the slice classes of one page come from the
     * profile's own hash (the model's view) */
    if (!rp_path(data, "slice_classes.classes") && p->l2.slice_hash.present && p->l2.line_bytes &&
        p->memory.page_bytes) {
        json_t *sc = json_pack("{s:s,s:I,s:I}", "method",
                               "the profile's slice hash over the lines of the page at physical "
                               "address 0 (no discovery data)",
                               "page_bytes", (json_int_t)p->memory.page_bytes, "line_bytes",
                               (json_int_t)p->l2.line_bytes);
        json_t *cls = json_array();
        uint64_t nl = p->memory.page_bytes / p->l2.line_bytes;
        for (uint64_t i = 0; i < nl && i < 65536; i++)
            json_array_append_new(cls, json_integer((json_int_t)gx_hash_eval(
                                           &p->l2.slice_hash, i * p->l2.line_bytes)));
        json_object_set_new(sc, "classes", cls);
        json_object_set_new(json_object_get(d, "data"), "slice_classes", sc);
    }
    *doc = d;
    return GX_OK;
}
