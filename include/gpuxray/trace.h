/* trace.h - memory access traces: the record, the text, binary and Accel-Sim
 * file formats (Contract 3 of DESIGN.md; docs/trace-format.md has worked
 * examples), the streaming reader, synthetic generators, and the
 * trace-driven run of the L2 model (`gpuxray sim`).
 *
 * ---- Text format: one record a line ----
 *   SM OP ADDRESS [SIZE] [KEY=VALUE ...]
 *   SM       decimal, 0 .. 2^32-1 (and below the profile's device.sm_count
 *            when a limit is given)
 *   OP       R (read), W (write), A (atomic): global memory;
 *            SR (shared read), SW (shared write): ADDRESS is the byte offset
 *            in the block's shared memory;
 *            MAP: map the VA range [ADDRESS, ADDRESS + bytes) at a page size;
 *            INV: invalidate translations of [ADDRESS, ADDRESS + bytes)
 *            (bytes absent or 0 = everything: a full TLB / PWC shootdown).
 *            Upper or lower case.
 *   ADDRESS  hexadecimal, with or without 0x/0X, 1-16 digits (a VIRTUAL
 *            address for global ops; `gpuxray sim` maps pages to frames)
 *   SIZE     decimal bytes, 1 .. GX_TRACE_MAX_SIZE; GX_TRACE_DEFAULT_SIZE
 *            (one thread's 32-bit word) when omitted. Not allowed on MAP
 *            and INV. ADDRESS + SIZE - 1 must not pass 2^64 - 1.
 *   KEY=VALUE optional, any order, each key at most once; VALUE decimal or
 *            0x-hexadecimal, with no blanks around '=':
 *     cycle=N  issue cycle, 0 .. 2^64-1 (0 = not given)
 *     warp=N   warp-instruction id, 0 .. 2^32-1 (see gx_trace_rec.warp)
 *     lane=N   lane, 0 .. GX_TRACE_LANES-1
 *     bytes=N  MAP (required, > 0) and INV (optional): the range's length;
 *              ADDRESS + bytes - 1 must not pass 2^64 - 1
 *     page=N   MAP only (required): page bytes, a power of two from
 *              GX_TRACE_MIN_PAGE_BYTES to GX_TRACE_MAX_PAGE_BYTES
 *   Fields are separated by spaces or tabs. `#` starts a comment (a whole
 *   line or the rest of a line); blank lines are allowed; CRLF accepted.
 *   Lines are numbered from 1; a line is at most GX_TRACE_MAX_LINE bytes.
 *   Example: `3 R 0x7f001000 16 cycle=1200 warp=7 lane=4`,
 *            `0 MAP 0x7f0000000000 bytes=0x40000000 page=0x200000`.
 *
 * ---- Binary version 1 (little-endian, fixed size; still read) ----
 *   offset 0   8 bytes  magic "GXTRACE1"
 *   offset 8   u64      record count N
 *   offset 16  N records of 16 bytes:
 *                u64 address, u32 sm, u16 size, u8 op (0 R, 1 W, 2 A),
 *                u8 reserved (must be 0)
 *   The file length must be exactly 16 + 16 N. Records are indexed from 0.
 *
 * ---- Binary version 2 (the default written; compact, streamable) ----
 *   offset 0   8 bytes  magic "GXTRACE2"
 *   offset 8   u64      flags, must be 0 (reserved for later versions)
 *   then records, then an end marker; each record is a difference from the
 *   previous one (decoder state starts at addr 0, sm 0, size
 *   GX_TRACE_DEFAULT_SIZE, cycle 0, warp 0, lane 0, and carries over):
 *     byte H      bits 0-3: L, bytes of the address delta (0..8)
 *                 bit 4:    X, an extension byte follows
 *                 bits 5-7: op (0..6, gx_trace_op)
 *     byte E      (only when X) bit 0 sm, bit 1 size, bit 2 cycle,
 *                 bit 3 warp, bit 4 lane follow; bits 5-7 must be 0
 *     L bytes     zigzag(addr - previous addr), little-endian (L = 0: the
 *                 same address)
 *     [sm]        LEB128 varint, absolute (< 2^32)
 *     [size]      LEB128 varint, absolute
 *     [cycle]     LEB128 varint of zigzag(cycle - previous cycle)
 *     [warp]      LEB128 varint of zigzag(warp - previous warp), mod 2^32
 *     [lane]      one byte
 *     [arg]       LEB128 varint, absolute: only for MAP and INV
 *   End marker: the byte 0xFF, then u64 N (the number of records); nothing
 *   may follow it. A file without it is truncated. Records are indexed from
 *   0. A typical record takes 2 bytes (stream) to 5 bytes (random over
 *   64 MiB) against 16 in version 1 (docs/performance.md has the figures).
 *
 * ---- Accel-Sim (NVBit tracer, kernel-N.traceg) ----
 *   Read by the streaming reader (src/trace/accelsim.c has the accepted
 *   subset); recognised by its "-kernel name" header line.
 *
 * Every reader rejects a malformed record naming the source and the line
 * (text, Accel-Sim) or the record index (binary). Readers stream: a record
 * is checked when it is read, so records before a malformed one have been
 * delivered already; a caller that prints results (gpuxray sim) must print
 * nothing as if complete on an error (cmd_sim.c: exit 2, no statistics).
 *
 * Notes:
 * - The record is 40 bytes in memory; the readers decode into it.
 * - An access of SIZE bytes touches every sector of [ADDRESS, ADDRESS+SIZE);
 *   each touched sector is one L2 access (see gx_tsim below). */
