/* validate.c - gx_profile_validate: one rule per check, each failure names
 * the field and the rule (cachegrind check_cache style).
 *
 * Notes:
 * - Kinds "reference" and "simulated" are run by the sim target, so every
 *   field the model needs must be present; a "measured" profile may leave
 *   anything absent, but what is present must be consistent.
 * - Hash masks act on physical addresses but only their line-address bits
 *   matter, so a mask bit below log2(line_bytes) is an error.
 * - The policy spec is checked against the policy registry (policy.h). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/hash.h"
#include "gpuxray/policy.h"
#include "gpuxray/profile.h"
#include "gpuxray/bits.h"

#define BAD(field, ...) bad_field(msg, field, __VA_ARGS__)

static int bad_field(gx_msg *msg, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad_field(gx_msg *msg, const char *field, const char *fmt, ...)
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

static int check_kind(const gx_profile *p, gx_msg *msg)
{
    const char *k = p->provenance.kind;
    if (!*k)
        return BAD("provenance.kind", "missing (one of reference, simulated, measured)");
    if (strcmp(k, "reference") && strcmp(k, "simulated") && strcmp(k, "measured"))
        return BAD("provenance.kind", "\"%s\" is not one of reference, simulated, measured", k);
    return GX_OK;
}

static int check_device(const gx_profile *p, gx_msg *msg)
{
    if (needs_all(p) && p->device.sm_count == 0)
        return BAD("device.sm_count", "required for a %s profile", p->provenance.kind);
    if (p->device.sm_count > 4096)
        return BAD("device.sm_count", "%u > 4096", p->device.sm_count);
    return GX_OK;
}

static int check_latency(const char *field, double v, int required, const gx_profile *p,
                         gx_msg *msg)
{
    if (isnan(v)) {
        if (required)
            return BAD(field, "required for a %s profile", p->provenance.kind);
        return GX_OK;
    }
    if (!(v > 0) || isinf(v))
        return BAD(field, "%g must be a positive number of cycles", v);
    return GX_OK;
}

static int check_timer_memory(const gx_profile *p, gx_msg *msg)
{
    double t = p->timer_overhead_cycles;
    if (!isnan(t) && (t < 0 || isinf(t)))
        return BAD("timer.overhead_cycles", "%g must be >= 0", t);
    uint64_t pg = p->memory.page_bytes;
    if (pg && (!gx_is_pow2_u64(pg) || pg < 4096))
        return BAD("memory.page_bytes", "%" PRIu64 " must be a power of two >= 4096", pg);
    if (!pg && needs_all(p))
        return BAD("memory.page_bytes", "required for a %s profile", p->provenance.kind);
    return check_latency("memory.dram_latency_cycles", p->memory.dram_latency_cycles,
                         needs_all(p), p, msg);
}

static int check_geometry(const gx_profile *p, gx_msg *msg)
{
    const int all = needs_all(p);
    uint32_t line = p->l2.line_bytes, sec = p->l2.sector_bytes;
    if (line && (!gx_is_pow2_u64(line) || line < 32 || line > 256))
        return BAD("l2.line_bytes", "%u must be a power of two in 32..256", line);
    if (sec && (!gx_is_pow2_u64(sec) || sec < 8))
        return BAD("l2.sector_bytes", "%u must be a power of two >= 8", sec);
    if (sec && line && (sec > line || line % sec))
        return BAD("l2.sector_bytes", "%u must divide line_bytes = %u (the line or a "
                   "power-of-two fraction of it)", sec, line);
    if (p->l2.ways > 64)
        return BAD("l2.ways", "%u must be in 1..64", p->l2.ways);
    if (p->l2.slices > 1024)
        return BAD("l2.slices", "%u must be in 1..1024", p->l2.slices);
    if (p->l2.partitions && p->l2.slices && p->l2.slices % p->l2.partitions)
        return BAD("l2.partitions", "%u must divide slices = %u", p->l2.partitions,
                   p->l2.slices);
    if (p->l2.partitions > 1024)
        return BAD("l2.partitions", "%u must be in 1..slices", p->l2.partitions);
    if (all) {
        static const char *names[] = {"line_bytes", "sector_bytes", "ways", "partitions",
                                      "slices", "sets_per_slice"};
        const uint32_t vals[] = {line, sec, p->l2.ways, p->l2.partitions, p->l2.slices,
                                 p->l2.sets_per_slice};
        for (size_t i = 0; i < 6; i++)
            if (vals[i] == 0) {
                char f[48];
                snprintf(f, sizeof f, "l2.%s", names[i]);
                return BAD(f, "required (>= 1) for a %s profile", p->provenance.kind);
            }
        if (!p->l2.capacity_bytes)
            return BAD("l2.capacity_bytes", "required for a %s profile", p->provenance.kind);
    }
    if (line && p->l2.ways && p->l2.slices && p->l2.sets_per_slice && p->l2.capacity_bytes) {
        uint64_t c = (uint64_t)p->l2.slices * p->l2.sets_per_slice * p->l2.ways * line;
        if (c != p->l2.capacity_bytes)
            return BAD("l2.capacity_bytes",
                       "%" PRIu64 " != slices*sets_per_slice*ways*line_bytes = %" PRIu64,
                       p->l2.capacity_bytes, c);
    }
    return GX_OK;
}

static int check_policy(const gx_profile *p, gx_msg *msg)
{
    if (!p->l2.policy[0]) {
        if (needs_all(p))
            return BAD("l2.policy", "required for a %s profile", p->provenance.kind);
        return GX_OK;
    }
    gx_policy pol;
    gx_msg pm;
    gx_msg_clear(&pm);
    if (gx_policy_from_spec(p->l2.policy, &pol, &pm) != GX_OK)
        return BAD("l2.policy", "\"%s\" is not a known policy spec: %s", p->l2.policy, pm.text);
    return GX_OK;
}

static int check_topology(const gx_profile *p, gx_msg *msg)
{
    gx_topology t = p->l2.topology;
    const int all = needs_all(p);
    if (t != GX_TOPO_UNKNOWN && t != GX_TOPO_UNIFORM && t != GX_TOPO_NEAR_FAR)
        return BAD("l2.topology", "unknown topology %d (uniform, near-far)", (int)t);
    if (t == GX_TOPO_UNKNOWN && all)
        return BAD("l2.topology", "required for a %s profile", p->provenance.kind);
    if (t == GX_TOPO_NEAR_FAR && p->l2.partitions && p->l2.partitions < 2)
        return BAD("l2.partitions", "near-far topology needs partitions >= 2, got %u",
                   p->l2.partitions);
    if (p->l2.near_far.copy_to_near < -1 || p->l2.near_far.copy_to_near > 1)
        return BAD("l2.near_far.copy_to_near", "must be true or false");
    if (p->l2.near_far.victims_to_far < -1 || p->l2.near_far.victims_to_far > 1)
        return BAD("l2.near_far.victims_to_far", "must be true or false");
    int rc;
    if ((rc = check_latency("l2.latency_cycles.hit", p->l2.hit_cycles,
                            all && t == GX_TOPO_UNIFORM, p, msg)) ||
        (rc = check_latency("l2.latency_cycles.near_hit", p->l2.near_hit_cycles,
                            all && t == GX_TOPO_NEAR_FAR, p, msg)) ||
        (rc = check_latency("l2.latency_cycles.far_hit", p->l2.far_hit_cycles,
                            all && t == GX_TOPO_NEAR_FAR, p, msg)))
        return rc;
    double fx = p->l2.far_stream_extra_cycles;
    if (!isnan(fx) && (!(fx >= 0) || isinf(fx)))
        return BAD("l2.latency_cycles.far_stream_extra", "%g must be zero or a positive number of "
                   "cycles", fx);
    if (!isnan(fx) && p->l2.topology != GX_TOPO_NEAR_FAR)
        return BAD("l2.latency_cycles.far_stream_extra", "applies to a near-far topology only");
    if (!isnan(p->l2.near_hit_cycles) && !isnan(p->l2.far_hit_cycles) &&
        !(p->l2.far_hit_cycles > p->l2.near_hit_cycles))
        return BAD("l2.latency_cycles.far_hit", "%g must exceed near_hit = %g",
                   p->l2.far_hit_cycles, p->l2.near_hit_cycles);
    double top = isnan(p->l2.far_hit_cycles) ? p->l2.hit_cycles : p->l2.far_hit_cycles;
    if (!isnan(top) && !isnan(p->memory.dram_latency_cycles) &&
        !(p->memory.dram_latency_cycles > top))
        return BAD("memory.dram_latency_cycles", "%g must exceed the slowest L2 hit = %g",
                   p->memory.dram_latency_cycles, top);
    return GX_OK;
}

static int check_levels(const gx_profile *p, gx_msg *msg)
{
    if (p->l2.n_levels < 0 || p->l2.n_levels > GX_MAX_LEVELS)
        return BAD("l2.levels_from_one_sm", "%d levels (0..%d)", p->l2.n_levels, GX_MAX_LEVELS);
    for (int i = 0; i < p->l2.n_levels; i++) {
        const gx_level *lv = &p->l2.levels[i];
        char f[64];
        snprintf(f, sizeof f, "l2.levels_from_one_sm[%d].capacity_bytes", i);
        if (lv->capacity_bytes == 0)
            return BAD(f, "must be > 0");
        if (i > 0 && lv->capacity_bytes <= p->l2.levels[i - 1].capacity_bytes)
            return BAD(f, "%" PRIu64 " must exceed the previous level's %" PRIu64
                       " (levels increase)", lv->capacity_bytes,
                       p->l2.levels[i - 1].capacity_bytes);
        snprintf(f, sizeof f, "l2.levels_from_one_sm[%d].latency_cycles", i);
        if (!(lv->latency_cycles > 0) || isinf(lv->latency_cycles))
            return BAD(f, "%g must be a positive number of cycles", lv->latency_cycles);
    }
    return GX_OK;
}

/* Rank over GF(2) of the masks (Gaussian elimination on copies). */
static int gf2_rank(const uint64_t *m, int n)
{
    uint64_t v[GX_MAX_MASKS];
    int r = 0;
    memcpy(v, m, (size_t)n * sizeof *v);
    for (int bit = 63; bit >= 0 && r < n; bit--) {
        uint64_t b = (uint64_t)1 << bit;
        int piv = -1;
        for (int i = r; i < n; i++)
            if (v[i] & b) {
                piv = i;
                break;
            }
        if (piv < 0)
            continue;
        uint64_t t = v[piv];
        v[piv] = v[r];
        v[r] = t;
        for (int i = 0; i < n; i++)
            if (i != r && (v[i] & b))
                v[i] ^= v[r];
        r++;
    }
    return r;
}

