/* smem.h - shared memory banks: the profile's `smem` section (gx_smem_cfg)
 * and the per-SM model that turns a warp instruction's lane addresses into
 * a conflict degree, transfers (wavefronts) and cycles.
 *
 * The model (one rule for every GPU it describes):
 * - Shared memory is `banks` banks of `bank_bytes`-byte words; word w =
 *   addr / bank_bytes lives in bank w mod banks.
 * - A lane's access of `width` bytes (1..16) touches the words
 *   [addr / bank_bytes, (addr + width - 1) / bank_bytes].
 * - The warp's lanes are served in groups of consecutive lanes, each group
 *   asking for at most transfer_bytes: lanes_per_group =
 *   clamp(transfer_bytes / width, 1, 32). 512 = the whole warp together at
 *   every width (measured on an H200: a 64-bit access of 32 lanes on one
 *   word is one transfer, so no half-warp split; contiguous 64- and 128-bit
 *   accesses take 2 and 4 transfers from the banks' width alone); smaller
 *   values split wide accesses into half or quarter warps.
 * - Within a group a bank serves one word per transfer. With broadcast, the
 *   lanes reading one word share it (a word counts once); without, every
 *   (lane, word) counts. A group's degree = the most words one bank must
 *   serve; transfers = the sum of the groups' degrees.
 * - cycles = latency_cycles + (transfers - 1) * conflict_cycles: the cost
 *   of one warp access in a dependent chain, as discovery measures it
 *   (latency_cycles includes the chain's address arithmetic).
 *
 * Notes: the model keeps no data, only statistics per SM (an SM's shared
 * memory never changes an access's cost). Absent fields: 0 for counts,
 * NaN for cycles, -1 for broadcast (Contract 1). */
#ifndef GPUXRAY_SMEM_H
#define GPUXRAY_SMEM_H

#include <stdint.h>
#include <stdio.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

#define GX_SMEM_LANES 32
#define GX_SMEM_MAX_WIDTH 16  /* bytes: the widest (128-bit) access of a lane */
#define GX_SMEM_MAX_BANKS 256
#define GX_SMEM_MAX_BANK_BYTES 16
#define GX_SMEM_MAX_TRANSFER (GX_SMEM_LANES * GX_SMEM_MAX_WIDTH) /* 512: the whole warp */

/* gx_smem_cfg (the section) is defined in profile.h, as gx_profile.smem. */

/* ---- the profile section (gx_profile.smem; rows of the field table) ---- */

/* cfg = p's smem section (present = 0 when absent), checked by
 * gx_smem_cfg_validate(cfg, 0). */
int gx_smem_cfg_from_profile(const gx_profile *p, gx_smem_cfg *cfg, gx_msg *msg);
/* p's smem section = cfg (present = 0 removes it). */
int gx_smem_cfg_to_profile(gx_profile *p, const gx_smem_cfg *cfg, gx_msg *msg);
/* Rules: ranges and powers of two above; complete (every model field) when
 * require_model. Messages name the field and the rule. */
int gx_smem_cfg_validate(const gx_smem_cfg *cfg, int require_model, gx_msg *msg);
void gx_smem_cfg_clear(gx_smem_cfg *cfg);
/* The shared memory a simulated GPU has when its profile has no smem
 * section (every GPU has one): 32 banks of 4 B, the whole warp in one
 * group (512-byte transfers), broadcast, 30 + 2 cycles per extra
 * transfer, 48 KiB per block, 64 KiB per SM (an sm_70-era card). */
void gx_smem_cfg_default(gx_smem_cfg *cfg);

/* Field-by-field comparison of a found section with the truth: counts and
 * broadcast exactly, cycles within GX_SMEM_CYCLES_REL_TOL (or
 * GX_SMEM_CYCLES_ABS_TOL cycles, whichever is larger). */
#define GX_SMEM_CYCLES_REL_TOL 0.05
#define GX_SMEM_CYCLES_ABS_TOL 0.5
#define GX_SMEM_FIELDS 8
typedef struct gx_smem_field_cmp {
    const char *field;        /* "smem.banks", ... */
    char truth[48], found[48];
    int verdict;              /* 0 match, 1 mismatch, 2 missing in found; -1 absent in truth */
} gx_smem_field_cmp;
int gx_smem_cfg_compare(const gx_smem_cfg *truth, const gx_smem_cfg *found,
                        gx_smem_field_cmp out[GX_SMEM_FIELDS]);

/* ---- cost of one warp instruction (pure) ---- */

typedef struct gx_smem_cost {
    uint32_t lanes;      /* active lanes */
    uint32_t groups;     /* lane groups with an active lane */
    uint32_t degree;     /* the largest group degree (1 = conflict-free) */
    uint32_t transfers;  /* sum of the group degrees (0 with no active lane) */
    double cycles;       /* latency + (transfers - 1) * conflict; 0 with no active lane */
} gx_smem_cost;