#ifndef GPUXRAY_TRACE_H
#define GPUXRAY_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"
#include "gpuxray/rng.h"

#define GX_TRACE_MAGIC "GXTRACE1"  /* binary version 1 */
#define GX_TRACE_MAGIC2 "GXTRACE2" /* binary version 2 */
#define GX_TRACE_MAGIC_BYTES 8
#define GX_TRACE_HEADER_BYTES 16   /* both versions */
#define GX_TRACE_RECORD_BYTES 16   /* version 1 */
#define GX_TRACE_V2_END 0xFF       /* version 2 end marker byte */
#define GX_TRACE_MAX_SIZE 128      /* bytes: one warp's coalesced request at most */
#define GX_TRACE_DEFAULT_SIZE 4    /* bytes, when a text line omits SIZE */
#define GX_TRACE_LANES 32          /* lanes of a warp */
#define GX_TRACE_MIN_PAGE_BYTES 4096ULL            /* MAP: the page sizes of Contract 4, */
#define GX_TRACE_MAX_PAGE_BYTES (512ULL << 30)     /* 4 KiB .. 512 GiB */
#define GX_TRACE_MAX_LINE 4096     /* bytes of a text line (a record needs < 200) */

typedef enum gx_trace_op {
    GX_TRACE_READ = 0, GX_TRACE_WRITE = 1, GX_TRACE_ATOMIC = 2,   /* global memory (same as gx_l2_op) */
    GX_TRACE_SHARED_READ = 3, GX_TRACE_SHARED_WRITE = 4,          /* shared memory: addr = byte offset in
                                                                     the block's shared memory */
    GX_TRACE_MAP = 5,        /* addr = VA base, arg = bytes, size = log2(page bytes): map a region */
    GX_TRACE_INVALIDATE = 6  /* addr = VA base, arg = bytes (0 = everything): TLB/PWC shootdown */
} gx_trace_op;
#define GX_TRACE_OPS 7

typedef struct gx_trace_rec {
    uint64_t addr;
    uint64_t arg;      /* MAP / INVALIDATE only, else 0 */
    uint64_t cycle;    /* issue cycle; 0 = not given (accesses then issue one after another) */
    uint32_t sm;
    uint32_t warp;     /* warp-instruction id: consecutive records of one SM with the same non-zero
                          id are the lanes / requests of ONE warp instruction; 0 = an instruction alone */
    uint16_t size;     /* bytes of this lane's / request's access (1..GX_TRACE_MAX_SIZE);
                          MAP: log2(page bytes); INVALIDATE: 0 */
    uint8_t op;        /* gx_trace_op */
    uint8_t lane;      /* 0..31 (lane of the warp), 0 when not given */
    uint32_t reserved; /* 0 */
} gx_trace_rec;

