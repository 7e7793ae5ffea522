/* policy_score.c - the policy stage's simulation of the candidates: each
 * registry policy replayed host-side (policy.h) over the measured programs,
 * as particles (initial histories) for a deterministic one and Monte Carlo
 * for a randomized one, scored by likelihood, agreement and hit-rate
 * chi-square; and the next program chosen where the best candidates
 * disagree most. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy_internal.h"

/* ---- simulation ------------------------------------------------------------------ */

/* A particle: a fresh simulated set after a random history over U and
 * stale lines (particle 0 of a deterministic candidate: empty). */
static int particle_new(const char *spec, const pol_data *d, int k, int randomized,
                        gx_policy_set **out, gx_msg *msg)
{
    uint64_t seed = randomized ? 7919u * (uint64_t)k + 1 : 1;
    int rc = gx_policy_set_new(spec, d->w, seed, out, msg);
    if (rc != GX_OK || k == 0)
        return rc;
    gx_rng r;
    gx_rng_seed(&r, gx_mix64(0x5eedu + (uint64_t)k));
    if (k % 4 == 3) {
        /* what the earlier stages leave: the eviction set and its target
         * walked in shuffled rounds, some B lines (probing) in between */
        uint64_t a[GX_EVX_MAX_WAYS + 1];
        uint32_t rounds = 4u + (uint32_t)gx_rng_below(&r, 24);
        for (uint32_t q = 0; q < rounds; q++) {
            for (uint32_t i = 0; i <= d->w; i++)
                a[i] = i;
            gx_rng_shuffle_u64(&r, a, d->w + 1);
            for (uint32_t i = 0; i <= d->w; i++) {
                gx_policy_set_access(*out, a[i]);
                if (gx_rng_uniform(&r) < 0.1)
                    gx_policy_set_access(*out, d->w + 1 + gx_rng_below(&r, d->w));
            }
        }
        return GX_OK;
    }
    /* histories of 10W .. 60W accesses: short ones alone miss some states */
    uint32_t len = (10u + 10u * (uint32_t)(k % 6)) * d->w;
    for (uint32_t i = 0; i < len; i++) {
        uint64_t x = gx_rng_below(&r, 2 * (uint64_t)d->nu);
        gx_policy_set_access(*out, x < d->nu ? x : POL_STALE_ID + x);
    }
    return GX_OK;
}

/* Run a program on a simulated set; hits (optional) per timed step. */
static void sim_prog(gx_policy_set *s, const pol_prog *pg, uint8_t *hits)
{
    size_t t = 0;
    for (size_t i = 0; i < pg->n; i++) {
        int h = gx_policy_set_access(s, pg->id[i]);
        if (pg->timed[i] && hits)
            hits[t++] = (uint8_t)h;
    }
}

static double clamp_p(double p)
{
    return p < POL_EPS ? POL_EPS : p > 1 - POL_EPS ? 1 - POL_EPS : p;
}

/* Deterministic candidate: the particle (initial history) that agrees with
 * the most observed accesses; LL of a noisy observation of its prediction. */
int pol_score_det(const pol_data *d, pol_score *sc, int particles, uint8_t *hits, gx_msg *msg)
{
    size_t best = 0, n = 0;
    int best_k = 0;
    for (int k = 0; k < particles; k++) {
        gx_policy_set *s = NULL;
        int rc = particle_new(sc->spec, d, k, 0, &s, msg);
        if (rc != GX_OK)
            return rc;
        size_t a = 0, m = 0;
        for (int r = 0; r < d->n_runs; r++) {
            const pol_prog *pg = &d->prog[d->run[r].prog];
            sim_prog(s, pg, hits);
            for (size_t t = 0; t < pg->n_timed; t++) {
                int o = d->run[r].obs[t];
                if (o < 0)
                    continue;
                m++;
                a += o == hits[t];
            }
        }
        gx_policy_set_free(s);
        if (k == 0 || a > best) {
            best = a;
            best_k = k;
        }
        n = m;
    }
    sc->best_particle = best_k;
    sc->particles = particles;
    sc->agree = n ? (double)best / (double)n : 0;
    sc->coverage = 1;
    sc->ll = (double)best * log(1 - POL_EPS) + (double)(n - best) * log(POL_EPS);
    return GX_OK;
}

/* Randomized candidate: Monte Carlo hit probability per access (for the
 * likelihood) and per-particle hit rate of every program (the statistic
 * that decides: it does not depend on the unknown starting state). */
