/* policy_stage.c - discovery stage 7: the replacement policy, by comparing
 * measured hits and misses on congruent lines with every candidate policy
 * of the model's registry simulated on the same access sequences
 * (nanoBench's method), with the unknown starting state handled by
 * particles and close candidates told apart by sequences chosen for it.
 *
 * Method:
 * - Lines: U = the ways stage's target + its minimal eviction set (W + 1
 *   congruent lines, "A") plus W more congruent lines ("B") found by probing
 *   the set's pool (the candidates it was reduced from: lines predicted in
 *   its target's slice class, or the same offset in every page) against the
 *   set: 2W + 1 lines of one cache set, ids 0..2W. A pool that runs dry
 *   grows by more pages of the target's slice class (gx_ways_grow_pool);
 *   the other kept sets and their pools come last.
 * - A program = a reset (B POL_RESET_ROUNDS times in a fixed order, then A
 *   in order: pushes out what was there and brings the set close to a known
 *   state) followed by timed accesses to U. Every program runs POL_RUNS
 *   times; every access after the reset is timed and classified hit/miss
 *   against the line's hit latency.
 * - Programs: (1) random segments over random subsets of W+1 .. 2W+1 lines
 *   (many misses, many decisions), (2) a cyclic walk over A (W + 1 lines),
 *   (3) a round-robin walk over exactly W lines (the seed article's figure),
 *   then up to POL_ACTIVE programs chosen among random ones to maximise the
 *   disagreement of the candidates still close to the best.
 * - Scoring: a set cannot be flushed, so the state before the first run is
 *   unknown. Each candidate is simulated from POL_PARTICLES random
 *   histories, through every run in the order they ran (a randomized policy
 *   with its own seed per particle too). Per timed access, p = fraction of
 *   particles predicting a hit; log-likelihood sum(log p or 1-p, clamped),
 *   and "agreement": over the accesses where all particles agree (the
 *   prediction does not depend on the unknown state), the share that
 *   matches the observation.
 * - Answer: the most likely candidate. A deterministic one must agree on at
 *   least 99% of its state-independent predictions; a randomized one must
 *   match the observed hit rates of every program. Otherwise "unknown" (left
 *   out of the profile). Confidence from the likelihood margin over the
 *   runner-up; candidates that predict every access identically (e.g. lru
 *   and plru for 2 ways) cannot be told apart: the first in registry order
 *   is reported with low confidence.
 * - plru-rand:P: P is also estimated on a grid (a report row).
 *
 * Notes: needs ctx->ways.evsets (with their pools) from the ways stage in the
 * current arena; growing a pool needs the slices stage's predictor. All
 * simulation is host-side through policy.h (gx_policy_set_*).
 *
 * Files (src/infer/stages/policy/): policy_measure.c (lines of U, programs,
 * runs), policy_score.c (simulated candidates, discrimination),
 * policy_stage.c (this file: ranking, the decision, the stage);
 * policy_internal.h what they share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_internal.h"

/* ---- decision --------------------------------------------------------------------- */

/* Best two deterministic candidates (by likelihood; ties keep registry
 * order) and best two randomized ones (by hit-rate chi-square). */
static void rank(const pol_score *sc, size_t n, int *best, int *second, int *rbest, int *rsecond)
{
    *best = *second = *rbest = *rsecond = -1;
    for (size_t i = 0; i < n; i++) {
        int k = (int)i;
        if (!sc[i].randomized) {
            if (*best < 0 || sc[i].ll > sc[*best].ll) {
                *second = *best;
                *best = k;
            } else if (*second < 0 || sc[i].ll > sc[*second].ll) {
                *second = k;
            }
        } else {
            if (*rbest < 0 || sc[i].chi2 < sc[*rbest].chi2) {
                *rsecond = *rbest;
                *rbest = k;
            } else if (*rsecond < 0 || sc[i].chi2 < sc[*rsecond].chi2) {
                *rsecond = k;
            }
        }
    }
}

/* Hit rates within reach of the Monte Carlo spread on every program. */
static int plausible_random(const pol_data *d, const pol_score *sc)
{
    return sc->chi2 <= 9.0 * d->n_progs;
}

/* Observed hit rate of program p (after its first round for program 3). */
static double observed_hr(const pol_data *d, int p, size_t skip)
{
    size_t h = 0, n = 0;
    for (int r = 0; r < d->n_runs; r++) {
        if (d->run[r].prog != p)
            continue;
        for (size_t t = skip; t < d->prog[p].n_timed; t++)
            if (d->run[r].obs[t] >= 0) {
                n++;
                h += d->run[r].obs[t] == 1;
            }
    }
    return n ? (double)h / (double)n : NAN;
}

