/* reader_internal.h - internal: the streaming trace reader's state, shared
 * by the reader (reader.c) and the format decoders (text.c with text_word.c, binary.c,
 * accelsim.c).
 *
 * Notes:
 * - The input sits in one buffer of GX_READER_BUF_BYTES (a file or a pipe)
 *   or is the caller's memory (whole). [p, end) is the part not decoded yet;
 *   a decoder that needs more bytes than are there returns to the reader,
 *   which moves the rest to the front and reads more. */
#ifndef GPUXRAY_READER_INTERNAL_H
#define GPUXRAY_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuxray/trace.h"

/* Input buffer: large enough that read() calls are amortised (a 1 MiB read
 * costs ~100 us against ~10 ms of decoding), small enough to stay far below
 * the 64 MiB streaming bound. Measured: docs/performance.md. */
#define GX_READER_BUF_BYTES (1u << 20)

/* The most bytes one binary version 2 record can take (header 2, address 8,
 * varints 5 + 10 + 10 + 5 + 10, lane 1): a decoder with at least this much
 * left never runs past the end. */
#define GX_V2_MAX_RECORD 64

typedef struct gx_accelsim_state gx_accelsim_state;

struct gx_trace_reader {
    char source[256];
    uint32_t sm_limit;
    gx_trace_format fmt;
    int fd, own_fd;
    unsigned char *buf;     /* owned input buffer (NULL over caller memory) */
    size_t cap;             /* its size */
    const unsigned char *p, *end;
    int eof;                /* the source has no more bytes beyond end */
    int done;               /* the trace is complete */
    uint64_t line;          /* text / Accel-Sim: lines consumed */
    uint64_t index;         /* records delivered */
    uint64_t v1_count;      /* binary version 1: the header's count */
    gx_trace_rec prev;      /* binary version 2: the decoder state */
    gx_accelsim_state *as;  /* Accel-Sim decoder state */
    gx_trace_rec *tmp;      /* column reads of the formats decoded as records */
    size_t tmp_cap;
};

/* Each decoder fills up to max records, advancing r->p; *n = how many. It
 * stops early when it needs bytes beyond r->end and !r->eof (the reader then
 * refills and calls again). It sets r->done when the trace is complete. */
int gx_text_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg);
int gx_v1_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg);
int gx_v2_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg);
int gx_accelsim_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n,
                       gx_msg *msg);
/* Binary version 2 straight into columns: appends to c (from c->n, up to
 * c->cap); the contract of the decoders above otherwise. */
int gx_v2_decode_cols(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg);
/* Text straight into columns (common lines without a record in between). */
int gx_text_decode_cols(gx_trace_reader *r, gx_trace_cols *c, gx_msg *msg);
void gx_accelsim_free(gx_trace_reader *r);
/* 1 when data (the first bytes of an input) looks like an Accel-Sim trace. */
int gx_accelsim_detect(const unsigned char *data, size_t len);

/* Append record t to the columns (and to rec[] when not global), folded
 * into the entry before when merging allows (gx_trace_cols: a global
 * access within one merge block, of the block, SM and size of the entry
 * before, itself global and within one block). */
static inline __attribute__((always_inline)) void gx_cols_put(gx_trace_cols *c,
                                                             const gx_trace_rec *t)
{
    const uint64_t mb = c->merge_bytes, fit = mb - 1;
    const int global = gx_trace_op_is_global(t->op);
    if (global) {
        c->ops[t->op]++;
        c->bytes += t->size;
        c->records++;
        if (mb > 1 && c->n) {
            size_t last = c->n - 1;
            /* the address first: it differs in most non-repeats */
            if ((t->addr ^ c->addr[last]) <= fit && t->sm == c->sm[last] &&
                t->size == c->size[last] && gx_trace_op_is_global(c->op[last]) &&
                t->size <= mb && (t->addr & fit) + t->size - 1 <= fit &&
                (c->addr[last] & fit) + t->size - 1 <= fit) {
                c->rep[last]++;
                return;
            }
        }
        /* within one merge block (gx_trace_cols.n_wide) */
        c->n_wide += !(mb > 1 && t->size <= mb && (t->addr & fit) + t->size - 1 <= fit);
    } else {
        c->records++;
        c->rec[c->n_rec++] = *t;
    }
    size_t k = c->n++;
    c->rep[k] = 0;
    c->addr[k] = t->addr;
    c->sm[k] = t->sm;
    c->size[k] = t->size;
    c->op[k] = t->op;
}

/* Entries [k0, k) of the sm and size columns to one template's SM and
 * size, and of the op column to op when op >= 0 (the decoders' runs of one
 * template leave them to this), eight bytes a store: memset's `rep stosb`
 * costs the host about as little but counts one instruction a byte under
 * callgrind, the measure of docs/performance.md. */
static inline void gx_cols_fill(gx_trace_cols *c, size_t k0, size_t k, uint32_t sm,
                                uint16_t size, int op)
{
    const uint64_t s2 = (uint64_t)sm * 0x100000001ULL, z4 = (uint64_t)size * 0x0001000100010001ULL;
    const uint64_t o8 = (uint64_t)(uint8_t)op * 0x0101010101010101ULL;
    uint32_t *const cs = c->sm; /* locals: the stores cannot alias them */
    uint16_t *const cz = c->size;
    uint8_t *const co = op >= 0 ? c->op : NULL;
    size_t i = k0;
    for (; i + 8 <= k; i += 8) {
        memcpy(cs + i, &s2, 8);
        memcpy(cs + i + 2, &s2, 8);
        memcpy(cs + i + 4, &s2, 8);
        memcpy(cs + i + 6, &s2, 8);
        memcpy(cz + i, &z4, 8);
        memcpy(cz + i + 4, &z4, 8);
        if (co)
            memcpy(co + i, &o8, 8);
    }
    for (; i < k; i++) {
        cs[i] = sm;
        cz[i] = size;
        if (co)
            co[i] = (uint8_t)op;
    }
}

/* Record validation with the reader's position in the message: the line
 * (text, Accel-Sim) or index (binary: the record's index in the trace). */
int gx_reader_check(const gx_trace_reader *r, const gx_trace_rec *rec, uint64_t index,
                    gx_msg *msg);

#endif
