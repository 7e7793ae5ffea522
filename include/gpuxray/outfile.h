/* outfile.h - the one way gpuxray writes an output file (every -o, every
 * save). Use it for any new writer:
 *
 *     if (gx_out_check(path, &msg)) ...        // before the work starts
 *     ... do the work ...
 *     gx_out o;
 *     if (gx_out_open(&o, path, &msg)) ...     // then fprintf(o.f, ...) / fwrite
 *     rc = gx_out_commit(&o, &msg);            // or gx_out_abort(&o) on failure
 *
 * or, for a buffer already in memory, gx_out_write_file(path, data, len, &msg).
 *
 * Rules (the same for every command; docs/cli.md "Output files"):
 * - "-" is standard output.
 * - A regular file (new or existing) is written to a temporary file in the
 *   SAME directory (".NAME.tmp-XXXXXX") and renamed over the destination
 *   only after every byte was written and fsync'ed: readers see the old
 *   content or the new, never half a file. An existing file keeps its
 *   permission bits (and its owner and group where the process may set
 *   them); a new file gets 0666 minus the umask, as the shell would give.
 *   An existing file we may not write to is refused (EACCES), like a shell
 *   redirection, rather than silently replaced.
 * - A symbolic link is written THROUGH (like cp and shell redirection): the
 *   file it points to is replaced as above and the link stays a link. A
 *   dangling link is refused (as cp refuses to write through one), so a
 *   link never creates a file at a place the user did not name.
 * - Anything that is not a regular file (a character or block device, a
 *   FIFO, a terminal, /dev/null) is opened and written straight, never
 *   unlinked, renamed over or truncated by rename. A directory is refused.
 * - Write errors carry the reason (strerror), e.g. "No space left on device".
 * - Temporary files are registered; gx_out_install_signal_cleanup() makes
 *   SIGINT, SIGTERM and SIGHUP remove them (async-signal-safe unlink only)
 *   before the process dies by that signal (exit status 128 + signal: 130
 *   for SIGINT, 143 for SIGTERM).
 *
 * The stream can seek (a regular file's header patched at the end); on a
 * FIFO or terminal a seek fails as it would on the device.
 *
 * Errors: GX_EIO with "PATH: cannot write: REASON" (or a more precise
 * sentence), GX_ENOMEM. Library code: never prints or exits. Not
 * thread-safe for concurrent opens (the registry is a small fixed table). */
#ifndef GPUXRAY_OUTFILE_H
#define GPUXRAY_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "gpuxray/error.h"

#define GX_OUT_MAX_OPEN 8 /* outputs open at the same time (registry slots) */

typedef struct gx_out_state gx_out_state; /* private (src/util/outfile.c) */
typedef struct gx_out {
    FILE *f;          /* write through this; NULL when not open */
    gx_out_state *st; /* private */
} gx_out;

/* Non-destructive check that path can be written (nothing is created):
 * the directory exists and is writable, path is not a directory or a
 * dangling link, an existing file is writable. GX_OK or GX_EIO. */
int gx_out_check(const char *path, gx_msg *msg);
/* Open path for writing by the rules above. On GX_OK o->f is ready. */
int gx_out_open(gx_out *o, const char *path, gx_msg *msg);
/* Finish: flush, fsync, rename into place (regular files), close. Any
 * write error since open is reported with its reason. o is closed after
 * the call either way; on failure the destination is untouched (regular
 * files) and the temporary file removed. */
int gx_out_commit(gx_out *o, gx_msg *msg);
/* The errno of the first failed write since open (0 = none so far). */
int gx_out_failed(const gx_out *o);
/* Give up: close and remove the temporary file (destination untouched). */
void gx_out_abort(gx_out *o);
/* gx_out_open + one write + gx_out_commit. */
int gx_out_write_file(const char *path, const void *data, size_t len, gx_msg *msg);
/* For main(): remove registered temporary files on SIGINT, SIGTERM and
 * SIGHUP, then die by the signal. A signal ignored at start stays ignored. */
void gx_out_install_signal_cleanup(void);

#endif
