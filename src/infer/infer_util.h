/* infer_util.h - measurement helpers shared by every discovery stage:
 * random pointer chains, retried primitives, reload / miss latencies, the
 * hit-or-miss decision with an "unsure" band, and arena management (one
 * arena, allocated once and reused, plus a reserve of never-touched lines).
 *
 * Notes:
 * - Only target.h primitives are used; nothing here knows the simulator.
 * - Primitives that answer GX_EUNSURE are retried (INFER_RETRIES times).
 * - The arena is [0, work_bytes) for stages to use freely, followed by a
 *   "fresh" reserve that nobody touches except through infer_fresh_block():
 *   each block handed out is guaranteed never to have been accessed, so its
 *   lines are absent from the cache (a cold miss) without any flushing.
 *   Blocks are INFER_FRESH_BLOCK_BYTES (2x the largest line, 256 B) apart
 *   and aligned to that size. The first block of each fresh page is spent
 *   touching the page (TLB warm-up on real GPUs), so cold misses are pure
 *   cache misses.
 * - Replacing the arena (infer_arena_ensure with a larger size) invalidates
 *   every offset held by earlier stages: ctx->arena.generation increments.
 *   The levels stage allocates the largest arena the pipeline needs first,
 *   so later stages normally reuse it. */
#ifndef GPUXRAY_INFER_UTIL_H
#define GPUXRAY_INFER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/rng.h"
#include "gpuxray/target.h"
#include "infer.h"

#define INFER_RETRIES 8            /* retries of a primitive answering GX_EUNSURE */
#define INFER_FRESH_BLOCK_BYTES 512u /* spacing of fresh blocks (>= 2x the largest line) */
#define INFER_FRESH_RESERVE_BYTES (8ull << 20) /* never-touched reserve after the work area */
#define INFER_MIN_LINE_BYTES 32u
#define INFER_MAX_LINE_BYTES 256u

/* ---- pointer chains ---------------------------------------------------- */

/* Random cyclic order of n given offsets: out[] receives a random
 * permutation of offs[] (in and out may alias). Walking out[0], out[1], ...,
 * out[n-1], out[0] visits every offset exactly once per round, in an order
 * no prefetcher can follow. */
void infer_chain_shuffle(gx_rng *r, const uint64_t *offs, size_t n, uint64_t *out);
/* out[] = base + i * stride_bytes for i < n, in a random cyclic order. */
void infer_chain_strided(gx_rng *r, uint64_t base, uint64_t stride_bytes, size_t n,
                         uint64_t *out);
/* Jittered stride: for each block i of block_bytes (base + i*block_bytes),
 * one offset at a random multiple of align_bytes inside the block; random
 * order. Touches one line per block while spreading over all sets. */
void infer_chain_jittered(gx_rng *r, uint64_t base, uint64_t block_bytes, uint64_t align_bytes,
                          size_t n, uint64_t *out);
/* 1 when out[0..n) holds each of offs[0..n) exactly once (a single cycle). */
int infer_chain_is_cycle(const uint64_t *offs, const uint64_t *chain, size_t n);

/* ---- retried primitives -------------------------------------------------- */

/* gx_target_seq, retried while it answers GX_EUNSURE. */
int infer_seq_timed(gx_infer *ctx, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles);
/* gx_target_chase, retried while GX_EUNSURE. max_timed_steps 0 = all. */
int infer_chase(gx_infer *ctx, const uint64_t *chain, size_t n, uint32_t warm_rounds,
                uint32_t timed_rounds, uint64_t max_timed_steps, uint32_t sm, double *mean_cycles);
/* gx_target_prime_probe_rounds, retried while GX_EUNSURE. */
int infer_prime_probe(gx_infer *ctx, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                      const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles);

/* ---- latencies ----------------------------------------------------------- */

/* Median over reps of [load off untimed, load off timed]: the latency of a
 * line that is certainly present (an L2 hit as seq measures it). */