/* The real parameter of pol's family (the registry's real_grid): the grid
 * point whose hit rates fit best. */
static int estimate_real(const pol_data *d, const gx_policy *pol, uint16_t *cnt, uint8_t *det,
                         uint8_t *hits, double *best_p, double *best_chi2, gx_msg *msg)
{
    const double *grid = pol->ops->real_grid;
    double best = INFINITY;
    *best_p = NAN;
    for (size_t g = 0; g < pol->ops->n_real_grid; g++) {
        gx_policy at;
        int rc = gx_policy_with_real(pol, grid[g], &at, msg);
        if (rc != GX_OK)
            return rc;
        pol_score sc = {.spec = at.spec, .randomized = 1};
        rc = pol_score_candidate(d, &sc, cnt, det, hits, msg);
        if (rc != GX_OK)
            return rc;
        if (sc.chi2 < best) {
            best = sc.chi2;
            *best_p = grid[g];
        }
    }
    *best_chi2 = best;
    return GX_OK;
}

static void report_policy(gx_infer *ctx, const pol_data *d, const pol_score *sc, int best,
                          int second, int chosen, double conf, double margin, double p_est,
                          const char *real_name, int active)
{
    char v[128], m[128];
    snprintf(v, sizeof v, "%s", chosen >= 0 ? sc[chosen].spec : "unknown");
    if (best >= 0 && sc[best].randomized)
        snprintf(m, sizeof m, "%s: hit rates chi2 %.1f, runner-up %s (+%.0f), %d+%d sequences",
                 sc[best].spec, sc[best].chi2, second >= 0 ? sc[second].spec : "-", margin,
                 POL_BASE_PROGS, active);
    else
        snprintf(m, sizeof m, "%s agrees %.2f%%, runner-up %s (dLL %.0f), %d+%d sequences",
                 best >= 0 ? sc[best].spec : "-", best >= 0 ? 100 * sc[best].agree : 0,
                 second >= 0 ? sc[second].spec : "-", margin, POL_BASE_PROGS, active);
    infer_report_row(ctx, "l2.policy", v, m, conf, chosen >= 0 && conf >= 0.9);
    if (isfinite(p_est) && real_name && chosen >= 0) {
        char fam[48], row[48];
        snprintf(fam, sizeof fam, "%s", sc[chosen].spec);
        fam[strcspn(fam, ":")] = '\0';
        snprintf(v, sizeof v, "%g", p_est);
        snprintf(m, sizeof m, "%s:%s, best hit-rate fit on the registry's grid", fam, real_name);
        snprintf(row, sizeof row, "policy parameter %s", real_name);
        infer_report_row(ctx, row, v, m, NAN, 0);
    }
    double rr = observed_hr(d, 2, d->w), cyc = observed_hr(d, 1, d->w + 1);
    snprintf(v, sizeof v, "%.1f%% (W+1 lines: %.1f%%)", 100 * rr, 100 * cyc);
    snprintf(m, sizeof m, "round-robin walk over exactly W=%u congruent lines, after round 1",
             d->w);
    infer_report_row(ctx, "round-robin hit rate", v, m, NAN, 0);
}

typedef struct pol_work {
    uint16_t *cnt;
    uint8_t *det;
    uint8_t *hits;
    size_t cap;
} pol_work;

static int work_fit(pol_work *w, size_t n, gx_msg *msg)
{
    if (n <= w->cap)
        return GX_OK;
    free(w->cnt);
    free(w->det);
    free(w->hits);
    w->cnt = malloc(n * sizeof *w->cnt);
    w->det = malloc(n);
    w->hits = malloc(n);
    w->cap = w->cnt && w->det && w->hits ? n : 0;
    return w->cap ? GX_OK : gx_fail(msg, GX_ENOMEM, "policy: out of memory");
}