static int score_rnd(const pol_data *d, pol_score *sc, uint16_t *cnt, uint8_t *hits,
                     gx_msg *msg)
{
    const int particles = POL_PARTICLES_RND;
    double phr[POL_PARTICLES_RND][POL_MAX_PROGS];
    memset(cnt, 0, d->total_timed * sizeof *cnt);
    memset(phr, 0, sizeof phr);
    for (int k = 0; k < particles; k++) {
        gx_policy_set *s = NULL;
        int rc = particle_new(sc->spec, d, k, 1, &s, msg);
        if (rc != GX_OK)
            return rc;
        size_t base = 0;
        for (int r = 0; r < d->n_runs; r++) {
            int p = d->run[r].prog;
            const pol_prog *pg = &d->prog[p];
            sim_prog(s, pg, hits);
            size_t h = 0;
            for (size_t t = 0; t < pg->n_timed; t++) {
                cnt[base + t] = (uint16_t)(cnt[base + t] + hits[t]);
                h += hits[t];
            }
            phr[k][p] += pg->n_timed && pg->runs ? (double)h / (double)pg->n_timed / pg->runs : 0;
            base += pg->n_timed;
        }
        gx_policy_set_free(s);
    }
    double ll = 0, ea = 0;
    size_t nobs = 0;
    double ho[POL_MAX_PROGS] = {0}, hn[POL_MAX_PROGS] = {0};
    size_t base = 0;
    for (int r = 0; r < d->n_runs; r++) {
        int p = d->run[r].prog;
        const pol_prog *pg = &d->prog[p];
        for (size_t t = 0; t < pg->n_timed; t++) {
            int o = d->run[r].obs[t];
            double q = (double)cnt[base + t] / particles;
            if (o < 0)
                continue;
            nobs++;
            ho[p] += o;
            hn[p] += 1;
            double c = clamp_p(q);
            ll += log(o ? c : 1 - c);
            ea += o ? q : 1 - q;
        }
        base += pg->n_timed;
    }
    sc->ll = ll;
    sc->agree = nobs ? ea / (double)nobs : 0;
    sc->particles = particles;
    sc->chi2 = 0;
    for (int p = 0; p < d->n_progs; p++) {
        double v[POL_PARTICLES_RND];
        for (int k = 0; k < particles; k++)
            v[k] = phr[k][p];
        sc->hr_obs[p] = hn[p] > 0 ? ho[p] / hn[p] : NAN;
        sc->hr_sim[p] = gx_mean(v, (size_t)particles);
        sc->hr_sd[p] = gx_stddev(v, (size_t)particles);
        if (isfinite(sc->hr_obs[p])) {
            double z = (sc->hr_obs[p] - sc->hr_sim[p]) / (sc->hr_sd[p] + 0.005);
            sc->chi2 += z * z;
        }
    }
    return GX_OK;
}

int pol_score_candidate(const pol_data *d, pol_score *sc, uint16_t *cnt, uint8_t *det,
                        uint8_t *hits, gx_msg *msg)
{
    (void)det;
    if (sc->randomized)
        return score_rnd(d, sc, cnt, hits, msg);
    return pol_score_det(d, sc, POL_PARTICLES_DET, hits, msg);
}

/* ---- discrimination ---------------------------------------------------------------- */

/* Predicted hit probability per timed step of program `cand`, run after
 * everything measured so far: the best particle of a deterministic
 * candidate, Monte Carlo for a randomized one. */
static int predict(const pol_data *d, const pol_prog *cand, const pol_score *sc, uint16_t *cnt,
                   int *parts, uint8_t *hits, gx_msg *msg)
{
    *parts = sc->randomized ? 2 * POL_PARTICLES : 1;
    memset(cnt, 0, cand->n_timed * sizeof *cnt);
    for (int j = 0; j < *parts; j++) {
        int k = sc->randomized ? j : sc->best_particle;
        gx_policy_set *s = NULL;
        int rc = particle_new(sc->spec, d, k, sc->randomized, &s, msg);
        if (rc != GX_OK)
            return rc;
        for (int r = 0; r < d->n_runs; r++)
            sim_prog(s, &d->prog[d->run[r].prog], hits);
        sim_prog(s, cand, hits);
        for (size_t t = 0; t < cand->n_timed; t++)
            cnt[t] = (uint16_t)(cnt[t] + hits[t]);
        gx_policy_set_free(s);
    }
    return GX_OK;
}

/* How well program `cand` separates candidates a and b: expected number of
 * accesses where both predict confidently and differently. */
int pol_discrimination(const pol_data *d, const pol_prog *cand, const pol_score *a,
                       const pol_score *b, uint8_t *hits, size_t *out, gx_msg *msg)
{
    size_t n = cand->n_timed;
    uint16_t *ca = calloc(n ? n : 1, sizeof *ca), *cb = calloc(n ? n : 1, sizeof *cb);
    int pa = 1, pb = 1;
    int rc = ca && cb ? GX_OK : gx_fail(msg, GX_ENOMEM, "policy: out of memory");
    if (rc == GX_OK)
        rc = predict(d, cand, a, ca, &pa, hits, msg);
    if (rc == GX_OK)
        rc = predict(d, cand, b, cb, &pb, hits, msg);
    double sum = 0;
    for (size_t t = 0; rc == GX_OK && t < n; t++) {
        double qa = (double)ca[t] / pa, qb = (double)cb[t] / pb;
        if ((qa < 0.2 || qa > 0.8) && (qb < 0.2 || qb > 0.8))
            sum += fabs(qa - qb);
    }
    free(ca);
    free(cb);
    *out = (size_t)sum;
    return rc;
}
