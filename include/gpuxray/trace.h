/* trace.h - memory access traces: the in-memory form, the text and binary
 * file formats (Contract 3 of DESIGN.md), synthetic generators, and the
 * trace-driven run of the L2 model (`gpuxray sim`).
 *
 * Text format: one access a line, `SM OP ADDRESS [SIZE]`
 *   SM       decimal, 0 .. 2^32-1 (and below the profile's device.sm_count
 *            when a limit is given)
 *   OP       R (read), W (write) or A (atomic); lower case accepted
 *   ADDRESS  hexadecimal, with or without 0x/0X, 1-16 digits (a VIRTUAL
 *            address; `gpuxray sim` maps pages to physical frames)
 *   SIZE     decimal bytes, 1 .. GX_TRACE_MAX_SIZE; GX_TRACE_DEFAULT_SIZE
 *            (one thread's 32-bit word) when omitted
 *   Fields are separated by spaces or tabs. `#` starts a comment (a whole
 *   line or the rest of a line); blank lines are allowed; CRLF accepted.
 *   Lines are numbered from 1.
 *
 * Binary format (little-endian, fixed size, read with one copy):
 *   offset 0   8 bytes  magic "GXTRACE1"
 *   offset 8   u64      record count N
 *   offset 16  N records of 16 bytes:
 *                u64 address, u32 sm, u16 size, u8 op (0 R, 1 W, 2 A),
 *                u8 reserved (must be 0)
 *   The file length must be exactly 16 + 16 N. Records are indexed from 0.
 *   A file whose first 8 bytes are the magic is binary, anything else text.
 *
 * A malformed trace is rejected as a whole (the reader validates every
 * record before returning any): the message names the source and the line
 * number (text) or the record index (binary).
 *
 * Notes:
 * - gx_trace_rec has the binary record's layout, so on a little-endian host
 *   the binary reader is a memcpy plus a validation pass.
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

#define GX_TRACE_MAGIC "GXTRACE1"
#define GX_TRACE_MAGIC_BYTES 8
#define GX_TRACE_HEADER_BYTES 16
#define GX_TRACE_RECORD_BYTES 16
#define GX_TRACE_MAX_SIZE 128   /* bytes: one warp's coalesced request at most */
#define GX_TRACE_DEFAULT_SIZE 4 /* bytes, when a text line omits SIZE */

typedef enum gx_trace_op {
    GX_TRACE_READ = 0, /* same values as gx_l2_op */
    GX_TRACE_WRITE = 1,
    GX_TRACE_ATOMIC = 2
} gx_trace_op;

typedef struct gx_trace_rec {
    uint64_t addr;    /* virtual address */
    uint32_t sm;
    uint16_t size;    /* bytes, 1..GX_TRACE_MAX_SIZE */
    uint8_t op;       /* gx_trace_op */
    uint8_t reserved; /* 0 */
} gx_trace_rec;

typedef struct gx_trace {
    gx_trace_rec *rec;
    uint64_t n, cap;
    /* Internal: a binary file read on a little-endian host may be used in
     * place (records mapped from the file, read-only); map != NULL then.
     * gx_trace_push / gx_trace_reserve copy it to owned memory first. */
    void *map;
    size_t map_bytes;
} gx_trace;

typedef enum gx_trace_format { GX_TRACE_TEXT = 0, GX_TRACE_BINARY = 1 } gx_trace_format;

/* ---- container ---- */
void gx_trace_init(gx_trace *t);
void gx_trace_free(gx_trace *t); /* frees the records; t is empty afterwards */
int gx_trace_reserve(gx_trace *t, uint64_t n, gx_msg *msg);
int gx_trace_push(gx_trace *t, uint64_t addr, uint32_t sm, gx_trace_op op, uint32_t size,
                  gx_msg *msg);
/* 'R', 'W', 'A' ('?' for an invalid op). */
char gx_trace_op_char(int op);

/* ---- reading ---- */
/* 1 when data starts with the binary magic. */
int gx_trace_is_binary(const void *data, size_t len);
/* Parse a whole buffer; sm_limit > 0 rejects SM >= sm_limit. On success the
 * records are appended to out (which must be initialised); on failure out is
 * left as it was. source names the input in messages. */
int gx_trace_parse_text(const char *text, size_t len, const char *source, uint32_t sm_limit,
                        gx_trace *out, gx_msg *msg);
int gx_trace_parse_binary(const void *data, size_t len, const char *source, uint32_t sm_limit,
                          gx_trace *out, gx_msg *msg);
/* Either form, told apart by the magic. */
int gx_trace_parse(const void *data, size_t len, const char *source, uint32_t sm_limit,
                   gx_trace *out, gx_msg *msg);
/* Read a whole file ("-" = standard input) into memory, then parse it. */
int gx_trace_read(const char *path, uint32_t sm_limit, gx_trace *out, gx_msg *msg);

/* ---- writing ---- */
int gx_trace_write(const gx_trace *t, FILE *f, gx_trace_format fmt, gx_msg *msg);
/* Write to path atomically (temporary file + rename); "-" = standard output. */
int gx_trace_save(const gx_trace *t, const char *path, gx_trace_format fmt, gx_msg *msg);

/* ---- generators ---- */
typedef enum gx_gen_pattern {
    GX_GEN_STREAM = 0, /* base, base+size, base+2*size, ... wrapping at the footprint */
    GX_GEN_STRIDE,     /* base + (i*stride mod footprint) */
    GX_GEN_RANDOM,     /* base + size * uniform(footprint/size) */
    GX_GEN_TILE        /* row-major rows x cols matrix of elem-byte elements, visited
                        * tile x tile block by block (blocks in row-major order), row by
                        * row inside a block; wraps after the last block */
} gx_gen_pattern;

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
const char *gx_gen_pattern_name(gx_gen_pattern p);

/* Streaming generator: records one at a time (for large traces). */
typedef struct gx_gen {
    gx_gen_cfg cfg;
    uint64_t i, n;
    gx_rng rng_addr, rng_sm, rng_op; /* independent streams */
    uint64_t tr, tc, ri, ci;          /* tile walk position */
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
    uint64_t accesses, reads, writes, atomics, bytes;
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
void gx_tsim_get_stats(const gx_tsim *s, gx_tsim_stats *st);
/* The latency (whole cycles) below or at which a fraction q (0..1) of the
 * accesses fall, from the histogram; NaN when empty. */
double gx_tsim_latency_quantile(const gx_tsim_stats *st, double q);
/* Stats as JSON (stable keys, deterministic formatting) / text. */
int gx_tsim_write_json(const gx_tsim *s, FILE *f);
int gx_tsim_write_text(const gx_tsim *s, FILE *f, int top_slices);

#endif