int infer_reload_latency(gx_infer *ctx, uint64_t off, uint32_t sm, int reps, double *median);
/* Median over reps cold misses: each rep loads the first line of a fresh
 * (never touched) block. The DRAM latency as seq measures it. */
int infer_miss_latency(gx_infer *ctx, uint32_t sm, int reps, double *median);

/* Probe pairs, skew-free: for each offset, [load timed, reload timed,
 * reload timed] in one seq. first[i] = the first access's cycles (whatever
 * level serves it); delta[i] = first - mean of the two reloads (which hit
 * the first level at the same slice), so the (SM, slice) skew cancels and
 * delta is ~0 for a first-level hit, ctx->levels.miss_delta for the next level,
 * ctx->levels.dram_delta for DRAM. first or delta may be NULL. 3 accesses each. */
int infer_probe_pairs(gx_infer *ctx, const uint64_t *offs, size_t n, uint32_t sm, double *first,
                      double *delta);
/* Pick k distinct random entries of v[0..n) into out (k <= n). */
void infer_pick_distinct(gx_rng *r, const uint64_t *v, size_t n, size_t k, uint64_t *out);

/* ---- decisions ----------------------------------------------------------- */

/* Half-width of the unsure band around a threshold separating lo and hi
 * latencies: 3 timer-noise sigmas + 1 cycle, at most a quarter of the gap. */
double infer_unsure_band(const gx_infer *ctx, double lo, double hi);
/* Classify cycles between two latencies: 1 = near lo, 0 = near hi, -1 =
 * inside the unsure band around their midpoint. */
int infer_classify(const gx_infer *ctx, double cycles, double lo, double hi);
/* 1 hit / 0 miss / -1 unsure against ctx->levels.hit_miss_threshold (which lies
 * between ctx->levels.hit_latency and ctx->levels.miss_latency). */
int infer_is_hit(const gx_infer *ctx, double cycles);
/* Majority of n classifications (1/0/-1 values): 1 or 0 when at least
 * need of the decided votes agree and they outnumber the unsure ones; else -1. */
int infer_vote(const int *votes, int n, int need);
/* A probe pair's delta: 1 = first-level hit (delta near 0), 0 = miss (near
 * ctx->levels.miss_delta or beyond), -1 unsure (inside the band around the midpoint). */
int infer_delta_is_hit(const gx_infer *ctx, double delta);

/* ---- arena ---------------------------------------------------------------- */

/* Make sure the arena has at least work_bytes of work area (plus the fresh
 * reserve). Allocates only when the current one is too small (then
 * ctx->arena.generation increments and the fresh reserve is reset). */
int infer_arena_ensure(gx_infer *ctx, uint64_t work_bytes);
/* The pipeline's arena: a work area of INFER_LEVELS_HINT_FACTOR x the API's
 * L2 size (at least 64 MiB, at most what the target allows), big enough for
 * every stage, so it is allocated once (by the first stage that runs). */
#define INFER_LEVELS_HINT_FACTOR 24u
uint64_t infer_default_work_bytes(const gx_infer *ctx);
int infer_arena_default(gx_infer *ctx);
/* Offset of a never-touched, INFER_FRESH_BLOCK_BYTES-aligned block in the
 * fresh reserve (its page already touched once elsewhere). GX_ERANGE when the
 * reserve is exhausted. */
int infer_fresh_block(gx_infer *ctx, uint32_t sm, uint64_t *off);

/* ---- the slices stage's predictor, for the later stages (slice_use.c) ---------- */

/* Random lines of a page a labelled identification labels: taken in order
 * until one (component, XOR constant) explains them and a chance match is
 * below 1e-9 (slicepredict.h), the rest held-out checks. A wrong candidate
 * survives a line with about the share of its class (1/C, C slices a
 * partition: an H200's 47, 11 masks, the 9 components the slices stage saw:
 * 8 lines make 18432 candidates x 47^-8 = 7e-10), so 24 lines leave 12 or
 * more to check the identification. */
