/* parse.h - the one strict parser for numbers given on the command line (and
 * anywhere else a number arrives as text).
 *
 * Every function takes the NAME of what is parsed (an option such as
 * "--count", or a field) and the text, and on failure returns GX_ERANGE (a
 * well-formed number outside the range) or GX_EPARSE (not a number of that
 * kind) with a message that names it, quotes the value given and states the
 * accepted range, e.g.
 *   "--count: -5 is not a non-negative integer (0..2^64-1)"
 *   "--jobs: 0 is out of range (1..256)"
 *   "--footprint: 64XB is not a size (an integer with an optional suffix ...)"
 *
 * Accepted integers: decimal digits, or 0x / 0X and hexadecimal digits. No
 * sign, no leading or trailing blanks, no octal (a leading 0 is decimal), no
 * digit separators. A value that does not fit is an error, never clamped or
 * wrapped.
 *
 * Flags:
 *   GX_NUM_SIZE   a byte size: optional suffix K, M, G, T (also k, m, g, t),
 *                 optionally followed by "i" and/or "B": 64MiB = 64M = 64MB
 *                 = 64 * 2^20. A bare "B" is allowed (4096B).
 *   GX_NUM_COUNT  a count: optional decimal suffix k, K, M, G, T (1000^n):
 *                 20M = 20000000.
 *
 * Doubles: decimal floating point as strtod reads it (1, 0.5, 1e-3), but no
 * hexadecimal floats, no inf / nan, no blanks; the result must be finite and
 * within [lo, hi].
 *
 * Notes: library code; never prints. Thread-safe (no state). */
#ifndef GPUXRAY_PARSE_H
#define GPUXRAY_PARSE_H

#include <stdint.h>

#include "gpuxray/error.h"

#define GX_NUM_PLAIN 0u
#define GX_NUM_SIZE 1u
#define GX_NUM_COUNT 2u

/* Parse s as an unsigned integer in [lo, hi]. GX_OK and *out, or an error
 * with msg (out untouched). name may be NULL ("value"). */
int gx_parse_u64(const char *name, const char *s, uint64_t lo, uint64_t hi, unsigned flags,
                 uint64_t *out, gx_msg *msg);
int gx_parse_u32(const char *name, const char *s, uint32_t lo, uint32_t hi, unsigned flags,
                 uint32_t *out, gx_msg *msg);
/* A finite double in [lo, hi]. */
int gx_parse_double(const char *name, const char *s, double lo, double hi, double *out,
                    gx_msg *msg);

/* The range text the messages use: "2^64-1", "2^32-1" or decimal. buf must
 * hold 24 bytes. Returns buf. */
const char *gx_u64_range_text(uint64_t v, char *buf);

#endif