/* 1 for the global-memory ops (R, W, A), which go through the L2. */
static inline int gx_trace_op_is_global(int op)
{
    return (unsigned)op <= GX_TRACE_ATOMIC;
}

typedef struct gx_trace {
    gx_trace_rec *rec;
    uint64_t n, cap;
} gx_trace;

typedef enum gx_trace_format {
    GX_TRACE_TEXT = 0,
    GX_TRACE_BINARY = 1,   /* binary version 2 (the default binary output) */
    GX_TRACE_BINARY1 = 2,  /* binary version 1 (GXTRACE1: only R, W, A and no extra fields) */
    GX_TRACE_ACCELSIM = 3  /* read only */
} gx_trace_format;

/* ---- container ---- */
void gx_trace_init(gx_trace *t);
void gx_trace_free(gx_trace *t); /* frees the records; t is empty afterwards */
int gx_trace_reserve(gx_trace *t, uint64_t n, gx_msg *msg);
/* Append a record after checking it (gx_trace_check). */
int gx_trace_append(gx_trace *t, const gx_trace_rec *r, gx_msg *msg);
/* A global access (R, W, A) with the other fields 0. */
int gx_trace_push(gx_trace *t, uint64_t addr, uint32_t sm, gx_trace_op op, uint32_t size,
                  gx_msg *msg);
/* 'R', 'W', 'A' ('?' for another op). */
char gx_trace_op_char(int op);
/* "R", "W", "A", "SR", "SW", "MAP", "INV" ("?" for an invalid op). */
const char *gx_trace_op_name(int op);
/* GX_OK when r is a valid record (the rules of the text format above), else
 * GX_EINVAL with a message naming the field (no source or position: the
 * readers add theirs). sm_limit > 0 rejects SM >= sm_limit. */
int gx_trace_check(const gx_trace_rec *r, uint32_t sm_limit, gx_msg *msg);

/* ---- streaming reader ---- */
typedef struct gx_trace_reader gx_trace_reader;
/* Open a file ("-" = standard input) or a pipe; the format is told apart by
 * the first bytes (binary magics, an Accel-Sim header, else text). Reads in
 * bounded chunks: memory does not grow with the trace's length. */
int gx_trace_reader_open(const char *path, uint32_t sm_limit, gx_trace_reader **out,
                         gx_msg *msg);
/* The same over a buffer in memory (not copied; it must outlive the reader). */
int gx_trace_reader_open_mem(const void *data, size_t len, const char *source, uint32_t sm_limit,
                             gx_trace_reader **out, gx_msg *msg);
/* Up to max records into buf; *n = how many (0 = the trace is complete).
 * A malformed record: GX_EPARSE with the source and the line / record index
 * in msg (the records before it were delivered by earlier calls). */
int gx_trace_reader_next(gx_trace_reader *r, gx_trace_rec *buf, size_t max, size_t *n,
                         gx_msg *msg);
gx_trace_format gx_trace_reader_format(const gx_trace_reader *r);
/* Records delivered so far. */
uint64_t gx_trace_reader_records(const gx_trace_reader *r);
/* Bytes the reader holds (its buffers): constant for a reader's life. */
size_t gx_trace_reader_footprint(const gx_trace_reader *r);
void gx_trace_reader_close(gx_trace_reader *r);

/* ---- column batches: the input of the trace simulator without translation ----
 * A batch of records as columns: address, SM, size and op of every record
 * (in order), and the whole record of each record that is not a global
 * access (op > GX_TRACE_ATOMIC: shared, MAP, INV), in order, in rec[]. The
 * issue cycle, warp and lane of global accesses are NOT kept (the model
 * without translation does not use them; with translation, read records).
 * ops[] and bytes count the batch's global accesses.
 * Merging (merge_bytes, a power of two, set by the caller; 0: off): a
 * global access that stays within one aligned merge_bytes block, of the
 * same block, SM and size as the entry before it, is folded into that
 * entry (rep[k] = the accesses folded into entry k, beyond its own): the
 * trace simulator passes its L2 sector, whose repeats it runs as such.
 * The reader clears rep[] at a batch's start (the binary and text decoders
 * store no 0 for a new entry: one store a record less).
 * n_wide counts the global entries that do NOT stay within one merge block
 * (every global entry when merging is off) and sm_bound is the reader's SM
 * limit (every SM of the batch is below it; 0: unknown): a batch with
 * n_rec = n_wide = 0 and a known bound is one run of single-block accesses
 * (the trace simulator's run without a scan). */
