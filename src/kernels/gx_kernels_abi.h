/* gx_kernels_abi.h - what the CUDA kernels (gx_probe.cu) and their C host
 * (src/target/cuda/) agree on: result-slot indices, status codes and the
 * packed form of a seq op. Included by both nvcc (C++) and gcc (C11).
 *
 * Notes:
 * - Every kernel reports through one small array of GX_R_SLOTS u64 words in
 *   device memory ("res"), followed by the per-op cycles (u32) of seq and
 *   prime_probe, so one copy brings both back. A probe kernel is claimed by
 *   writing the launch's ticket (never repeated) into res[GX_R_CLAIM], so
 *   the slots need no clearing between launches.
 * - A seq op travels as one u64: bits 0..47 the byte offset in the arena,
 *   bits 48..55 the op kind (gx_op_kind), bit 56 "timed". Arenas are far
 *   below 2^48 bytes, so the offset always fits.
 * - Shared memory of every probe kernel starts with GX_HDR_WORDS u64 words
 *   of scratch (claim flag, sinks); the rest holds op lists and results. */
#ifndef GPUXRAY_KERNELS_ABI_H
#define GPUXRAY_KERNELS_ABI_H

/* result slots */
#define GX_R_CLAIM 0  /* the launch's ticket once the block on the wanted SM took the job */
#define GX_R_STATUS 1 /* GX_ST_* */
#define GX_R_CYCLES 2 /* chase: clock64 cycles between the two timed reads */
#define GX_R_STEPS 3  /* chase: timed steps done; seq/pp: ops done */
#define GX_R_SMID 4   /* %smid of the block that ran */
#define GX_R_SINK 5   /* dead-store guard: final pointer / last loaded value */
#define GX_R_AUX 6    /* link: a duplicated offset; pp: prime loads done */
#define GX_R_NTIMED 7 /* seq/pp: timed values written */
#define GX_R_SLOTS 8

/* status codes */
#define GX_ST_OK 0
#define GX_ST_TIMEOUT 1 /* the in-kernel cycle budget ran out */
#define GX_ST_DUP 2     /* chain link: an offset appears twice */
#define GX_ST_MOVED 3   /* %smid changed during the run (block migrated) */

/* contend: the measurer's stop word in res[GX_R_AUX] is its ticket with this
 * bit set (no other kernel writes a value with it there) */
#define GX_CONTEND_STOP_BIT (1ull << 63)

/* packed seq op */
#define GX_OPW_OFFSET_MASK 0xFFFFFFFFFFFFull
#define GX_OPW_KIND_SHIFT 48
#define GX_OPW_TIMED_BIT (1ull << 56)
#define GX_KOP_LOAD 0
#define GX_KOP_STORE 1
#define GX_KOP_NONE 2

/* shared memory header (u64 words) before the op/result buffers */
#define GX_HDR_WORDS 8
#define GX_HDR_BYTES (GX_HDR_WORDS * 8)

/* SM census: slots of the seen[] array the census kernel fills */
#define GX_CENSUS_IDS 1024              /* seen[id] counts blocks on %smid id */
#define GX_CENSUS_OVERFLOW GX_CENSUS_IDS /* blocks on ids >= GX_CENSUS_IDS */
#define GX_CENSUS_NSMID (GX_CENSUS_IDS + 1)
#define GX_CENSUS_SLOTS (GX_CENSUS_IDS + 2)

/* shared-memory probe (gx_smem.cu): bytes of its zeroed window after the
 * header (= GX_SMEM_PROBE_WINDOW of target.h) */
#define GX_SMEM_WINDOW_BYTES 65536u

/* block sizes */
#define GX_CHASE_THREADS 32
#define GX_SEQ_THREADS 256
#define GX_PP_THREADS 1024
#define GX_BUILD_THREADS 256

#endif
