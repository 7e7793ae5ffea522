/* trace_io.h - internal: a buffered trace writer shared by gx_trace_save and
 * the streaming generator (gx_gen_save). Writes a temporary file next to the
 * target and renames it on success, so nothing half-written is left. */
#ifndef GPUXRAY_TRACE_IO_H
#define GPUXRAY_TRACE_IO_H

#include <stdio.h>

#include "gpuxray/trace.h"

typedef struct gx_tw {
    FILE *f;
    const char *path;
    char *tmp; /* temporary name; NULL for stdout */
    gx_trace_format fmt;
    gx_msg *msg;
    uint64_t count;
    size_t len;
    int failed;
    unsigned char buf[1 << 16];
} gx_tw;

/* count: the number of records that will be written (binary header). */
int gx_tw_open(gx_tw *w, const char *path, gx_trace_format fmt, uint64_t count, gx_msg *msg);
int gx_tw_put(gx_tw *w, const gx_trace_rec *r);
/* ok = 0 abandons the file (the temporary is removed, the target untouched). */
int gx_tw_close(gx_tw *w, int ok);

#endif