typedef struct gx_trace_cols {
    uint64_t *addr;
    uint32_t *sm;
    uint16_t *size;
    uint8_t *op;
    uint32_t *rep;
    uint32_t merge_bytes;
    gx_trace_rec *rec; /* cap entries */
    size_t cap;        /* entries of every column */
    size_t n, n_rec;   /* entries in the batch; of which in rec[] */
    size_t n_wide;     /* global entries across a merge block's end (see above) */
    uint32_t sm_bound; /* every entry's SM is below it (0: unknown) */
    uint64_t records;  /* records in the batch (n plus the folded ones) */
    uint64_t ops[3], bytes;
} gx_trace_cols;
/* Columns of cap (>= 1) entries each; GX_ENOMEM. */
int gx_trace_cols_init(gx_trace_cols *c, size_t cap);
void gx_trace_cols_free(gx_trace_cols *c);
/* Up to c->cap entries into c (c->n = 0: the trace is complete); the same
 * records, checks and messages as gx_trace_reader_next. */
int gx_trace_reader_next_cols(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg);

/* ---- whole-trace reading (tests, convert, small traces) ---- */
/* 1 when data starts with a binary magic (version 1 or 2). */
int gx_trace_is_binary(const void *data, size_t len);
/* Parse a whole buffer; sm_limit > 0 rejects SM >= sm_limit. On success the
 * records are appended to out (which must be initialised); on failure out is
 * left as it was. source names the input in messages. */
int gx_trace_parse_text(const char *text, size_t len, const char *source, uint32_t sm_limit,
                        gx_trace *out, gx_msg *msg);
int gx_trace_parse_binary(const void *data, size_t len, const char *source, uint32_t sm_limit,
                          gx_trace *out, gx_msg *msg);
/* Any form, told apart by the first bytes. */
int gx_trace_parse(const void *data, size_t len, const char *source, uint32_t sm_limit,
                   gx_trace *out, gx_msg *msg);
/* Read a whole file ("-" = standard input) into out (streamed in chunks). */
int gx_trace_read(const char *path, uint32_t sm_limit, gx_trace *out, gx_msg *msg);

/* ---- writing ---- */
int gx_trace_write(const gx_trace *t, FILE *f, gx_trace_format fmt, gx_msg *msg);
/* Write to path atomically (temporary file + rename); "-" = standard output. */
int gx_trace_save(const gx_trace *t, const char *path, gx_trace_format fmt, gx_msg *msg);
/* Stream the trace at in (any readable format; "-" = stdin) to out in fmt
 * (atomically; "-" = stdout), in constant memory. */
int gx_trace_convert(const char *in, const char *out, gx_trace_format fmt, gx_msg *msg);

/* ---- generators ---- */
typedef enum gx_gen_pattern {
    GX_GEN_STREAM = 0, /* base, base+size, base+2*size, ... wrapping at the footprint */
    GX_GEN_STRIDE,     /* base + (i*stride mod footprint) */
    GX_GEN_RANDOM,     /* base + size * uniform(footprint/size) */
    GX_GEN_TILE,       /* row-major rows x cols matrix of elem-byte elements, visited
                        * tile x tile block by block (blocks in row-major order), row by
                        * row inside a block; wraps after the last block */
    GX_GEN_PAGES       /* page-walk workload: count pages of page_bytes from base, MAP
                        * records for the mapped ones (every unmapped_every-th page left
                        * unmapped when > 1), then one access at the start of each mapped
                        * page in page_order (see gx_page_order) */
} gx_gen_pattern;