static int check_masks(const gx_profile *p, const gx_hash_fn *h, const char *name, gx_msg *msg)
{
    char f[64];
    if (h->n_masks < 0 || h->n_masks > GX_MAX_MASKS)
        return BAD(name, "%d masks (0..%d)", h->n_masks, GX_MAX_MASKS);
    uint64_t low = 0;
    if (p->l2.line_bytes && gx_is_pow2_u64(p->l2.line_bytes))
        low = (uint64_t)p->l2.line_bytes - 1;
    for (int i = 0; i < h->n_masks; i++) {
        snprintf(f, sizeof f, "%s.masks[%d]", name, i);
        if (h->masks[i] == 0)
            return BAD(f, "a mask must be nonzero");
        if (h->masks[i] & low)
            return BAD(f, "0x%" PRIx64 " uses bits below log2(line_bytes) = %d (the hash works "
                       "on line addresses)", h->masks[i], gx_log2_u64(p->l2.line_bytes));
        if (strcmp(p->provenance.kind, "measured") == 0 && h->obs_lo >= 0 && h->obs_hi >= 0 &&
            h->obs_hi < 64) {
            uint64_t in = (h->obs_hi == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (h->obs_hi + 1)) - 1)) &
                          ~(((uint64_t)1 << h->obs_lo) - 1);
            if (h->masks[i] & ~in)
                return BAD(f, "0x%" PRIx64 " uses bits outside observable_bits [%d, %d] of a "
                           "measured profile", h->masks[i], h->obs_lo, h->obs_hi);
        }
    }
    snprintf(f, sizeof f, "%s.masks", name);
    if (gf2_rank(h->masks, h->n_masks) != h->n_masks)
        return BAD(f, "the %d masks are not linearly independent over GF(2)", h->n_masks);
    if (h->obs_lo >= 0 || h->obs_hi >= 0) {
        snprintf(f, sizeof f, "%s.observable_bits", name);
        if (h->obs_lo < 0 || h->obs_hi < 0 || h->obs_lo > h->obs_hi || h->obs_hi >= 64)
            return BAD(f, "[%d, %d] must satisfy 0 <= lo <= hi < 64", h->obs_lo, h->obs_hi);
    }
    return GX_OK;
}

