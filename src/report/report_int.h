/* report_int.h - internals shared by the report module's files: the report
 * document (report.json's content, a jansson object) and its renderers.
 *
 * The document: {"format", "version", "profile": {name, kind, target,
 * created, device}, "numbers": [{parameter, value, confidence, method,
 * samples}], "model": {"ran", "note", "curve": [{footprint_bytes, cycles}]},
 * "sections": {"tlb": ..., "smem": ...} (the profile's sections when
 * present), "data": {series...}}. */
#ifndef GPUXRAY_REPORT_INT_H
#define GPUXRAY_REPORT_INT_H

#include <jansson.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"
#include "gpuxray/report.h"
#include "rbuf.h"

#define RP_DOC_VERSION 1
#define RP_HTML_MAX_BYTES (1000u * 1000u) /* the page's budget: under 1 MB */

/* The model's chase mean at each footprint (NaN where not run). */
int rp_model_curve(const gx_profile *p, const char *profile_path, const double *fp, size_t n,
                   uint64_t seed,
                   double *cycles, gx_msg *msg);
/* Build the document (caller releases). */
int rp_build_doc(const gx_profile *p, const gx_report_opts *o, json_t **doc, gx_msg *msg);
/* Render it. */
int rp_render_html(const json_t *doc, gx_rbuf *out);
int rp_render_md(const json_t *doc, gx_rbuf *out);

/* JSON access helpers: a number (NaN when absent or not a number), a
 * string ("" when absent), a member path "a.b.c". */
double rp_num(const json_t *o, const char *key);
const char *rp_str(const json_t *o, const char *key);
json_t *rp_path(const json_t *o, const char *path);

#endif
