/* advise.h - layout advice from a profile's model: how an array access
 * pattern (or a trace) spreads over the L2's slices, partitions and sets,
 * how much of each moved sector is used, and the row padding that spreads
 * the load best; and the hit ratio of a persisting-L2 access window.
 *
 * Method: every warp instruction's lanes are coalesced into sectors; each
 * sector's line goes through the profile's slice and set hashes (after the
 * model's page placement, or, for a measured profile whose hash sees only
 * bits below the page, with every page assumed to spread like the measured
 * one: the result names this assumption). Warp instructions issue in waves
 * of one per SM; a wave's slice load is compared with the spread the hash
 * gives uniform addresses (busiest slice over its expected share of the
 * wave's sectors): 1.0 = perfectly spread.
 *
 * Notes: library code: no printing; results in plain structs. */
#ifndef GPUXRAY_ADVISE_H
#define GPUXRAY_ADVISE_H

#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef enum gx_adv_pattern {
    GX_ADV_ROW = 0, /* a warp reads 32 consecutive elements of a row */
    GX_ADV_COL,     /* a warp reads one column over 32 consecutive rows */
    GX_ADV_TILE     /* tiles of tile_h x tile_w, row-major; a warp reads 32 consecutive
                       elements of the tile (row by row) */
} gx_adv_pattern;

typedef struct gx_adv_cfg {
    uint64_t rows, cols;  /* elements */
    uint32_t elem_bytes;
    uint64_t pitch;       /* elements per row in memory, >= cols (0: cols) */
    uint64_t base;        /* byte address of element (0, 0); 0 is page aligned */
    gx_adv_pattern pattern;
    uint32_t tile_h, tile_w;
    uint32_t sms;         /* warp instructions per wave (0: the profile's sm_count) */
    uint64_t max_lanes;   /* evaluate at most this many lane accesses (0: all) */
} gx_adv_cfg;

typedef struct gx_adv_result {
    uint64_t warp_insts, lanes, sectors;
    double useful_bytes, moved_bytes, sector_efficiency; /* useful / moved */
    uint32_t slices, partitions, sms;
    double slice_max_mean;      /* whole run: busiest slice / its expected share */
    double partition_max_mean;
    double wave_slice_imbalance;     /* mean over waves of busiest / expected */
    double wave_partition_imbalance;
    double worst_wave_slice_imbalance;
    double random_wave_slice_imbalance; /* the same for uniform random addresses (baseline) */
    int have_sets;
    uint64_t lines, set_count, sets_over_ways;
    uint32_t set_lines_max;     /* distinct lines in the fullest (slice, set) */
    double set_lines_mean;
    uint32_t ways;
    int complete;               /* 0: stopped at max_lanes (a prefix was evaluated) */
    char assumption[256];       /* how physical addresses were modelled */
} gx_adv_result;

/* Parse "rows=R,cols=C,elem=B[,pitch=P]" and "row" | "col" | "tile:HxW". */
int gx_adv_parse_array(const char *s, gx_adv_cfg *c, gx_msg *msg);
int gx_adv_parse_pattern(const char *s, gx_adv_cfg *c, gx_msg *msg);

int gx_advise_array(const gx_profile *p, const gx_adv_cfg *c, gx_adv_result *r, gx_msg *msg);

/* Try pitches pitch .. pitch + max_pad elements on a prefix of the pattern
 * (search_lanes lane accesses) and return the padding (elements) with the
 * best wave slice balance (then fewest sets over their ways, then the
 * smallest pad); before / after are evaluated on c->max_lanes. */
int gx_advise_padding(const gx_profile *p, const gx_adv_cfg *c, uint32_t max_pad,
                      uint64_t search_lanes, uint32_t *best_pad, gx_adv_result *before,
                      gx_adv_result *after, gx_msg *msg);

/* The same metrics over a trace file (any format the trace reader reads);
 * consecutive records of one SM with one non-zero warp id are one warp
 * instruction. */
int gx_advise_trace(const gx_profile *p, const char *path, uint32_t sms, uint64_t max_lanes,
                    gx_adv_result *r, gx_msg *msg);

/* cudaAccessPolicyWindow for `bytes` of persisting data: hitRatio =
 * min(1, carve-out / bytes) from the profile's measured persisting
 * carve-out (l2.persisting_carveout_bytes); known = 0 when the profile has
 * none. */
typedef struct gx_persist {
    int known;
    uint64_t carveout_bytes, window_bytes;
    double hit_ratio;
} gx_persist;
int gx_advise_persist(const gx_profile *p, uint64_t bytes, gx_persist *r, gx_msg *msg);

#endif