/* Near-far: the slice hash may give the slice WITHIN a partition (range
 * slices/partitions), since a line sits in the partition of the SM that reads
 * it; or the global slice (range slices, the partition being the line's home). */
static uint32_t slice_hash_range(const gx_profile *p, const gx_hash_fn *h)
{
    const uint32_t s = p->l2.slices;
    if (p->l2.topology == GX_TOPO_NEAR_FAR && p->l2.partitions > 1 && s) {
        uint32_t spp = s / p->l2.partitions;
        if (h->table) {
            uint32_t mx = 0;
            for (size_t i = 0; i < ((size_t)1 << h->n_masks); i++)
                if (h->table[i] > mx)
                    mx = h->table[i];
            if (mx < spp)
                return spp;
        } else if (((uint64_t)1 << h->n_masks) == spp) {
            return spp;
        }
    }
    return s;
}

static int check_table(const gx_profile *p, const gx_hash_fn *h, gx_msg *msg)
{
    const uint32_t s = slice_hash_range(p, h);
    if (h->n_masks > 24)
        return BAD("l2.hash.slice.table", "a table needs n_masks <= 24, got %d", h->n_masks);
    size_t n = (size_t)1 << h->n_masks;
    for (size_t i = 0; i < n; i++)
        if (s && h->table[i] >= s)
            return BAD("l2.hash.slice.table", "entry [%zu] = %u must be < slices = %u", i,
                       h->table[i], s);
    if (!s)
        return GX_OK;
    unsigned char *seen = calloc(s, 1);
    if (!seen)
        return gx_fail(msg, GX_ENOMEM, "l2.hash.slice.table: out of memory");
    for (size_t i = 0; i < n; i++)
        seen[h->table[i]] = 1;
    uint32_t missing = s;
    for (uint32_t i = 0; i < s; i++)
        if (!seen[i]) {
            missing = i;
            break;
        }
    free(seen);
    if (missing < s)
        return BAD("l2.hash.slice.table", "slice %u never appears (the table must cover "
                   "0..slices-1 = %u)", missing, s - 1);
    return GX_OK;
}

