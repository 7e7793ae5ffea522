/* trace_io.h - internal: a buffered trace writer shared by gx_trace_save,
 * gx_trace_write, the streaming generator (gx_gen_save) and `trace
 * convert`. A path is written through gx_out (outfile.h): a temporary file
 * next to a regular target, renamed on success, so nothing half-written is
 * left; devices and FIFOs are written straight, never replaced. */
#ifndef GPUXRAY_TRACE_IO_H
#define GPUXRAY_TRACE_IO_H

#include <stdio.h>

#include "gpuxray/outfile.h"
#include "gpuxray/trace.h"

#define GX_TW_COUNT_UNKNOWN UINT64_MAX

typedef struct gx_tw {
    FILE *f;
    const char *path;
    gx_out out; /* the output when opened by path (own = 1); f == out.f */
    int own;
    gx_trace_format fmt;
    gx_msg *msg;
    uint64_t announced; /* binary version 1: the header's count */
    uint64_t count;
    gx_trace_rec prev;  /* binary version 2: the encoder state */
    size_t len;
    int failed;
    unsigned char buf[1 << 16];
} gx_tw;

/* count: the number of records that will be written, or GX_TW_COUNT_UNKNOWN
 * (binary version 1 then patches its header at close, which needs a file,
 * not a pipe). */
int gx_tw_open(gx_tw *w, const char *path, gx_trace_format fmt, uint64_t count, gx_msg *msg);
/* The same onto an open stream (not closed by gx_tw_close). */
void gx_tw_open_file(gx_tw *w, FILE *f, gx_trace_format fmt, uint64_t count, gx_msg *msg);
int gx_tw_put(gx_tw *w, const gx_trace_rec *r);
/* ok = 0 abandons the file (the temporary is removed, the target untouched). */
int gx_tw_close(gx_tw *w, int ok);
/* Close after the puts returned rc: GX_OK commits; a failed write is
 * reported with its reason (ENOSPC...); any other error abandons the file
 * and is returned as it is. */
int gx_tw_end(gx_tw *w, int rc);

#endif
