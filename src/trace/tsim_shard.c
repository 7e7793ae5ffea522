/* tsim_shard.c - partial statistics of a shard of a trace-driven run
 * (tsimpar.h), in the form gx_tsim_merge (tsim_merge.c) adds up exactly.
 *
 * Format "gpuxray-sim-partial", version 1 (JSON): the run's identity (the
 * profile's name and a digest of its bytes, the trace's digest and record
 * count, the shard and the shard count, the model configuration), raw
 * counters, the L2 per level and per slice, the latency histogram as
 * [bin, count] pairs, total cycles as the exact fixed-point sum
 * (total_hi, total_lo in hex), min / max latency as C99 hex floats (exact),
 * the accesses split with other shards as [index, hex latency], and, from
 * shard 0 only, the rendered translation and shared-memory reports (every
 * shard translates and sees the shared records of the whole trace; one
 * reports them).
 *
 * Notes: 64-bit seeds go as decimal strings (JSON integers are signed). */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/tsimpar.h"
#include "tsim_internal.h"

#define GX_TSIM_DIGEST_INIT 0xcbf29ce484222325ULL /* FNV-1a offset basis */
#define GX_TSIM_DIGEST_MUL 0x100000001b3ULL       /* FNV-1a prime */

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * GX_TSIM_DIGEST_MUL;
}

void gx_tsim_digest(uint64_t *h, const gx_trace_rec *rec, uint64_t n)
{
    uint64_t d = *h ? *h : GX_TSIM_DIGEST_INIT;
    for (uint64_t i = 0; i < n; i++) {
        const gx_trace_rec *r = &rec[i];
        d = mix(d, r->addr);
        d = mix(d, r->arg);
        d = mix(d, r->cycle);
        d = mix(d, (uint64_t)r->sm << 32 | r->warp);
        d = mix(d, (uint64_t)r->size << 16 | (uint64_t)r->op << 8 | r->lane);
    }
    *h = d;
}

static json_t *u64_str(uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return json_string(b);
}

static json_t *hex_u64(uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%016" PRIx64, v);
    return json_string(b);
}

static json_t *hex_double(double v)
{
    if (!isfinite(v))
        return json_null();
    char b[64];
    snprintf(b, sizeof b, "%a", v);
    return json_string(b);
}

static json_t *cnt(uint64_t v)
{
    return json_integer((json_int_t)v);
}

/* A report part rendered to a string (NULL when it prints nothing). */
typedef int (*render_fn)(const void *obj, FILE *f);

static int render_xlate_json(const void *ms, FILE *f)
{
    return gx_memsys_write_translation_json(ms, f);
}
static int render_xlate_text(const void *ms, FILE *f)
{
    return gx_memsys_write_translation_text(ms, f);
}
static int render_smem_json(const void *sm, FILE *f)
{
    return gx_smem_write_json(sm, f);
}
static int render_smem_text(const void *sm, FILE *f)
{
    return gx_smem_write_text(sm, f);
}

static json_t *rendered(render_fn fn, const void *obj)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = obj ? open_memstream(&buf, &len) : NULL;
    if (!m)
        return json_null();
    (void)fn(obj, m);
    json_t *v = fclose(m) == 0 && buf && len ? json_stringn(buf, len) : json_null();
    free(buf);
    return v;
}

static json_t *level_arr(const gx_tsim_stats *st, int l)
{
    return json_pack("[IIII]", (json_int_t)st->level_accesses[l], (json_int_t)st->level_hits[l],
                     (json_int_t)st->level_sector_misses[l],
                     (json_int_t)st->level_line_misses[l]);
}

