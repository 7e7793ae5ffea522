/* profile.h - the profile (docs/profile-format.md): one JSON format for
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
/* Masks of one index function the model can evaluate: its hash tables
 * have 2^masks entries (tables of a slice hash, sets of a set hash). */
#define GX_HASH_MAX_MASKS 24
/* Latencies and cycle counts of a profile are at most this: 10^7 cycles
 * (about 5 ms at 2 GHz) is far above any memory latency, and keeps sums
 * over 2^32 accesses exact in a double (< 2^53 * 2^-4). */
#define GX_PROFILE_MAX_CYCLES 1e7
/* memory.page_bytes: at most the model's simulated physical memory (the
 * sim target and the trace simulator place pages in 64 GiB of frames). */
#define GX_PROFILE_MAX_PAGE_BYTES (64ULL << 30)

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

/* ---- address translation (the "tlb" section; JSON "tlb": null = none) ----
 * Shapes fixed for the memory-system model: a page table (vmem), TLB levels,
 * a page-table walker with two page-walk caches, and a request coalescer.
 * Absent numbers are 0, absent latencies NaN, absent strings "". */
#define GX_MAX_TLB_LEVELS 4
#define GX_MAX_PAGE_SIZES 5  /* 4 KiB, 64 KiB, 2 MiB, 1 GiB, 512 GiB */
#define GX_MAX_PT_LEVELS 6
#define GX_MAX_VA_REGIONS 16
#define GX_TLB_MIN_PAGE_BYTES 4096ULL         /* 4 KiB, the smallest GPU page */
#define GX_TLB_MAX_PAGE_BYTES (512ULL << 30)  /* 512 GiB, the largest page size */
#define GX_TLB_DEFAULT_PTE_BYTES 8u           /* one 64-bit PTE (Vega, Hopper) */
#define GX_TLB_DEFAULT_PREDICTOR_BITS 4u      /* gem5's saturating counters */
#define GX_TLB_DEFAULT_PREDICT_SMALL 4096u    /* 4 KiB */
#define GX_TLB_DEFAULT_PREDICT_LARGE (2u << 20) /* 2 MiB */
#define GX_TLB_DEFAULT_LINE_GROUP_PAGES 16u   /* gem5: 16 PTEs of one 128-byte fetch */

/* Which SMs share one TLB instance. JSON "sm" | "tpc" | "gpc" | "gpu". */
typedef enum gx_sharing {
    GX_SHARE_UNKNOWN = 0,
    GX_SHARE_SM,
    GX_SHARE_TPC,
    GX_SHARE_GPC,
    GX_SHARE_GPU
} gx_sharing;

#define GX_MAX_TLB_SET_MASKS 24 /* sets of one instance up to 2^24 (entries <= 2^24) */

/* How a TLB level picks a set from e = VA / entry_bytes. JSON absent (=
 * modulo), "modulo": e mod sets, or "xor": the XOR of e's successive
 * log2(sets)-bit chunks (sets a power of two), which spreads every
 * power-of-two stride of entries evenly over the sets; with set_masks, set
 * bit i is the parity of e & set_masks[i] instead (any XOR hash). */
typedef enum gx_tlb_index {
    GX_TLB_INDEX_DEFAULT = 0, /* absent: modulo */
    GX_TLB_INDEX_MODULO,
    GX_TLB_INDEX_XOR
} gx_tlb_index;

typedef struct gx_small_cache_cfg { /* a page-walk cache (JSON: an object, or null = none) */
    int present;
    uint32_t entries, ways;         /* ways == entries: fully associative */
    char policy[64];                /* a policy spec of the registry (policy.h), e.g. "lru" */
    double hit_latency_cycles;
} gx_small_cache_cfg;

typedef struct gx_tlb_level_cfg {   /* tlb.levels[i], i = 0 nearest the SM */
    char name[16];                  /* "L1", "L2", ... (free text) */
    uint32_t entries, ways;
    uint64_t entry_bytes;           /* VA range one entry covers: a page size, or a coalesced
                                       reach (e.g. 1 MiB = 16 x 64 KiB with per-page valid
                                       bits, 32 MiB) */
    gx_sharing sharing;
    gx_tlb_index set_index;         /* set index function (default modulo) */
    int n_set_masks;                /* xor index: 0 = the fold, else log2(sets) masks */
    uint64_t set_masks[GX_MAX_TLB_SET_MASKS]; /* set bit i = parity(e & set_masks[i]) */
    double hit_latency_cycles;      /* latency of a hit at this level (model input) */
    double miss_cycles;             /* measured: extra latency of missing this level and
                                       hitting the next one (or walking, after the last);
                                       NaN = absent */
    char policy[64];
    uint32_t outstanding_misses;    /* 0 = unlimited */
} gx_tlb_level_cfg;

typedef struct gx_va_region {
    uint64_t va_base, bytes, page_bytes;
} gx_va_region;

