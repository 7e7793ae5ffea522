/* gen_pages.h - internal to src/trace: the `pages` pattern of the
 * generator (gen_pages.c), called from gen.c. */
#ifndef GX_GEN_PAGES_H
#define GX_GEN_PAGES_H

#include "gpuxray/trace.h"

int gx_gen_pages_check(const gx_gen_cfg *c, gx_msg *msg);
/* Records the pattern writes: its MAP records, then one access per mapped page. */
uint64_t gx_gen_pages_records(const gx_gen_cfg *c);
/* The next record (g->i < g->n): a MAP record or an access (sm and op are
 * filled by the caller). */
void gx_gen_pages_next(gx_gen *g, gx_trace_rec *r);

#endif