static int score_all(const pol_data *d, pol_score *sc, size_t nc, pol_work *w, gx_msg *msg)
{
    size_t maxprog = 0;
    for (int p = 0; p < d->n_progs; p++)
        if (d->prog[p].n_timed > maxprog)
            maxprog = d->prog[p].n_timed;
    int rc = work_fit(w, d->total_timed > maxprog ? d->total_timed : maxprog, msg);
    for (size_t i = 0; rc == GX_OK && i < nc; i++)
        rc = pol_score_candidate(d, &sc[i], w->cnt, w->det, w->hits, msg);
    /* A deterministic leader that does not quite fit may only lack the right
     * starting state (a pruned PLRU tree has ~100 after the reset): search
     * many more initial histories for the best two. */
    for (int round = 0; rc == GX_OK && round < 3; round++) {
        int b = -1;
        int want = round < 2 ? POL_PARTICLES_MORE : 4 * POL_PARTICLES_MORE;
        for (size_t i = 0; i < nc; i++)
            if (!sc[i].randomized && sc[i].particles < want && (b < 0 || sc[i].ll > sc[b].ll))
                b = (int)i;
        if (b < 0 || sc[b].agree >= 0.995 || (round == 2 && sc[b].agree < 0.9))
            break;
        rc = pol_score_det(d, &sc[b], want, w->hits, msg);
    }
    return rc;
}

/* Choose and run programs that split the best two while they are close. */
static int discriminate(gx_infer *ctx, gx_evx *ev, pol_data *d, pol_score *sc, size_t nc,
                        pol_work *w, int *active)
{
    pol_prog cand;
    memset(&cand, 0, sizeof cand);
    int rc = GX_OK;
    *active = 0;
    while (rc == GX_OK && *active < POL_ACTIVE && d->n_progs < POL_MAX_PROGS) {
        int best, second, rb, rs;
        rank(sc, nc, &best, &second, &rb, &rs);
        /* only close deterministic leaders that both nearly fit */
        if (best < 0 || second < 0 || sc[best].ll - sc[second].ll >= POL_CLOSE_LL ||
            sc[second].agree < 0.97)
            break;
        size_t best_disc = 0;
        gx_rng keep = ctx->rng;
        gx_rng pick = ctx->rng;
        for (int tr = 0; rc == GX_OK && tr < POL_ACTIVE_TRIES; tr++) {
            gx_rng before = ctx->rng;
            if ((rc = pol_random_program(&cand, d, &ctx->rng)) != GX_OK)
                break;
            if ((rc = work_fit(w, cand.n_timed, ctx->msg)) != GX_OK)
                break;
            size_t disc = 0;
            rc = pol_discrimination(d, &cand, &sc[best], &sc[second], w->hits, &disc, ctx->msg);
            if (rc == GX_OK && disc > best_disc) {
                best_disc = disc;
                pick = before;
            }
        }
        if (rc != GX_OK || best_disc < 2)
            break; /* nothing tells them apart: equivalent here */
        keep = ctx->rng;
        ctx->rng = pick; /* rebuild the chosen program */
        pol_prog *np = &d->prog[d->n_progs];
        rc = pol_random_program(np, d, &ctx->rng);
        ctx->rng = keep;
        if (rc != GX_OK)
            break;
        d->n_progs++;
        (*active)++;
        if ((rc = pol_run_program(ctx, ev, d, d->n_progs - 1, POL_RUNS)) == GX_OK)
            rc = score_all(d, sc, nc, w, ctx->msg);
    }
    free(cand.id);
    free(cand.timed);
    if (rc == GX_ENOMEM)
        rc = gx_fail(ctx->msg, rc, "policy: out of memory");
    return rc;
}

/* A randomized leader with a close runner-up: more hit-rate samples. */
static int refine_random(gx_infer *ctx, gx_evx *ev, pol_data *d, pol_score *sc, size_t nc,
                         pol_work *w, int *active)
{
    int rc = GX_OK;
    for (int i = 0; rc == GX_OK && i < POL_STAT_PROGS && d->n_progs < POL_MAX_PROGS; i++) {
        int kind = i % 4;
        int best, second, rb, rs;
        rank(sc, nc, &best, &second, &rb, &rs);
        if ((best >= 0 && sc[best].agree >= POL_AGREE) || rb < 0 || rs < 0 ||
            sc[rs].chi2 - sc[rb].chi2 >= POL_CLOSE_LL)
            break;
        if ((rc = pol_stat_program(&d->prog[d->n_progs], d, &ctx->rng, kind)) != GX_OK) {
            rc = gx_fail(ctx->msg, rc, "policy: out of memory");
            break;
        }
        d->n_progs++;
        (*active)++;
        if ((rc = pol_run_program(ctx, ev, d, d->n_progs - 1, POL_RUNS_STAT)) == GX_OK)
            rc = score_all(d, sc, nc, w, ctx->msg);
    }
    return rc;
}