typedef struct gx_tlb_cfg {
    int present;                    /* 0: "tlb" absent or null = no translation modelled */
    uint32_t sms_per_tpc, sms_per_gpc; /* sharing domains (0 = unknown) */
    int hit_fills_entry;            /* 1: a hit at a deeper level fills the nearer ones with
                                       every valid page of its entry; 0 / -1 (absent): with
                                       the page looked up only */
    /* page table (tlb.page_table) */
    int n_page_sizes;
    uint64_t page_sizes[GX_MAX_PAGE_SIZES]; /* installable sizes, ascending */
    uint64_t default_page_bytes;    /* page size of VA outside every region */
    int n_regions;
    gx_va_region regions[GX_MAX_VA_REGIONS]; /* VA ranges mapped at a page size */
    int n_level_bits;
    uint32_t level_bits[GX_MAX_PT_LEVELS]; /* VA bits per walk level, root first, over the
                                       smallest page (Vega-like 9,9,9,9 over 4 KiB) */
    uint32_t pte_bytes;             /* default 8 */
    /* TLB levels (tlb.levels[]) */
    int n_levels;
    gx_tlb_level_cfg levels[GX_MAX_TLB_LEVELS];
    /* walker (tlb.walker) */
    struct {
        uint32_t fetch_bytes;       /* aligned page-table read: pow2 multiple of pte_bytes,
                                       <= l2 line */
        uint32_t walkers;           /* concurrent walks */
        uint32_t queue_entries;     /* 0 = unbounded queue */
        double fixed_read_cycles;   /* NaN: page-table reads go through L2/DRAM; else each
                                       costs this */
        gx_small_cache_cfg pwc;     /* non-final entries only */
        gx_small_cache_cfg neighbour_pwc; /* valid final PTEs of one fetch */
    } walker;
    /* coalescer (tlb.coalescer) */
    struct {
        double window_cycles;       /* issue-cycle window */
        uint64_t max_granule_bytes; /* larger page sizes are clamped to this for grouping */
        uint32_t size_predictor_bits;   /* saturating counter bits, default 4 */
        uint64_t predict_small_bytes, predict_large_bytes; /* default 4 KiB and 2 MiB */
        uint32_t neighbour_predictor_bits; /* default 4 */
        uint32_t line_group_pages;  /* pages a neighbour-coalesced group spans (default 16) */
    } coalescer;
} gx_tlb_cfg;

/* The shared memory's banks: the "smem" section (docs/smem.md has the model
 * and docs/profile-format.md the fields). Absent: 0, NaN, broadcast -1. */
typedef struct gx_smem_cfg {
    int present;              /* 0: no (or a null) smem section */
    uint32_t banks;           /* power of two, 1..256 */
    uint32_t bank_bytes;      /* 4, 8 or 16 */
    uint32_t transfer_bytes;  /* lanes served in groups of transfer_bytes / width; 16..512 */
    int broadcast;            /* 1 / 0; -1 absent */
    double latency_cycles;    /* conflict-free warp access, dependent chain */
    double conflict_cycles;   /* each transfer after the first */
    uint64_t block_bytes;     /* shared memory one block may use (API, opt-in) */
    uint64_t sm_bytes;        /* shared memory of one SM (API) */
} gx_smem_cfg;

typedef struct gx_profile {
    char name[128];
    struct {
        char kind[16];        /* reference | simulated | measured */
        char target[512];
        char tool_version[32];
        char created[40];
        uint64_t seed;
        int seed_given;       /* seed recorded (seed 0 included); set with seed */
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
        /* the persisting-L2 carve-out measured (l2.persisting_carveout_bytes):
         * the most bytes a cudaAccessPolicyWindow keeps resident; 0 = absent */
        uint64_t persisting_carveout_bytes;
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
        int contiguous_frames; /* 1: consecutive frames a region (placement.h); 0, -1: random */
    } sim;
    gx_tlb_cfg tlb; /* present == 0: no translation (the default) */
    gx_smem_cfg smem;   /* shared memory banks (smem.h: the model) */
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
/* The rules the model applies, for a profile of any kind: validation plus
 * every field the model needs (as for kinds reference and simulated). The
 * model (l2, trace simulator, sim target) calls this and trusts a profile
 * that passes: `gpuxray validate` and the model refuse the same profiles. */
int gx_profile_check_model(const gx_profile *p, gx_msg *msg);
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

/* The documented defaults of a tlb section, present left 0: pte_bytes 8,
 * predictor bits 4, predicted sizes 4 KiB / 2 MiB, line groups of 16 pages,
 * NaN latencies, no levels, regions or page-walk caches. */
void gx_tlb_cfg_init(gx_tlb_cfg *t);
/* Defaults of one TLB level (NaN latencies, everything else absent). */
void gx_tlb_level_init(gx_tlb_level_cfg *l);
/* Defaults of one page-walk cache (absent, NaN latency). */
void gx_small_cache_init(gx_small_cache_cfg *c);
/* "sm" | "tpc" | "gpc" | "gpu" | "unknown"; parse returns GX_EINVAL on
 * anything else. */
const char *gx_sharing_name(gx_sharing s);
int gx_sharing_parse(const char *name, gx_sharing *out);

#endif
