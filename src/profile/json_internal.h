/* json_internal.h - shared pieces of the profile's JSON reader and writer
 * (profile_json.c: the table walk, files; json_custom.c: the fields with
 * their own handler, i.e. index functions and the confidence map).
 *
 * Notes:
 * - A reader error reads "SOURCE: FIELD: rule" (GX_ECONFIG); FIELD is the
 *   full name, with array indices ("l2.hash.slice.masks[3]"). */
#ifndef GX_PROFILE_JSON_INTERNAL_H
#define GX_PROFILE_JSON_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#include "fields.h"

typedef struct gx_pctx {
    const char *src;
    gx_msg *msg;
} gx_pctx;

/* "SOURCE: FIELD: rule" with a printf rule. */
int gx_jbad(gx_pctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A JSON value for a message: the number itself ("-4", "1.5"), a short
 * string in quotes, else its kind ("an object"). */
void gx_jdescribe(const json_t *v, char *buf, size_t cap);
/* Value of key, NULL when missing or null. */
json_t *gx_jval(const json_t *obj, const char *key);
/* A non-negative integer: a JSON integer, a real with an integral value up
 * to 2^53 (exact), or (strings_ok) a decimal string up to 2^64-1. 0 or -1. */
int gx_jas_u64(const json_t *v, int strings_ok, uint64_t *out);
/* u64 as JSON: an integer up to 2^63-1, else a decimal string. */
json_t *gx_ju64(uint64_t v);
/* A double as JSON: an integer when integral and below 1e15, else a real;
 * null for NaN and infinities (never written). */
json_t *gx_jnum(double v);
/* An object member, created (at the end) when missing or not an object. */
json_t *gx_jsub(json_t *parent, const char *key);
/* Set key to v; v == NULL means absent: null when `always` or the key exists. */
void gx_jput(json_t *obj, const char *key, json_t *v, int always);

/* Custom handlers (json_custom.c). obj: the JSON object holding the field;
 * name: its full name. */
int gx_jread_custom(gx_pctx *c, const gx_field *f, const json_t *obj, const char *name,
                    void *base);
void gx_jwrite_custom(const gx_field *f, json_t *obj, const void *base);

#endif