static int check_hashes(const gx_profile *p, gx_msg *msg)
{
    const gx_hash_fn *sh = &p->l2.slice_hash, *st = &p->l2.set_hash;
    const int all = needs_all(p);
    int rc;
    if (!sh->present && all)
        return BAD("l2.hash.slice", "required for a %s profile", p->provenance.kind);
    if (!st->present && all)
        return BAD("l2.hash.set", "required for a %s profile", p->provenance.kind);
    if (sh->present) {
        if ((rc = check_masks(p, sh, "l2.hash.slice", msg)))
            return rc;
        if (sh->modulo)
            return BAD("l2.hash.slice.modulo", "a slice hash has no modulo (use a table)");
        if (sh->table) {
            if ((rc = check_table(p, sh, msg)))
                return rc;
        } else if (p->l2.slices && ((uint64_t)1 << sh->n_masks) != slice_hash_range(p, sh)) {
            return BAD("l2.hash.slice.masks", "2^n_masks = %" PRIu64 " != slices = %u (without "
                       "a table)", (uint64_t)1 << sh->n_masks, p->l2.slices);
        }
    }
    if (st->present) {
        if ((rc = check_masks(p, st, "l2.hash.set", msg)))
            return rc;
        if (st->table)
            return BAD("l2.hash.set.table", "a set hash has no table (use modulo)");
        const uint32_t sets = p->l2.sets_per_slice;
        if (st->modulo) {
            if (sets && st->modulo != sets)
                return BAD("l2.hash.set.modulo", "%" PRIu64 " != sets_per_slice = %u",
                           st->modulo, sets);
            if (((uint64_t)1 << st->n_masks) < st->modulo)
                return BAD("l2.hash.set.masks", "2^n_masks = %" PRIu64 " < modulo = %" PRIu64
                           " (some sets unreachable)", (uint64_t)1 << st->n_masks, st->modulo);
        } else if (sets && ((uint64_t)1 << st->n_masks) != sets) {
            return BAD("l2.hash.set.masks", "2^n_masks = %" PRIu64 " != sets_per_slice = %u "
                       "(without a modulo)", (uint64_t)1 << st->n_masks, sets);
        }
    }
    return GX_OK;
}