typedef enum gx_page_order {
    GX_PAGES_SEQUENTIAL = 0, /* pages 0, 1, 2, ... */
    GX_PAGES_STRIDED,        /* pages 0, S, 2S, ... then 1, 1+S, ... (S = page_stride) */
    GX_PAGES_RANDOM          /* a seeded permutation of the pages */
} gx_page_order;

typedef enum gx_sm_assign {
    GX_SM_ROUNDROBIN = 0, /* access i -> SM i mod sms */
    GX_SM_BLOCK,          /* count split into sms contiguous chunks: SM i*sms/count */
    GX_SM_RANDOM          /* uniform over sms (seeded) */
} gx_sm_assign;

typedef struct gx_gen_cfg {
    gx_gen_pattern pattern;
    uint64_t base;            /* first virtual address */
    uint64_t footprint_bytes; /* stream, stride, random */
    uint64_t count;           /* accesses; 0 = the pattern's default (gx_gen_count) */
    uint64_t stride_bytes;    /* stride */
    uint32_t size_bytes;      /* bytes per access (tile: elem_bytes) */
    uint32_t sms;
    gx_sm_assign sm_assign;
    uint64_t seed;
    uint64_t rows, cols;      /* tile */
    uint32_t elem_bytes, tile;
    double write_ratio, atomic_ratio; /* fraction of W and A accesses (seeded) */
    uint64_t page_bytes;      /* pages: page size (default 4 KiB) */
    gx_page_order page_order; /* pages */
    uint64_t page_stride;     /* pages: strided order's step in pages (default 16) */
    uint64_t unmapped_every;  /* pages: 0 = every page mapped; K > 1: page k unmapped when
                                 k % K == K - 1 */
} gx_gen_cfg;

/* Defaults: base 0, footprint 64 MiB, size 32 B (one sector), stride 128 B,
 * 1 SM round-robin, seed 1, tile 1024 x 1024 x 4 B in 32 x 32 tiles, reads
 * only. Count 0: one pass over the footprint for stream and stride
 * (footprint/size, footprint/stride), one pass over the matrix for tile,
 * 1M for random. */
void gx_gen_defaults(gx_gen_cfg *c);
/* GX_OK or GX_EINVAL naming the bad option. */
int gx_gen_check(const gx_gen_cfg *c, gx_msg *msg);
/* The number of accesses c produces (resolves count 0). */
uint64_t gx_gen_count(const gx_gen_cfg *c);
int gx_gen_pattern_parse(const char *s, gx_gen_pattern *out);
int gx_sm_assign_parse(const char *s, gx_sm_assign *out);
int gx_page_order_parse(const char *s, gx_page_order *out);
const char *gx_gen_pattern_name(gx_gen_pattern p);

/* Streaming generator: records one at a time (for large traces). */
typedef struct gx_gen {
    gx_gen_cfg cfg;
    uint64_t i, n;
    gx_rng rng_addr, rng_sm, rng_op; /* independent streams */
    uint64_t tr, tc, ri, ci;          /* tile walk position */
    uint64_t pg_run, pg_i, pg_r, pg_k; /* pages: MAP run, access index, strided position */
} gx_gen;
int gx_gen_init(gx_gen *g, const gx_gen_cfg *c, gx_msg *msg);
/* 0 when the trace is complete, 1 when r received the next record. */
int gx_gen_next(gx_gen *g, gx_trace_rec *r);
/* Generate the whole trace into out (appended). */
int gx_trace_generate(const gx_gen_cfg *c, gx_trace *out, gx_msg *msg);
/* Generate straight to a file (atomically; "-" = stdout) without holding
 * the trace in memory. */
int gx_gen_save(const gx_gen_cfg *c, const char *path, gx_trace_format fmt, gx_msg *msg);

/* ---- trace-driven model run ---- */
/* Every access's address is VIRTUAL: its page (memory.page_bytes) is mapped
 * to a physical frame by gx_placement seeded with frames_seed, within
 * phys_bytes of physical memory; the physical address goes through gx_l2.
 * An access touching k sectors makes k L2 accesses (issued together); its
 * latency is the largest of theirs. Total cycles = the sum of the accesses'
 * latencies (each access waits for the previous: a latency-bound estimate). */