/* Report data (series "policy"): every candidate's fit. Copies only. */
static void record_policy(gx_infer *ctx, const pol_data *d, const pol_score *sc, size_t nc,
                          int chosen)
{
    if (!infer_recording(ctx))
        return;
    infer_data_set(ctx, "policy", "method",
                   json_string("replay of measured hit/miss sequences over W+k congruent lines: "
                               "deterministic candidates by agreement on state-independent "
                               "predictions and log-likelihood, randomized ones by hit-rate "
                               "chi-square against Monte Carlo"));
    infer_data_set(ctx, "policy", "timed_accesses", json_integer((json_int_t)d->total_timed));
    infer_data_set(ctx, "policy", "runs", json_integer(d->n_runs));
    infer_data_set(ctx, "policy", "chosen", json_string(chosen >= 0 ? sc[chosen].spec : ""));
    for (size_t i = 0; i < nc; i++) {
        json_t *hr = json_array();
        for (int p = 0; p < d->n_progs && hr; p++)
            json_array_append_new(hr, json_pack("{s:o,s:o}", "observed",
                                                infer_json_num(sc[i].hr_obs[p]), "model",
                                                infer_json_num(sc[i].hr_sim[p])));
        infer_data_append(ctx, "policy", "candidates",
                          json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o*}", "spec", sc[i].spec,
                                    "randomized", sc[i].randomized, "agree",
                                    infer_json_num(sc[i].agree), "coverage",
                                    infer_json_num(sc[i].coverage), "log_likelihood",
                                    infer_json_num(sc[i].ll), "chi2", infer_json_num(sc[i].chi2),
                                    "hit_rates", hr));
    }
}

static int decide(gx_infer *ctx, const pol_data *d, pol_score *sc, size_t nc, pol_work *w,
                  int active)
{
    int best, second, rb, rs;
    rank(sc, nc, &best, &second, &rb, &rs);
    int chosen = -1, runner = -1;
    double conf = 0, p_est = NAN, margin = 0;
    const char *real_name = NULL; /* the chosen family's real parameter, when fitted */
    if (best >= 0 && sc[best].agree >= POL_AGREE) {
        /* deterministic: agrees with (nearly) every access. Candidates that
         * no timing can tell apart from the best (gx_policy_equivalent: R0/R2
         * mirror images, lru/plru/mru at 2 ways) do not count as runners-up:
         * the margin is to the best candidate that IS distinguishable. */
        chosen = best;
        runner = -1;
        for (size_t i = 0; i < nc; i++) {
            int k = (int)i;
            if (k == best || sc[i].randomized ||
                gx_policy_equivalent(sc[best].spec, sc[i].spec, ctx->ways.ways))
                continue;
            if (runner < 0 || sc[i].ll > sc[runner].ll)
                runner = k;
        }
        margin = runner >= 0 ? sc[best].ll - sc[runner].ll : 100;
        conf = margin >= POL_CLOSE_LL ? 0.99 : margin >= POL_FAIR_LL ? 0.9 : 0.5;
        /* a slightly random policy (plru-rand:P at few ways) looks like its
         * deterministic base with a few disagreements: when a randomized
         * candidate fits the hit rates too, do not claim the base, if the
         * base leaves a few disagreements, and a randomized candidate that
         * fits is a runner-up like the others: the confidence follows its
         * likelihood margin too (at 2 ways plru-rand:P differs from lru
         * only on the P/2 of misses whose random victim is the recent line:
         * a run may show almost none of them, and the base's agreement
         * alone cannot tell) */
        if (rb >= 0 && plausible_random(d, &sc[rb])) {
            double mr = sc[best].ll - sc[rb].ll;
            if (sc[best].agree < POL_AGREE_CLEAN || mr < POL_FAIR_LL)
                conf = fmin(conf, 0.5);
            else if (mr < POL_CLOSE_LL)
                conf = fmin(conf, 0.9);
        }
    } else if (rb >= 0 && plausible_random(d, &sc[rb])) {
        /* randomized: runs disagree with each other, hit rates decide */
        chosen = rb;
        runner = rs;
        margin = rs >= 0 ? sc[rs].chi2 - sc[rb].chi2 : 100;
        conf = margin >= POL_CLOSE_LL ? 0.95 : margin >= POL_FAIR_LL ? 0.9 : 0.5;
    } else {
        runner = second;
    }
    gx_policy pol;
    if (chosen >= 0 && sc[chosen].randomized &&
        gx_policy_from_spec(sc[chosen].spec, &pol, NULL) == GX_OK && pol.ops->n_real_grid) {
        double chi2_est = NAN;
        int rc = estimate_real(d, &pol, w->cnt, w->det, w->hits, &p_est, &chi2_est, ctx->msg);
        if (rc != GX_OK)
            return rc;
        real_name = pol.ops->real_param;
        /* the candidates hold a few values of the parameter; when another
         * fits the hit rates clearly better, the policy is this family
         * with a value the candidates do not hold: not the chosen one */
        if (isfinite(chi2_est) && fabs(p_est - pol.params.p) > 1e-9 &&
            sc[chosen].chi2 - chi2_est >= POL_CLOSE_LL)
            conf = fmin(conf, 0.5);
    }
    report_policy(ctx, d, sc, chosen >= 0 ? chosen : best, runner, chosen, conf, margin, p_est,
                  real_name, active);
    record_policy(ctx, d, sc, nc, chosen);
    if (chosen >= 0) {
        snprintf(ctx->policy.name, sizeof ctx->policy.name, "%s", sc[chosen].spec);
        if (conf >= 0.9) {
            snprintf(ctx->out->l2.policy, sizeof ctx->out->l2.policy, "%s", sc[chosen].spec);
            gx_profile_set_confidence(ctx->out, "l2.policy", conf);
        }
        infer_progress(ctx, "policy: %s (confidence %.2f)", sc[chosen].spec, conf);
    } else {
        snprintf(ctx->policy.name, sizeof ctx->policy.name, "unknown");
        infer_progress(ctx, "policy: unknown (best %s at %.2f%%)", best >= 0 ? sc[best].spec : "-",
                       best >= 0 ? 100 * sc[best].agree : 0);
    }
    return GX_OK;
}

