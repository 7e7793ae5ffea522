/* cols_check.h - for the trace fuzzers: the column decoder
 * (gx_trace_reader_next_cols) against the whole-buffer record parser on
 * the same bytes. Batches of a few entries (their edges fuzzed too); with
 * merging off every entry is one record, equal field by field; with
 * 32-byte merging the counts (records, reads, writes, atomics, bytes)
 * equal the records'. Both accept or both reject (a stream delivers what
 * comes before a malformed record: entries are compared only when the
 * trace parsed). Aborts on a difference. */
#ifndef GX_FUZZ_COLS_CHECK_H
#define GX_FUZZ_COLS_CHECK_H

#include <stdlib.h>

#include "gpuxray/trace.h"

#define COLS_CAP 7 /* entries a batch: small, so batches end anywhere */

static void cols_pass(const void *buf, size_t len, uint32_t sm_limit, const gx_trace *t,
                      int parsed_ok, uint32_t merge_bytes)
{
    gx_trace_reader *r = NULL;
    gx_msg m;
    if (gx_trace_reader_open_mem(buf, len, "fuzz", sm_limit, &r, &m) != GX_OK) {
        if (parsed_ok)
            abort(); /* the stream reader refused what the parser took */
        return;
    }
    gx_trace_cols c;
    if (gx_trace_cols_init(&c, COLS_CAP) != GX_OK) {
        gx_trace_reader_close(r);
        return;
    }
    c.merge_bytes = merge_bytes;
    uint64_t i = 0, records = 0, ops[3] = {0, 0, 0}, bytes = 0;
    int rc;
    for (;;) {
        c.ops[0] = c.ops[1] = c.ops[2] = c.bytes = c.records = 0;
        rc = gx_trace_reader_next_cols(r, &c, &m);
        if (rc != GX_OK || !c.n)
            break;
        records += c.records;
        bytes += c.bytes;
        for (int k = 0; k < 3; k++)
            ops[k] += c.ops[k];
        size_t jr = 0;
        /* a stream delivers the records before a malformed one: entries are
         * compared only when the whole trace parsed */
        for (size_t k = 0; k < c.n && merge_bytes <= 1 && parsed_ok; k++, i++) {
            if (c.rep[k] || i >= t->n)
                abort(); /* nothing folds without merging; no more entries than records */
            const gx_trace_rec *x = &t->rec[i];
            if (gx_trace_op_is_global(c.op[k])) {
                if (x->addr != c.addr[k] || x->sm != c.sm[k] || x->size != c.size[k] ||
                    x->op != c.op[k])
                    abort();
            } else {
                const gx_trace_rec *y = &c.rec[jr++];
                if (jr > c.n_rec || x->addr != y->addr || x->op != y->op || x->sm != y->sm ||
                    x->size != y->size || x->arg != y->arg)
                    abort();
            }
        }
    }
    gx_trace_cols_free(&c);
    gx_trace_reader_close(r);
    if (!parsed_ok) {
        if (rc == GX_OK)
            abort(); /* the columns took what the parser rejected */
        return;
    }
    if (rc != GX_OK || records != t->n || (merge_bytes <= 1 && i != t->n))
        abort();
    uint64_t want_ops[3] = {0, 0, 0}, want_bytes = 0;
    for (uint64_t k = 0; k < t->n; k++)
        if (gx_trace_op_is_global(t->rec[k].op)) {
            want_ops[t->rec[k].op]++;
            want_bytes += t->rec[k].size;
        }
    for (int k = 0; k < 3; k++)
        if (ops[k] != want_ops[k])
            abort();
    if (bytes != want_bytes)
        abort();
}

static void cols_check(const void *buf, size_t len, uint32_t sm_limit, const gx_trace *t,
                       int parsed_ok)
{
    cols_pass(buf, len, sm_limit, t, parsed_ok, 1);
    cols_pass(buf, len, sm_limit, t, parsed_ok, 32);
}

#endif
