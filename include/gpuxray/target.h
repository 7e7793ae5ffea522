/* target.h - what discovery may ask of a GPU (Contract 2 of DESIGN.md).
 * Identical in meaning on "sim:PROFILE" (answered by the model, with its
 * noise) and "cuda[:N]" (answered by kernels on a real GPU).
 *
 * Notes:
 * - One arena at a time: gx_target_arena() replaces the previous arena with
 *   fresh memory (new virtual range, new, unknown physical frames). Offsets
 *   are byte offsets into the arena; accesses are 8-byte loads/stores.
 * - All timings are in SM clock cycles, as read by the accessing SM.
 * - A target reveals nothing that cudaGetDeviceProperties would not. */
#ifndef GPUXRAY_TARGET_H
#define GPUXRAY_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"

typedef struct gx_target gx_target;

typedef struct gx_target_info {
    char kind[8];           /* "sim" or "cuda" */
    char spec[512];         /* as opened, e.g. "sim:profiles/x.json", "cuda:0" */
    char name[128];         /* device name */
    uint32_t sm_count;
    uint32_t sm_clock_mhz;
    uint64_t api_l2_bytes;  /* what the API reports: a hint, never trusted */
    uint64_t page_bytes;    /* allocation granularity of the arena */
    uint64_t max_arena_bytes;
    uint64_t smem_block_bytes; /* shared memory one block may use (API, opt-in); 0 unknown */
    uint64_t smem_sm_bytes;    /* shared memory of one SM (API); 0 unknown */
} gx_target_info;

typedef enum gx_op_kind {
    GX_OP_LOAD = 0,
    GX_OP_STORE = 1,
    GX_OP_NONE = 2 /* time an empty interval (timer overhead) */
} gx_op_kind;

typedef struct gx_seq_op {
    uint64_t offset;
    uint8_t kind;  /* gx_op_kind */
    uint8_t timed; /* 1: report this access's cycles */
} gx_seq_op;

typedef struct gx_chase_req {
    const uint64_t *offsets; /* the chain visits offsets[0], [1], ..., [n-1], [0] ... */
    size_t n;
    uint32_t warm_rounds;    /* untimed rounds first */
    uint32_t timed_rounds;   /* timed rounds */
    uint64_t max_timed_steps;/* 0: timed_rounds * n; else stop timing after this many */
    uint32_t sm;
} gx_chase_req;

typedef struct gx_target_stats {
    uint64_t calls;    /* primitive calls */
    uint64_t accesses; /* memory accesses issued */
    uint64_t serial_accesses; /* of those, made one after another by one thread (chase, seq,
                                 probes): on a GPU each costs a full latency, so these set the
                                 wall time; prime accesses run in parallel */
    double seconds;    /* wall time spent inside primitives */
} gx_target_stats;

/* spec: "sim:PATH" or "cuda" / "cuda:N". Errors: GX_ENODEV (message
 * "no usable CUDA device: <reason>"), GX_EPARSE/GX_ECONFIG for a bad profile. */
int gx_target_open(const char *spec, uint64_t seed, gx_target **out, gx_msg *msg);
void gx_target_close(gx_target *t);
const gx_target_info *gx_target_get_info(const gx_target *t);

/* Replace the arena with fresh memory of at least `bytes` (rounded up to pages). */
int gx_target_arena(gx_target *t, uint64_t bytes, gx_msg *msg);
uint64_t gx_target_arena_bytes(const gx_target *t);

/* One thread on SM `sm` walks the offsets as a dependent pointer chain;
 * *mean_cycles = mean cycles per access over the timed steps. */
int gx_target_chase(gx_target *t, const gx_chase_req *req, double *mean_cycles, gx_msg *msg);

/* One thread runs ops in order, each dependent on the last; cycles[] gets one
 * value per op with timed = 1, in order. */
int gx_target_seq(gx_target *t, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
                  gx_msg *msg);

/* Many threads touch prime (order not guaranteed), then one thread on SM
 * `sm` times each probe access in order: cycles[i] for probe[i]. */
int gx_target_prime_probe(gx_target *t, const uint64_t *prime, size_t n_prime,
                          const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                          gx_msg *msg);

/* prime_probe with the prime repeated: many threads touch every prime
 * offset once per round (order within a round not guaranteed; a round
 * completes before the next starts), `rounds` rounds, then one thread on SM
 * `sm` times each probe in order. n_probe may be 0 (prime only: cycles may
 * then be NULL). rounds >= 1. */
int gx_target_prime_probe_rounds(gx_target *t, const uint64_t *prime, size_t n_prime,
                                 uint32_t rounds, const uint64_t *probe, size_t n_probe,
                                 uint32_t sm, double *cycles, gx_msg *msg);

/* ---- shared memory: one warp's timed accesses (bank discovery) ---- */

#define GX_SMEM_PROBE_LANES 32
#define GX_SMEM_PROBE_WINDOW 65536u /* bytes of shared memory the lane offsets may address */
#define GX_SMEM_PROBE_MAX_REPS 65536u

