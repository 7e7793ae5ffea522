/* compare.h - field-by-field comparison of a found profile with the truth
 * (`gpuxray compare`, the holdout check of issue 3).
 *
 * Notes:
 * - Verdict per field: match, mismatch, or missing (absent in found). Fields
 *   absent in the truth are skipped (no row).
 * - Latencies match within a relative tolerance; levels_from_one_sm by
 *   count, capacity (relative) and latency (relative); a randomized
 *   policy's probability within an absolute tolerance. Every tolerance used
 *   is printed in the row.
 * - Hash functions are compared as PARTITIONS of line addresses over the
 *   observable bits (found's observable_bits): random lines whose other bits
 *   are held at a few fixed "high parts" are classified by both functions;
 *   the labelings must agree up to a bijective relabelling within each high
 *   part (the set hash: within each truth slice too). When the truth uses
 *   bits outside that range and the found function is non-linear (table or
 *   modulo), a per-part XOR offset of found's bits is searched (the unseen
 *   bits act as such an offset). */
#ifndef GPUXRAY_COMPARE_H
#define GPUXRAY_COMPARE_H

#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef enum gx_verdict {
    GX_VERDICT_MATCH = 0,
    GX_VERDICT_MISMATCH = 1,
    GX_VERDICT_MISSING = 2
} gx_verdict;

typedef struct gx_compare_opts {
    double latency_rel_tol;        /* default 0.05 */
    double level_capacity_rel_tol; /* default 0.125 */
    double level_latency_rel_tol;  /* default 0.05 */
    double policy_param_abs_tol;   /* default 0.03 */
    uint32_t hash_samples;         /* lines per high part, default 8192 (raised for sets) */
    uint32_t hash_high_parts;      /* default 4 */
    uint64_t seed;                 /* sampling seed, default 1 */
} gx_compare_opts;

#define GX_COMPARE_MAX_ROWS 96 /* l2 (16) and a full tlb section (about 60) */

typedef struct gx_compare_row {
    char field[48];     /* e.g. "l2.ways", "l2.hash.slice" (the confidence key) */
    char truth[160];
    char found[160];
    gx_verdict verdict;
    char tolerance[96]; /* "" when exact; else the rule used */
    double disagreement; /* hashes: fraction of sampled lines that disagree; else NaN */
} gx_compare_row;

typedef struct gx_compare_result {
    int n_rows;
    gx_compare_row rows[GX_COMPARE_MAX_ROWS];
    int n_match, n_mismatch, n_missing;
} gx_compare_result;

void gx_compare_opts_default(gx_compare_opts *o);
/* opts may be NULL (defaults). Returns GX_OK (the verdicts are in result)
 * or an error code for bad arguments / out of memory. */
int gx_compare(const gx_profile *truth, const gx_profile *found, const gx_compare_opts *opts,
               gx_compare_result *result, gx_msg *msg);
const char *gx_verdict_name(gx_verdict v);
/* The row of a field, NULL when absent. */
const gx_compare_row *gx_compare_find(const gx_compare_result *r, const char *field);

#endif