/* addr[i]: byte offset of lane i in the block's shared memory (read only
 * where bit i of active is set); width 1..16 bytes. The cfg must hold the
 * geometry (banks, bank_bytes, transfer_bytes, broadcast); cycles are NaN
 * when a cycle field is absent. */
int gx_smem_warp_cost(const gx_smem_cfg *cfg, const uint32_t addr[GX_SMEM_LANES],
                      uint32_t active, uint32_t width, gx_smem_cost *out, gx_msg *msg);

/* ---- the per-SM model with statistics ---- */

typedef struct gx_smem gx_smem;

typedef struct gx_smem_stats {
    uint64_t accesses;        /* warp instructions */
    uint64_t reads, writes;
    uint64_t lanes;           /* active lanes over all accesses */
    uint64_t transfers;
    uint64_t conflicted;      /* accesses of degree >= 2 */
    uint64_t by_degree[GX_SMEM_LANES * 4 + 1]; /* accesses per degree; the last slot: beyond */
    double cycles;            /* sum of the accesses' cycles */
} gx_smem_stats;

int gx_smem_new(const gx_smem_cfg *cfg, uint32_t sm_count, gx_smem **out, gx_msg *msg);
void gx_smem_free(gx_smem *s);
/* One warp instruction on SM sm (is_write: a store; the cost rule is the
 * same). out may be NULL. */
int gx_smem_access(gx_smem *s, uint32_t sm, int is_write, const uint32_t addr[GX_SMEM_LANES],
                   uint32_t active, uint32_t width, gx_smem_cost *out, gx_msg *msg);
/* Statistics of one SM, or of all SMs (sm == UINT32_MAX). */
void gx_smem_get_stats(const gx_smem *s, uint32_t sm, gx_smem_stats *out);
const gx_smem_cfg *gx_smem_get_cfg(const gx_smem *s);
/* A model from a profile's section (the default shared memory when the
 * profile has none), for sm_count = device.sm_count. */
int gx_smem_new_from_profile(const gx_profile *p, gx_smem **out, gx_msg *msg);

/* ---- trace records (smem_trace.c) ---- */

/* One lane's shared-memory record (gx_trace_rec: SR / SW): grouped with the
 * SM's open warp instruction when warp != 0 and it continues it (same warp
 * id and op), else the open one is costed and a new one opens; warp 0 is
 * an instruction alone. size 1..; above 16 bytes counted as oversize and
 * modelled as 16. */
int gx_smem_record(gx_smem *s, uint32_t sm, uint32_t warp, uint32_t lane, int is_write,
                   uint64_t addr, uint32_t size, gx_msg *msg);
/* Cost every SM's open instruction (the end of a trace). */
void gx_smem_flush(gx_smem *s);
uint64_t gx_smem_oversize(const gx_smem *s);
/* The statistics of all SMs: a text block / one JSON object (no newline). */
int gx_smem_write_text(const gx_smem *s, FILE *f);
int gx_smem_write_json(const gx_smem *s, FILE *f);

/* ---- advice for a shared-memory tile (smem_tile.c) ---- */

#define GX_SMEM_READ_ROW 1u /* lanes read consecutive elements of a row */
#define GX_SMEM_READ_COL 2u /* transposed: lanes read consecutive elements of a column */

typedef struct gx_smem_tile {
    uint32_t rows, cols;   /* H x W elements, row-major */
    uint32_t elem_bytes;   /* 1..16 (one lane's load) */
    uint32_t reads;        /* GX_SMEM_READ_* */
    int pad;               /* elements after each row as given (-1: none given: 0) */
} gx_smem_tile;

typedef struct gx_smem_tile_read {
    uint64_t warp_accesses, transfers;
    uint32_t max_degree;
    double cycles;         /* the whole tile read in this order */
} gx_smem_tile_read;

typedef struct gx_smem_tile_advice {
    gx_smem_tile tile;
    uint32_t pad_given, best_pad;
    gx_smem_tile_read before[2], after[2]; /* [0] row read, [1] transposed; zero when not asked */
    double before_cycles, after_cycles, saved_cycles;
    uint64_t extra_bytes;  /* shared memory the padding adds */
    uint32_t contiguous_transfers; /* 32 lanes on consecutive elements: the width's least */
} gx_smem_tile_advice;

/* "HxW,elem=B[,read=row|col|transposed|both][,pad=N]"; messages name the part. */
int gx_smem_tile_parse(const char *spec, gx_smem_tile *t, gx_msg *msg);
/* The reads at the given pad and at the best pad (the smallest with the
 * fewest cycles over the asked reads). */
int gx_smem_tile_advise(const gx_smem_cfg *cfg, const gx_smem_tile *t, gx_smem_tile_advice *a,
                        gx_msg *msg);
int gx_smem_tile_write_text(const gx_smem_cfg *cfg, const gx_smem_tile_advice *a, FILE *f);
int gx_smem_tile_write_json(const gx_smem_tile_advice *a, FILE *f);

#endif