typedef struct gx_smem_probe_req {
    uint32_t lane_offsets[GX_SMEM_PROBE_LANES]; /* byte offset of lane i's access */
    uint32_t active;      /* bit i: lane i accesses (at least one) */
    uint32_t width_bytes; /* 4, 8 or 16 (32-, 64-, 128-bit loads); offsets aligned to it */
    uint32_t reps;        /* timed accesses, 1..GX_SMEM_PROBE_MAX_REPS */
    uint32_t sm;
} gx_smem_probe_req;

/* One warp on SM `sm` (the active lanes) loads from a window of shared
 * memory that holds zeros: each access's address is the lane's offset plus
 * the value its previous access loaded, so the accesses form a dependent
 * chain of warp instructions. min(reps, 32) untimed accesses first, then
 * reps timed between two clock reads: *cycles = cycles / reps (the two
 * clock reads' overhead divided by reps included). */
int gx_target_smem_probe(gx_target *t, const gx_smem_probe_req *req, double *cycles,
                         gx_msg *msg);


/* ---- translation: a chase over pages of a VA window of its own ----
 * The chain does not live in the arena: the target keeps a VA window of
 * steps * stride bytes for it (its place is the target's; it may serve
 * several calls, so TLB state carries over between calls like any state:
 * warm rounds set it) and maps every granule of the window
 * (info.page_bytes, the allocation granularity) onto ONE physical granule
 * of zeroed memory, so a chain may span terabytes of VA over a few lines
 * of data (on CUDA: cuMemAddressReserve + cuMemMap of one handle at many
 * places). Step i loads window + i * stride + the value the previous load
 * returned (zero): a dependent chain, cached in the L2 only. With a stride
 * that is a multiple of the granule every step reads the same physical
 * line, which stays in the L2: a latency step is translation's.
 * warm_rounds untimed rounds, then timed_rounds rounds, every access timed
 * on its own: cycles[r * steps + i] (the timer's overhead included, like
 * seq). With thrash_steps > 0 a second thread on thrash_sm (!= sm) chases
 * a window of its own over a physical granule of its own (so the two
 * threads share no data line, which an L2 of near and far partitions would
 * move between them), thrash_steps pages at thrash_stride_bytes, from
 * before the first access until after the last (an SM x SM interference
 * test); on the sim target the two threads alternate one access each. */
#define GX_XCHASE_MAX_STEPS 32768u
#define GX_XCHASE_MAX_ROUNDS 64u
#define GX_XCHASE_MAX_WINDOW_BYTES (16ULL << 40) /* 16 TiB of VA per chain */
#define GX_XCHASE_MIN_STRIDE 4096u              /* a multiple of 4 KiB, the smallest page */

typedef struct gx_xchase_req {
    uint64_t stride_bytes; /* a multiple of GX_XCHASE_MIN_STRIDE */
    uint32_t steps;        /* 1..GX_XCHASE_MAX_STEPS; steps * stride <= the window limit */
    uint32_t warm_rounds;  /* 0..GX_XCHASE_MAX_ROUNDS */
    uint32_t timed_rounds; /* 1..GX_XCHASE_MAX_ROUNDS */
    uint32_t sm;
    uint32_t thrash_steps; /* 0: no second thread */
    uint32_t thrash_sm;
    uint64_t thrash_stride_bytes;
} gx_xchase_req;

/* cycles: timed_rounds * steps values. GX_EUNSUPPORTED when the target
 * cannot map a window (a driver without virtual memory management). */
int gx_target_xchase(gx_target *t, const gx_xchase_req *req, double *cycles, gx_msg *msg);

/* ---- contention: a slice's queue (the slices' second signal) ----
 * While one thread on SM `sm` times its probes, every other SM runs
 * hammer_warps warps that load the line at hammer_offset back to back
 * through the L2 (several loads in flight each), from before the first probe
 * until after the last. The thread loads each probe once untimed, then reps
 * times timed, one after another: cycles[i] = the least of probe i's timed
 * loads (a clock pair's overhead included, as in seq: a queue delays every load,
 * a timer outlier only one). A probe served by the same
 * L2 slice as the hammered line (as seen from `sm`) waits behind the
 * hammers' requests; any other probe does not. hammer_warps 0 = no
 * hammering: the same probes' baseline. */
#define GX_CONTEND_MAX_REPS 64u
#define GX_CONTEND_MAX_WARPS 8u
typedef struct gx_contend_req {
    uint64_t hammer_offset;
    uint32_t hammer_warps; /* 0..GX_CONTEND_MAX_WARPS */
    const uint64_t *probes;
    size_t n_probes;       /* >= 1 */
    uint32_t reps;         /* 1..GX_CONTEND_MAX_REPS */
    uint32_t sm;
} gx_contend_req;
/* cycles: n_probes values. GX_EUNSUPPORTED when the target has no such probe. */
int gx_target_contend(gx_target *t, const gx_contend_req *req, double *cycles, gx_msg *msg);
/* 1 when the target has the contention probe (gx_target_contend). */
int gx_target_has_contend(const gx_target *t);

void gx_target_get_stats(const gx_target *t, gx_target_stats *s);

#endif
