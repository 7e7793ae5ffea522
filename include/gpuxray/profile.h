/* profile.h - the profile (Contract 1 of DESIGN.md): one JSON format for
 * ground truth (reference / simulated) and for discovery results (measured).
 *
 * Notes:
 * - A profile is a plain config struct, validated once by
 *   gx_profile_validate(), which returns a message naming the field and rule.
 * - "Absent" (or JSON null) is encoded as 0 for counts and sizes, NaN for
 *   latencies, "" for strings, present == 0 for hash functions. A measured
 *   profile may leave any field absent; validation checks what is present
 *   for consistency, and requires everything the model needs for kinds
 *   "reference" and "simulated" (those can be run by the sim target).
 * - The loaded JSON document is kept (doc) so unknown fields survive a
 *   load/save round trip; save writes the known fields over it. */
#ifndef GPUXRAY_PROFILE_H
#define GPUXRAY_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "gpuxray/error.h"

#define GX_PROFILE_VERSION 1
#define GX_MAX_MASKS 32
#define GX_MAX_LEVELS 8
#define GX_MAX_CONFIDENCE 64

/* An index function: output bit i = parity(PA & masks[i]). With a table,
 * result = table[bits] (non-power-of-two slice counts); with modulo > 0,
 * result = bits-value mod modulo (non-linear set indexing). */
typedef struct gx_hash_fn {
    int present;
    int n_masks;
    uint64_t masks[GX_MAX_MASKS];
    uint32_t *table;   /* NULL when absent; else 1 << n_masks entries (owned) */
    uint64_t modulo;   /* 0 when absent */
    int obs_lo, obs_hi; /* observable PA bits [lo, hi] inclusive; -1 absent */
} gx_hash_fn;

typedef struct gx_level {
    uint64_t capacity_bytes;
    double latency_cycles;
} gx_level;

typedef enum gx_topology {
    GX_TOPO_UNKNOWN = 0,
    GX_TOPO_UNIFORM,
    GX_TOPO_NEAR_FAR
} gx_topology;

typedef struct gx_confidence {
    char key[64];
    double value;
} gx_confidence;

typedef struct gx_profile {
    char name[128];
    struct {
        char kind[16];        /* reference | simulated | measured */
        char target[512];
        char tool_version[32];
        char created[40];
        uint64_t seed;
        uint64_t queries, accesses;
        double seconds;
    } provenance;
    struct {
        char name[128];
        uint32_t sm_count;
        uint32_t sm_clock_mhz;
        uint64_t api_l2_bytes;
    } device;
    double timer_overhead_cycles; /* NaN when absent */
    struct {
        uint64_t page_bytes;
        double dram_latency_cycles;
    } memory;
    struct {
        int present;
        uint32_t line_bytes, sector_bytes, ways;
        uint32_t partitions, slices, sets_per_slice;
        uint64_t capacity_bytes;
        char policy[64]; /* a policy spec of the registry, e.g. "plru-rand:0.05" */
        gx_topology topology;
        double hit_cycles, near_hit_cycles, far_hit_cycles; /* NaN = null */
        /* near-far: extra cycles of a far hit when the same SM's previous L2
         * access was a far hit too (back-to-back line swaps, as in a chase
         * over a footprint between the near and the combined capacity).
         * l2.latency_cycles.far_stream_extra in JSON; NaN = null (0). */
        double far_stream_extra_cycles;
        int n_levels;
        gx_level levels[GX_MAX_LEVELS]; /* levels_from_one_sm */
        gx_hash_fn slice_hash, set_hash;
        /* near-far behaviour (l2.near_far in JSON); see model/l2.c.
         * copy_to_near: every line an SM reads is also filled into that SM's
         * near partition. victims_to_far: a line evicted from a near
         * partition is pushed into the far partition. -1 = absent. */
        struct {
            int copy_to_near;
            int victims_to_far;
        } near_far;
    } l2;
    int n_confidence;
    gx_confidence confidence[GX_MAX_CONFIDENCE];
    struct {
        int present;
        double jitter_cycles, outlier_rate, outlier_cycles;
        double background_evictions_per_kaccess;
        double sm_slice_skew_cycles;
        uint64_t frames_seed;
    } sim;
    void *doc; /* json_t * of the loaded document (unknown fields); may be NULL */
} gx_profile;

/* A new profile with every field absent. NULL on out of memory. */
gx_profile *gx_profile_new(void);
gx_profile *gx_profile_clone(const gx_profile *p);
void gx_profile_free(gx_profile *p);

/* Load a file / parse text. Syntax errors name the source, line and column;
 * structural errors name the field. The result is validated. */
int gx_profile_load(const char *path, gx_profile **out, gx_msg *msg);
int gx_profile_parse(const char *text, const char *source_name, gx_profile **out,
                     gx_msg *msg);
/* Returns GX_OK or GX_ECONFIG with msg naming the field and the rule, e.g.
 * "l2.capacity_bytes: 6291456 != slices*sets_per_slice*ways*line_bytes = 6291450". */
int gx_profile_validate(const gx_profile *p, gx_msg *msg);
/* Serialise (known fields over the kept document). Caller frees. */
char *gx_profile_to_json(const gx_profile *p);
/* Write atomically (temporary file + rename): nothing half-written. */
int gx_profile_save(const gx_profile *p, const char *path, gx_msg *msg);

/* Set (or replace) a confidence entry, e.g. ("l2.ways", 0.999). */
int gx_profile_set_confidence(gx_profile *p, const char *key, double value);
/* NaN when absent. */
double gx_profile_confidence(const gx_profile *p, const char *key);

/* Hash function helpers (copy owns a fresh table). */
int gx_hash_copy(gx_hash_fn *dst, const gx_hash_fn *src);
void gx_hash_clear(gx_hash_fn *h);
const char *gx_topology_name(gx_topology t);

#endif
