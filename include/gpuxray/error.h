/* error.h - error codes of the whole library and a message buffer.
 *
 * Notes: library code returns these int codes and never exits or prints;
 * only the CLI prints and exits. The code list is one X-macro so the enum,
 * the names and the descriptions cannot drift apart. A gx_msg carries the
 * detailed, human-readable reason (file, line, field, rule) next to a code. */
#ifndef GPUXRAY_ERROR_H
#define GPUXRAY_ERROR_H

#include <stddef.h>

#define GX_ERRNO_MAP(X)                                                   \
    X(OK, 0, "success")                                                   \
    X(EINVAL, -1, "invalid argument")                                     \
    X(ENOMEM, -2, "out of memory")                                        \
    X(EIO, -3, "input/output error")                                      \
    X(EPARSE, -4, "malformed input")                                      \
    X(ECONFIG, -5, "invalid configuration")                               \
    X(ENODEV, -6, "target unavailable")                                   \
    X(ETIMEOUT, -7, "timed out")                                          \
    X(EUNSUPPORTED, -8, "not supported")                                  \
    X(ERANGE, -9, "value out of range")                                   \
    X(EUNSURE, -10, "measurement inconclusive")                           \
    X(EDEVICE, -11, "device error")

enum gx_error {
#define GX_ERR_ENUM(name, value, text) GX_##name = value,
    GX_ERRNO_MAP(GX_ERR_ENUM)
#undef GX_ERR_ENUM
};

/* Short description of a code ("invalid argument"); never NULL. */
const char *gx_strerror(int code);
/* Symbolic name of a code ("GX_EINVAL"); never NULL. */
const char *gx_errname(int code);

/* A detailed message that travels with an error code. */
#define GX_MSG_MAX 1024
typedef struct gx_msg {
    char text[GX_MSG_MAX];
} gx_msg;

/* printf-style; msg may be NULL (then nothing is written). Returns code so
 * callers can write `return gx_fail(msg, GX_EINVAL, "...")`. */
int gx_fail(gx_msg *msg, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gx_msg_clear(gx_msg *msg);

#endif
