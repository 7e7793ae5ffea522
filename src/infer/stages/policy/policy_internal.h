/* policy_internal.h - private to the policy stage (src/infer/stages/policy/):
 * the stage's limits, the measured programs and their runs (pol_data), a
 * candidate's score (pol_score) and the functions one file of the stage calls
 * in another. Uses only the target interface, through evset.h and
 * infer_util.h; simulation is host-side through policy.h. */
#ifndef GX_INFER_POLICY_INTERNAL_H
#define GX_INFER_POLICY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../../evset/evset.h"
#include "../../infer_util.h"
#include "gpuxray/policy.h"
#include "gpuxray/stats.h"

#define POL_RUNS 3
#define POL_PARTICLES 16
#define POL_PARTICLES_DET 64
#define POL_PARTICLES_MORE 512
#define POL_PARTICLES_RND 32
#define POL_RESET_ROUNDS 6
#define POL_SEGMENTS 16
#define POL_CYCLIC_ROUNDS 24
#define POL_BASE_PROGS 3
#define POL_ACTIVE 4
#define POL_STAT_PROGS 8
#define POL_ACTIVE_TRIES 24
#define POL_MAX_PROGS (POL_BASE_PROGS + POL_ACTIVE + POL_STAT_PROGS)
#define POL_RUNS_STAT 6
#define POL_MAX_RUNS ((POL_BASE_PROGS + POL_ACTIVE) * POL_RUNS + POL_STAT_PROGS * POL_RUNS_STAT)
#define POL_MAX_U (2 * GX_EVX_MAX_WAYS + 1)
#define POL_AGREE 0.99
#define POL_AGREE_CLEAN 0.995 /* below: a randomized candidate that fits may be the truth */
#define POL_EPS 0.01
#define POL_CLOSE_LL 20.0
/* a log-likelihood (or chi2) margin to the runner-up below which the choice
 * is not made with confidence: e^-6, the runner-up is 400 times less likely */
#define POL_FAIR_LL 6.0
#define POL_STALE_ID 100000u
/* Finding B: a search whose B fails verification (a line probed congruent
 * that is not) continues further down the candidates, at most this often */
#define POL_B_ATTEMPTS 3
/* Growing a pool that ran dry: each round adds as many pages as it spans
 * (at least POL_GROW_MIN_PAGES, for a same-offset pool), so two rounds
 * make 4x the pages and about 4x the congruent lines the ways stage's pool
 * held (at least the W its reduction took): a dry pool is a matter of
 * chance (the W lines left are expected where the prefix used half the
 * pool), not of the chip, and doubling makes running dry again unlikely */
#define POL_GROW_ROUNDS 2
#define POL_GROW_MIN_PAGES 16u

typedef struct pol_prog {
    size_t n, cap;
    uint32_t *id;   /* index into U, or a stale id (never for measured programs) */
    uint8_t *timed;
    size_t n_timed;
    int runs; /* times it ran */
} pol_prog;

typedef struct pol_run {
    int prog;
    int8_t *obs; /* per timed step: 1 hit, 0 miss, -1 unsure */
} pol_run;

typedef struct pol_data {
    uint32_t w, nu;
    uint64_t u[POL_MAX_U];
    double ref[POL_MAX_U];
    uint32_t border[GX_EVX_MAX_WAYS];
    int n_progs, n_runs;
    pol_prog prog[POL_MAX_PROGS];
    pol_run run[POL_MAX_RUNS];
    size_t total_timed; /* over all runs */
} pol_data;

typedef struct pol_score {
    const char *spec;
    int randomized;
    double ll;        /* log-likelihood of every observed access */
    double agree;     /* on state-independent predictions */
    double coverage;  /* share of accesses with a state-independent prediction */
    double hr_obs[POL_MAX_PROGS], hr_sim[POL_MAX_PROGS], hr_sd[POL_MAX_PROGS];
    double chi2;       /* randomized: hit rates of the programs vs Monte Carlo */
    int best_particle; /* deterministic: the initial history that fits best */
    int particles;
} pol_score;

/* ---- policy_measure.c ---- */
void pol_free_data(pol_data *d);
int pol_gather_lines(gx_infer *ctx, gx_evx *ev, pol_data *d, int *used);
int pol_base_programs(gx_infer *ctx, pol_data *d);
int pol_random_program(pol_prog *p, const pol_data *d, gx_rng *r);
int pol_stat_program(pol_prog *p, const pol_data *d, gx_rng *r, int kind);
int pol_run_program(gx_infer *ctx, gx_evx *ev, pol_data *d, int prog, int runs);

/* ---- policy_score.c ---- */
int pol_score_det(const pol_data *d, pol_score *sc, int particles, uint8_t *hits, gx_msg *msg);
int pol_score_candidate(const pol_data *d, pol_score *sc, uint16_t *cnt, uint8_t *det,
                        uint8_t *hits, gx_msg *msg);
int pol_discrimination(const pol_data *d, const pol_prog *cand, const pol_score *a,
                       const pol_score *b, uint8_t *hits, size_t *out, gx_msg *msg);

#endif