static json_t *identity(const gx_tsim *s, const gx_tsim_ident *id)
{
    json_t *cfg = json_pack("{sbsbsososo}", "noise", s->cfg.noise, "skew", s->cfg.skew, "seed",
                            u64_str(s->cfg.seed), "frames_seed", u64_str(s->cfg.frames_seed),
                            "phys_bytes", u64_str(s->cfg.phys_bytes));
    return json_pack("{sssisisssosososIsssisisisIsIso}", "format", "gpuxray-sim-partial",
                     "version", 1, "shard", (int)id->shard, "profile", s->name,
                     "profile_digest", hex_u64(id->profile_digest), "trace_digest",
                     hex_u64(id->trace_digest), "shards", cnt(id->shards), "trace_records",
                     (json_int_t)id->trace_records, "topology", gx_topology_name(s->topo),
                     "partitions", (int)s->partitions, "slices", (int)s->slices, "sm_count",
                     (int)s->sm_count, "sector_bytes", (json_int_t)s->sector_bytes,
                     "page_bytes", (json_int_t)s->page_bytes, "config", cfg);
}

static json_t *latency_obj(const gx_tsim *s, const gx_tsim_stats *st)
{
    json_t *hist = json_array();
    for (uint32_t b = 0; b < GX_TSIM_LAT_BINS; b++)
        if (st->lat_hist[b])
            json_array_append_new(hist, json_pack("[iI]", (int)b, (json_int_t)st->lat_hist[b]));
    json_t *split = json_array();
    for (size_t k = 0; s->ext && k < s->ext->nspans; k++)
        json_array_append_new(split, json_pack("[Io]", (json_int_t)s->ext->span_index[k],
                                               hex_double(s->ext->span_lat[k])));
    return json_pack("{sIsososososo}", "total_hi", (json_int_t)gx_cyc_hi(&s->total),
                     "total_lo", hex_u64(gx_cyc_lo(&s->total)), "min", hex_double(s->min_cycles), "max",
                     hex_double(s->max_cycles), "histogram", hist, "split", split);
}

int gx_tsim_write_partial(const gx_tsim *s, const gx_tsim_ident *id, FILE *f, gx_msg *msg)
{
    if (!s->ms)
        return gx_fail(msg, GX_EINVAL, "sim: merged statistics are not a partial");
    gx_tsim_stats st;
    gx_tsim_get_stats(s, &st);
    uint64_t pages = 0, frames = 0;
    gx_tsim_page_usage(s, &pages, &frames);
    json_t *o = identity(s, id);
    json_t *slices = json_array();
    for (uint32_t i = 0; i < st.slices; i++)
        json_array_append_new(slices, cnt(st.slice_accesses[i]));
    json_object_set_new(o, "pages", json_pack("[II]", (json_int_t)pages, (json_int_t)frames));
    json_object_set_new(
        o, "counts",
        json_pack("{sIsIsIsIsIsIsIsIsIsI}", "accesses", (json_int_t)st.accesses, "reads",
                  (json_int_t)st.reads, "writes", (json_int_t)st.writes, "atomics",
                  (json_int_t)st.atomics, "bytes", (json_int_t)st.bytes, "l2_accesses",
                  (json_int_t)st.l2_accesses, "shared_reads", (json_int_t)st.shared_reads,
                  "shared_writes", (json_int_t)st.shared_writes, "maps", (json_int_t)st.maps,
                  "invalidations", (json_int_t)st.invalidations));
    json_object_set_new(o, "l2",
                        json_pack("{sososIso}", "near", level_arr(&st, 0), "far",
                                  level_arr(&st, 1), "dram", (json_int_t)st.dram_accesses,
                                  "slice_accesses", slices));
    json_object_set_new(o, "latency", latency_obj(s, &st));
    int first = id->shard == 0;
    json_object_set_new(
        o, "smem",
        json_pack("{sbsssoso}", "modelled", s->smem != NULL, "note", s->smem_note, "json",
                  first ? rendered(render_smem_json, s->smem) : json_null(), "text",
                  first ? rendered(render_smem_text, s->smem) : json_null()));
    const void *xl = first && s->xlate ? (const void *)s->ms : NULL;
    json_object_set_new(o, "translation",
                        json_pack("{soso}", "json", rendered(render_xlate_json, xl), "text",
                                  rendered(render_xlate_text, xl)));
    int rc = json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 ? GX_OK : GX_EIO;
    fputc('\n', f);
    json_decref(o);
    return rc == GX_OK ? GX_OK : gx_fail(msg, GX_EIO, "sim: cannot write the partial statistics");
}