static int check_confidence(const gx_profile *p, gx_msg *msg)
{
    if (p->n_confidence < 0 || p->n_confidence > GX_MAX_CONFIDENCE)
        return BAD("confidence", "%d entries (0..%d)", p->n_confidence, GX_MAX_CONFIDENCE);
    for (int i = 0; i < p->n_confidence; i++) {
        double v = p->confidence[i].value;
        if (!(v >= 0 && v <= 1)) {
            char f[96];
            snprintf(f, sizeof f, "confidence.%s", p->confidence[i].key);
            return BAD(f, "%g must be in 0..1", v);
        }
    }
    return GX_OK;
}

static int check_sim(const gx_profile *p, gx_msg *msg)
{
    if (!p->sim.present)
        return GX_OK;
    const struct {
        const char *f;
        double v;
    } nz[] = {{"sim.noise.jitter_cycles", p->sim.jitter_cycles},
              {"sim.noise.outlier_rate", p->sim.outlier_rate},
              {"sim.noise.outlier_cycles", p->sim.outlier_cycles},
              {"sim.noise.background_evictions_per_kaccess",
               p->sim.background_evictions_per_kaccess},
              {"sim.sm_slice_skew_cycles", p->sim.sm_slice_skew_cycles}};
    for (size_t i = 0; i < sizeof nz / sizeof nz[0]; i++)
        if (!(nz[i].v >= 0) || isinf(nz[i].v))
            return BAD(nz[i].f, "%g must be >= 0", nz[i].v);
    if (p->sim.outlier_rate > 1)
        return BAD("sim.noise.outlier_rate", "%g must be <= 1 (a probability)",
                   p->sim.outlier_rate);
    return GX_OK;
}

int gx_profile_validate(const gx_profile *p, gx_msg *msg)
{
    if (!p)
        return gx_fail(msg, GX_EINVAL, "gx_profile_validate: profile is NULL");
    int rc;
    if ((rc = check_kind(p, msg)) || (rc = check_device(p, msg)) ||
        (rc = check_timer_memory(p, msg)))
        return rc;
    if (!p->l2.present) {
        if (needs_all(p))
            return BAD("l2", "required for a %s profile", p->provenance.kind);
    } else if ((rc = check_geometry(p, msg)) || (rc = check_policy(p, msg)) ||
               (rc = check_topology(p, msg)) || (rc = check_levels(p, msg)) ||
               (rc = check_hashes(p, msg))) {
        return rc;
    }
    if ((rc = check_confidence(p, msg)) || (rc = check_sim(p, msg)))
        return rc;
    return GX_OK;
}
