/* policy.h - replacement policies: each a small module over ONE set's state,
 * registered by family name in one table (src/model/policies/registry.c).
 *
 * Notes:
 * - A spec string selects a policy: "lru", "plru", "srrip-hp", "plru-rand:0.05",
 *   "qlru:H11_M1_R0_U0" ... gx_policy_from_spec() parses it.
 * - The cache fills invalid ways itself (lowest index first) and calls
 *   on_fill; victim() is only called on a full set.
 * - Discovery uses gx_policy_candidates() as its list of candidate policies:
 *   the candidates for inference ARE the model's policies. */
#ifndef GPUXRAY_POLICY_H
#define GPUXRAY_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/rng.h"

#define GX_POLICY_MAX_WAYS 64

typedef struct gx_policy_params {
    double p;      /* a probability (plru-rand:P) */
    int32_t i[8];  /* integer knobs (QLRU H/M/R/U, SRRIP bits ...) */
} gx_policy_params;

typedef struct gx_policy_ops {
    const char *family; /* registry key, e.g. "lru" */
    const char *help;   /* one line: what it models and its parameter syntax */
    /* Parse the text after "family:" (args may be NULL). */
    int (*parse)(const char *args, gx_policy_params *p, gx_msg *msg);
    size_t (*state_bytes)(uint32_t ways, const gx_policy_params *p);
    void (*init)(void *st, uint32_t ways, const gx_policy_params *p);
    void (*on_hit)(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p);
    void (*on_fill)(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p);
    /* Way to evict from a full set. rng is used by randomized policies. */
    uint32_t (*victim)(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng);
    /* Optional (may be NULL): a line left the set without a replacement. */
    void (*on_invalidate)(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p);
    int randomized; /* 1 when victim() uses the rng */
    /* Optional (may be NULL: the spec is the family name alone): write the
     * canonical argument text (after "family:") for p into buf. Added by the
     * policy helper so canonical specs round-trip. */
    int (*format_args)(const gx_policy_params *p, char *buf, size_t n);
    /* Optional (NULL: none): the family's real parameter, params.p, by name
     * (e.g. "P"), and the values of it discovery fits on (real_grid,
     * n_real_grid, ascending). */
    const char *real_param;
    const double *real_grid;
    size_t n_real_grid;
} gx_policy_ops;

/* Notes on the ops contract (policy helper):
 * - state_bytes() is 0 or a multiple of 8 and at most 64 for 64 ways; the
 *   state must be 8-byte aligned (an array of per-set states from an aligned
 *   base at a stride of state_bytes() is).
 * - victim() may change the state (NRU resets its bits, SRRIP/QLRU-UMO age
 *   the set); call it only when the returned way is about to be refilled, and
 *   follow it with on_fill(that way).
 * - ways in 1..GX_POLICY_MAX_WAYS for every family. */

typedef struct gx_policy {
    const gx_policy_ops *ops;
    gx_policy_params params;
    char spec[64]; /* canonical spec string */
} gx_policy;

/* Parse a spec ("plru-rand:0.05"); the message names the spec on error. */
int gx_policy_from_spec(const char *spec, gx_policy *out, gx_msg *msg);

/* The policy of family base->ops with its real parameter set to value
 * (canonical spec); GX_EINVAL when the family has none or value is out of
 * its range (the message names it). */
int gx_policy_with_real(const gx_policy *base, double value, gx_policy *out, gx_msg *msg);

/* Registered families, in registry order. */
size_t gx_policy_family_count(void);
const gx_policy_ops *gx_policy_family(size_t i);

/* Concrete candidate specs for inference (every family, with the parameter
 * variants worth telling apart, e.g. several QLRU variants). */
size_t gx_policy_candidate_count(void);
const char *gx_policy_candidate(size_t i);

/* 1 when two policy specs cannot be told apart by timing a set of `ways`
 * ways whose initial arrangement is unknown (as on real hardware): the same
 * canonical spec; QLRU variants that differ only in R0 / R2 (mirror images:
 * leftmost vs rightmost victim among the oldest); lru, plru and mru at 2
 * ways or fewer (all keep exactly the most recent line); deterministic
 * policies with identical outcomes on long random sequences at 4 ways or
 * fewer; any two policies at 1 way. 0 otherwise, or when a spec does not parse. */
int gx_policy_equivalent(const char *a, const char *b, uint32_t ways);

/* Convenience: a single simulated set (for tests and for policy inference).
 * Holds line ids (any uint64), ways <= GX_POLICY_MAX_WAYS. */
typedef struct gx_policy_set gx_policy_set;
int gx_policy_set_new(const char *spec, uint32_t ways, uint64_t seed,
                      gx_policy_set **out, gx_msg *msg);
/* Access a line id; returns 1 on hit, 0 on miss (which fills it). */
int gx_policy_set_access(gx_policy_set *s, uint64_t line);
/* Remove one line (on_invalidate); returns 1 when it was present. Added by
 * the policy helper. */
int gx_policy_set_invalidate(gx_policy_set *s, uint64_t line);
/* Remove every line and reset the policy state. */
void gx_policy_set_reset(gx_policy_set *s);
void gx_policy_set_free(gx_policy_set *s);

#endif
