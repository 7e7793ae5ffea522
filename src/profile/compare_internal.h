/* compare_internal.h - shared pieces of gx_compare (compare.c: the table
 * walk and scalar rules; compare_hash.c: index functions).
 *
 * Notes:
 * - gx_cmp_add_row returns NULL when the result is full
 *   (GX_COMPARE_MAX_ROWS); the row is then dropped. */
#ifndef GX_PROFILE_COMPARE_INTERNAL_H
#define GX_PROFILE_COMPARE_INTERNAL_H

#include "fields.h"
#include "gpuxray/compare.h"

gx_compare_row *gx_cmp_add_row(gx_compare_result *r, const char *field);
/* One index function as a partition of sampled lines; *err = GX_ENOMEM on
 * out of memory. */
void gx_cmp_hash(gx_compare_result *r, const char *field, const gx_profile *t,
                 const gx_profile *f, int is_set, const gx_compare_opts *o, int *err);

#endif