int gx_stage_policy(gx_infer *ctx)
{
    if (!ctx->ways.ways || ctx->ways.n_evsets < 1)
        return gx_fail(ctx->msg, GX_EUNSURE, "policy: needs the ways stage's eviction sets");
    if (ctx->ways.evsets_generation != ctx->arena.generation)
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "policy: the arena was replaced after the ways stage (eviction sets lost)");
    const gx_evset *es = &ctx->ways.evsets[0];
    if (es->n != ctx->ways.ways || es->n > GX_EVX_MAX_WAYS)
        return gx_fail(ctx->msg, GX_EUNSURE, "policy: eviction set of %u lines for %u ways", es->n,
                       ctx->ways.ways);
    gx_evx ev;
    int rc = gx_evx_init(&ev, ctx, 0);
    if (rc != GX_OK)
        return rc;
    pol_data *d = calloc(1, sizeof *d);
    size_t nc = gx_policy_candidate_count();
    pol_score *sc = calloc(nc ? nc : 1, sizeof *sc);
    pol_work w;
    memset(&w, 0, sizeof w);
    int active = 0;
    if (!d || !sc) {
        rc = gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nc; i++) {
        gx_policy pol;
        sc[i].spec = gx_policy_candidate(i);
        if ((rc = gx_policy_from_spec(sc[i].spec, &pol, ctx->msg)) != GX_OK)
            goto out;
        sc[i].randomized = pol.ops->randomized;
    }
    int used = 0;
    if ((rc = pol_gather_lines(ctx, &ev, d, &used)) != GX_OK ||
        (rc = pol_base_programs(ctx, d)) != GX_OK)
        goto out;
    if (used > 0)
        infer_progress(ctx, "policy: lines congruent with set %d (set 1's pool ran dry)",
                       used + 1);
    for (int p = 0; p < POL_BASE_PROGS && rc == GX_OK; p++)
        rc = pol_run_program(ctx, &ev, d, p, POL_RUNS);
    if (rc == GX_OK)
        rc = score_all(d, sc, nc, &w, ctx->msg);
    if (rc == GX_OK)
        rc = discriminate(ctx, &ev, d, sc, nc, &w, &active);
    if (rc == GX_OK)
        rc = refine_random(ctx, &ev, d, sc, nc, &w, &active);
    if (rc == GX_OK)
        rc = decide(ctx, d, sc, nc, &w, active);
out:
    free(w.cnt);
    free(w.det);
    free(w.hits);
    if (d)
        pol_free_data(d);
    free(d);
    free(sc);
    gx_evx_free(&ev);
    return rc;
}