#define GX_TSIM_LAT_BINS 8192 /* 1-cycle latency bins; latencies above go to the last bin */
#define GX_TSIM_DEFAULT_PHYS_BYTES (64ULL << 30)

typedef struct gx_tsim_cfg {
    int noise;            /* profile's sim.noise */
    int skew;             /* per-(SM, slice) skew */
    uint64_t seed;        /* noise and randomized policies */
    uint64_t frames_seed; /* placement */
    uint64_t phys_bytes;  /* 0 = GX_TSIM_DEFAULT_PHYS_BYTES */
    int prefetch;         /* locate coming accesses early and prefetch their sets into
                           * the host's caches: 1 on, 0 off, -1 auto (= on); never
                           * changes results (src/trace/tsim.c has the measurements) */
} gx_tsim_cfg;

typedef struct gx_tsim gx_tsim;

typedef struct gx_tsim_stats {
    uint64_t accesses, reads, writes, atomics, bytes; /* global-memory records (R, W, A) */
    uint64_t shared_reads, shared_writes, maps, invalidations; /* counted, not modelled */
    uint64_t l2_accesses;           /* sector lookups issued to the L2 */
    uint64_t level_accesses[2], level_hits[2], level_sector_misses[2], level_line_misses[2];
    uint64_t dram_accesses;
    uint32_t slices;
    const uint64_t *slice_accesses; /* slices entries; valid until the next run */
    const uint64_t *lat_hist;       /* GX_TSIM_LAT_BINS entries (rounded cycles) */
    double total_cycles, min_cycles, max_cycles;
} gx_tsim_stats;

/* The default config: noise off, skew on, seed 1, frames_seed from the
 * profile's sim.frames_seed (1 when absent), default physical size,
 * prefetch auto. */
void gx_tsim_defaults(const gx_profile *p, gx_tsim_cfg *c);
int gx_tsim_new(const gx_profile *p, const gx_tsim_cfg *c, gx_tsim **out, gx_msg *msg);
void gx_tsim_free(gx_tsim *s);
/* Run records; stats accumulate over calls. An SM at or above the profile's
 * sm_count is folded modulo sm_count (gx_trace_read with sm_limit rejects
 * such traces up front, as `gpuxray sim` does). */
void gx_tsim_run(gx_tsim *s, const gx_trace_rec *rec, uint64_t n);
/* 1 when the run takes column batches (gx_tsim_run_cols): translation
 * off (with translation the cycle and warp of every access matter). */
int gx_tsim_takes_cols(const gx_tsim *s);
/* The gx_trace_cols.merge_bytes the run wants: its L2 sector. */
uint32_t gx_tsim_merge_bytes(const gx_tsim *s);
/* Run a column batch (gx_trace_reader_next_cols): the same statistics as
 * gx_tsim_run on the same records. Only when gx_tsim_takes_cols. */
void gx_tsim_run_cols(gx_tsim *s, const gx_trace_cols *c);
/* With translation (a tlb section), consecutive records of one SM with the
 * same non-zero warp id issued within the coalescer's window are ONE warp
 * instruction, run when it is complete; gx_tsim_flush runs the last one
 * (call it after the last gx_tsim_run; a no-op without translation). */
void gx_tsim_flush(gx_tsim *s);
void gx_tsim_get_stats(const gx_tsim *s, gx_tsim_stats *st);
/* Virtual pages the runs touched and physical frames available (phys_bytes
 * / page_bytes): pages > frames means pages shared frames (wrong results). */
void gx_tsim_page_usage(const gx_tsim *s, uint64_t *pages, uint64_t *frames);
/* The latency (whole cycles) below or at which a fraction q (0..1) of the
 * accesses fall, from the histogram; NaN when empty. */
double gx_tsim_latency_quantile(const gx_tsim_stats *st, double q);
/* Stats as JSON (stable keys, deterministic formatting) / text. */
int gx_tsim_write_json(const gx_tsim *s, FILE *f);
int gx_tsim_write_text(const gx_tsim *s, FILE *f, int top_slices);

#endif