#define INFER_LABEL_LINES 24u
struct gx_slicepred;
struct gx_slicepred_page;
/* The slice predictor of the later stages: the slices stage's
 * contention-labelled one (its classes are slices) while the arena it was
 * learnt on is current, else the fingerprint one; NULL: none.
 * ctx->slices.hash is the hash of this predictor. */
struct gx_slicepred *infer_slice_pred(const gx_infer *ctx);
/* Identify the n pages at bases[] with sp: a labelled predictor in one
 * labeller call (INFER_LABEL_LINES lines a page), a fingerprint one page by
 * page within 1% of a page's lines (at least 16). A page not identified:
 * component -1. Errors other than "unsure" are returned (message in ctx). */
int infer_identify_pages(gx_infer *ctx, struct gx_slicepred *sp, const uint64_t *bases,
                         size_t n, struct gx_slicepred_page *pgs);
/* Pages identified as they are asked for: where the predictor is labelled,
 * the page asked and the INFER_LABEL_BATCH - 1 after it in one labeller call
 * (bases[] in the order they will be asked for); where it measures, the page
 * asked alone. */
#define INFER_LABEL_BATCH 16u
typedef struct infer_page_ids {
    struct gx_slicepred *sp;
    const uint64_t *bases;          /* not owned */
    size_t n;
    struct gx_slicepred_page *pgs;  /* owned: page i's identification when have[i] */
    uint8_t *have;                  /* owned */
} infer_page_ids;
int infer_page_ids_init(gx_infer *ctx, infer_page_ids *c, struct gx_slicepred *sp,
                        const uint64_t *bases, size_t n);
void infer_page_ids_free(infer_page_ids *c);
/* Page i's identification (*pg: component -1 when not identified). */
int infer_page_id(gx_infer *ctx, infer_page_ids *c, size_t i,
                  const struct gx_slicepred_page **pg);

/* ---- line size (stage_line.c) -------------------------------------------------- */

/* The allocation granularity, on the levels stage's blocks: blocks[i] is a
 * 32 B slot s inside a 256 B block (random order; the first ones are those
 * the cache holds). Chains over the first B = 1.25 x c1_lines blocks with
 * two slots per block, s and s ^ d, back to back: while d < line they share
 * a line (B lines), from d = line on they are two lines (2B lines) and the
 * first level's resident fraction of the s ^ d slots halves (or drops to
 * nothing under a policy that never evicts old lines). Compared with a
 * one-slot reference chain. No halving up to d = 128 means 256 B lines.
 * Needs the levels' deltas (ctx->levels.miss_delta, pair_noise, set by the
 * levels stage before it calls this). GX_EUNSURE when undecided. */
int infer_measure_line(gx_infer *ctx, const uint64_t *blocks, size_t nblocks, double c1_lines,
                       uint32_t *line, double *conf, char *how, size_t how_len);

/* ---- misc ------------------------------------------------------------------ */

/* Typical seq latency (timer overhead and SM 0's mean skew included) of
 * L2 level i as found by the levels stage; NaN when unknown. */
double infer_level_seq_latency(const gx_infer *ctx, int i);
/* The line stage's line (gx_line_result), or INFER_DEFAULT_LINE_BYTES when
 * it did not run or could not decide: the commonest L2 line (every NVIDIA
 * GPU since Fermi), a stride that stays on distinct lines for any line up
 * to it. */
#define INFER_DEFAULT_LINE_BYTES 128u
uint32_t infer_line_bytes(const gx_infer *ctx);
/* Capacity of the first (smallest) level, bytes; 0 when unknown. */
uint64_t infer_first_capacity(const gx_infer *ctx);
/* Format a byte count as "6 MiB", "384 KiB", "1536 B" into buf. */
const char *infer_fmt_bytes(uint64_t bytes, char *buf, size_t len);

#endif
