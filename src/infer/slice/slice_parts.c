/* slice_parts.c - partitions of a uniform L2 from the classes' fingerprint
 * centers: equal class groups, SM sides in contiguous runs, and a shuffle
 * test for any structure at all (see slice_parts.h).
 *
 * Notes: k-means with k-means++ seeding and a fixed number of restarts from
 * a seeded rng (deterministic); at most 1024 classes x 32 slots, so the
 * whole test is a few milliseconds. */
#include "slice_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/rng.h"
#include "gpuxray/stats.h"

#define SP_RESTARTS 8
#define SP_NULL_RESTARTS 4
#define SP_SHUFFLES 12
#define SP_ITERS 100
#define SP_MAX_P 4
#define SP_STRUCT_MIN 8 /* classes for the shuffle test (fewer: too weak to tell) */

static double dist2(const double *a, const double *b, uint32_t S)
{
    double d = 0;
    for (uint32_t s = 0; s < S; s++)
        d += (a[s] - b[s]) * (a[s] - b[s]);
    return d;
}

/* k-means++ seeding of P centers (cent: P x S). */
static void seed_centers(const double *x, uint32_t n, uint32_t S, uint32_t P, gx_rng *rng,
                         double *cent, double *dmin)
{
    uint32_t first = (uint32_t)gx_rng_below(rng, n);
    memcpy(cent, x + (size_t)first * S, S * sizeof *cent);
    for (uint32_t i = 0; i < n; i++)
        dmin[i] = dist2(x + (size_t)i * S, cent, S);
    for (uint32_t g = 1; g < P; g++) {
        double tot = 0;
        for (uint32_t i = 0; i < n; i++)
            tot += dmin[i];
        uint32_t pick = (uint32_t)gx_rng_below(rng, n);
        if (tot > 0) {
            double r = gx_rng_uniform(rng) * tot, acc = 0;
            for (uint32_t i = 0; i < n; i++) {
                acc += dmin[i];
                if (acc >= r) {
                    pick = i;
                    break;
                }
            }
        }
        memcpy(cent + (size_t)g * S, x + (size_t)pick * S, S * sizeof *cent);
        for (uint32_t i = 0; i < n; i++) {
            double d = dist2(x + (size_t)i * S, cent + (size_t)g * S, S);
            if (d < dmin[i])
                dmin[i] = d;
        }
    }
}

/* One Lloyd run from a k-means++ seed; returns the within sum of squares. */
static double lloyd(const double *x, uint32_t n, uint32_t S, uint32_t P, gx_rng *rng,
                    uint32_t *assign, double *cent, double *dmin)
{
    seed_centers(x, n, S, P, rng, cent, dmin);
    for (uint32_t i = 0; i < n; i++)
        assign[i] = UINT32_MAX;
    double sse = 0;
    for (int it = 0; it < SP_ITERS; it++) {
        int changed = 0;
        sse = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t best = 0;
            double bd = INFINITY;
            for (uint32_t g = 0; g < P; g++) {
                double d = dist2(x + (size_t)i * S, cent + (size_t)g * S, S);
                if (d < bd) {
                    bd = d;
                    best = g;
                }
            }
            changed |= assign[i] != best;
            assign[i] = best;
            sse += bd;
        }
        if (!changed)
            break;
        uint32_t cnt[SP_MAX_P] = {0};
        memset(cent, 0, (size_t)P * S * sizeof *cent);
        for (uint32_t i = 0; i < n; i++) {
            cnt[assign[i]]++;
            for (uint32_t s = 0; s < S; s++)
                cent[(size_t)assign[i] * S + s] += x[(size_t)i * S + s];
        }
        for (uint32_t g = 0; g < P; g++)
            for (uint32_t s = 0; s < S; s++)
                cent[(size_t)g * S + s] = cnt[g] ? cent[(size_t)g * S + s] / cnt[g] : INFINITY;
    }
    return sse;
}

/* Best of `restarts` runs: the assignment with the lowest within sum. */
static double kmeans(const double *x, uint32_t n, uint32_t S, uint32_t P, gx_rng *rng,
                     int restarts, uint32_t *best, uint32_t *tmp, double *work)
{
    double *cent = work, *dmin = work + (size_t)SP_MAX_P * S;
    double bsse = INFINITY;
    for (int r = 0; r < restarts; r++) {
        double sse = lloyd(x, n, S, P, rng, tmp, cent, dmin);
        if (sse < bsse) {
            bsse = sse;
            memcpy(best, tmp, n * sizeof *best);
        }
    }
    return bsse;
}

static double total_ss(const double *x, uint32_t n, uint32_t S)
{
    double t = 0;
    for (uint32_t i = 0; i < (size_t)n * S; i++)
        t += x[i] * x[i];
    return t; /* columns are centered */
}

/* Cost of the cheapest split of the slots into P contiguous runs of fair
 * length (half to 1.5 x S / P), run i near group perm[i]: the sum over
 * slots of (the run's group mean - the fastest group mean there). Brute
 * force over change points and group orders (P <= 4, S <= 32). */
typedef struct seg {
    double cost;
    uint32_t cut[SP_MAX_P + 1]; /* run i = slots [cut[i], cut[i + 1]) */
    uint32_t perm[SP_MAX_P];
} seg;

static void seg_search(const double pre[SP_MAX_P][SPARTS_MAX_SLOTS + 1], uint32_t S, uint32_t P,
                       uint32_t depth, seg *cur, uint32_t used, seg *best)
{
    double fair = (double)S / P;
    if (depth == P) {
        if (cur->cut[P] == S && cur->cost < best->cost)
            *best = *cur;
        return;
    }
    uint32_t l = cur->cut[depth];
    for (uint32_t r = l + 1; r <= S; r++) {
        uint32_t len = r - l;
        if (len < 0.5 * fair)
            continue;
        if (len > 1.5 * fair || (depth + 1 == P && r != S) || (depth + 1 < P && r == S))
            continue;
        for (uint32_t g = 0; g < P; g++) {
            if (used >> g & 1u)
                continue;
            double c = pre[g][r] - pre[g][l];
            seg next = *cur;
            next.cost += c;
            if (next.cost >= best->cost)
                continue;
            next.cut[depth + 1] = r;
            next.perm[depth] = g;
            seg_search(pre, S, P, depth + 1, &next, used | 1u << g, best);
        }
    }
}

/* Sides of the slots (the fastest group at each) and the runs test: the
 * cheapest contiguous split into P fair runs, one per group, may disagree
 * with the fastest group only on a slot or two (at most S / 16) and only
 * where the two were tied (within 0.05 x the median margin between the
 * fastest and the runner-up group): a tie flips under noise, random skew
 * flips everywhere. Returns 1 when accepted; order[g] = rank
 * of group g's run; *runs = runs of the raw sides. */
static int runs_test(const double *x, uint32_t n, uint32_t S, uint32_t P, const uint32_t *grp,
                     uint32_t *order, uint32_t *runs)
{
    double m[SP_MAX_P][SPARTS_MAX_SLOTS];
    uint32_t cnt[SP_MAX_P] = {0};
    memset(m, 0, sizeof m);
    for (uint32_t i = 0; i < n; i++) {
        cnt[grp[i]]++;
        for (uint32_t s = 0; s < S; s++)
            m[grp[i]][s] += x[(size_t)i * S + s];
    }
    for (uint32_t g = 0; g < P; g++)
        for (uint32_t s = 0; s < S; s++)
            m[g][s] /= cnt[g];
    double fast[SPARTS_MAX_SLOTS], margin[SPARTS_MAX_SLOTS], next_gap[SPARTS_MAX_SLOTS];
    uint32_t side[SPARTS_MAX_SLOTS], nr = 0;
    for (uint32_t s = 0; s < S; s++) {
        uint32_t b = 0;
        for (uint32_t g = 1; g < P; g++)
            if (m[g][s] < m[b][s])
                b = g;
        double second = INFINITY, third = INFINITY;
        for (uint32_t g = 0; g < P; g++) {
            if (g == b)
                continue;
            if (m[g][s] < second) {
                third = second;
                second = m[g][s];
            } else if (m[g][s] < third) {
                third = m[g][s];
            }
        }
        side[s] = b;
        fast[s] = m[b][s];
        margin[s] = second - m[b][s];
        next_gap[s] = P > 2 ? third - second : 0;
        nr += s == 0 || side[s] != side[s - 1];
    }
    *runs = nr;
    /* one group fast and the others slow: the fastest stands out from the
     * runner-up more than the runner-up from the third (two fast groups
     * mean P is too many: a partition was split) */
    double mmed = gx_median(margin, S);
    if (P > 2 && !(mmed > gx_median(next_gap, S)))
        return 0;
    double pre[SP_MAX_P][SPARTS_MAX_SLOTS + 1];
    for (uint32_t g = 0; g < P; g++) {
        pre[g][0] = 0;
        for (uint32_t s = 0; s < S; s++)
            pre[g][s + 1] = pre[g][s] + (m[g][s] - fast[s]);
    }
    seg cur, best;
    memset(&cur, 0, sizeof cur);
    memset(&best, 0, sizeof best);
    best.cost = INFINITY;
    seg_search(pre, S, P, 0, &cur, 0, &best);
    if (!isfinite(best.cost))
        return 0;
    uint32_t misfits = 0;
    for (uint32_t i = 0; i < P; i++)
        for (uint32_t s = best.cut[i]; s < best.cut[i + 1]; s++) {
            if (side[s] == best.perm[i])
                continue;
            misfits++;
            if (m[best.perm[i]][s] - fast[s] > 0.05 * mmed)
                return 0;
        }
    if (misfits > S / 16)
        return 0;
    for (uint32_t i = 0; i < P; i++)
        order[best.perm[i]] = i;
    return 1;
}

static void shuffle_columns(const double *x, double *y, uint32_t n, uint32_t S, gx_rng *rng)
{
    memcpy(y, x, (size_t)n * S * sizeof *y);
    for (uint32_t s = 0; s < S; s++)
        for (uint32_t i = n; i > 1; i--) {
            uint32_t j = (uint32_t)gx_rng_below(rng, i);
            double t = y[(size_t)(i - 1) * S + s];
            y[(size_t)(i - 1) * S + s] = y[(size_t)j * S + s];
            y[(size_t)j * S + s] = t;
        }
}

/* Explained fraction of the best 2-group clustering, observed and over
 * shuffled columns; sets r->structure. */
static void structure_test(const double *x, uint32_t n, uint32_t S, gx_rng *rng, double *y,
                           uint32_t *a, uint32_t *b, double *work, sparts_result *r)
{
    double sst = total_ss(x, n, S);
    if (n < SP_STRUCT_MIN || !(sst > 0)) {
        r->structure = n < SP_STRUCT_MIN ? -1 : 0;
        return;
    }
    r->explained = 1.0 - kmeans(x, n, S, 2, rng, SP_RESTARTS, a, b, work) / sst;
    double e[SP_SHUFFLES], mean = 0, var = 0;
    for (int k = 0; k < SP_SHUFFLES; k++) {
        shuffle_columns(x, y, n, S, rng);
        e[k] = 1.0 - kmeans(y, n, S, 2, rng, SP_NULL_RESTARTS, a, b, work) / sst;
        mean += e[k] / SP_SHUFFLES;
    }
    for (int k = 0; k < SP_SHUFFLES; k++)
        var += (e[k] - mean) * (e[k] - mean) / (SP_SHUFFLES - 1);
    r->null_mean = mean;
    r->null_sd = sqrt(var);
    /* far beyond every shuffle: 6 sd and an absolute margin */
    r->structure = r->explained > mean + 6.0 * r->null_sd && r->explained > mean + 0.1;
}

static int equal_groups(const uint32_t *grp, uint32_t n, uint32_t P)
{
    uint32_t cnt[SP_MAX_P] = {0};
    for (uint32_t i = 0; i < n; i++)
        cnt[grp[i]]++;
    for (uint32_t g = 0; g < P; g++)
        if (cnt[g] != n / P)
            return 0;
    return 1;
}

int sparts_uniform(const double *centers, uint32_t nc, uint32_t S, uint64_t seed,
                   uint32_t *group, sparts_result *r)
{
    memset(r, 0, sizeof *r);
    if (!centers || !group || nc == 0 || nc > SPARTS_MAX_CLASSES || S < 2 ||
        S > SPARTS_MAX_SLOTS)
        return -1;
    for (uint32_t j = 0; j < nc; j++)
        group[j] = 0;
    for (size_t i = 0; i < (size_t)nc * S; i++)
        if (!isfinite(centers[i])) {
            r->structure = -1;
            snprintf(r->how, sizeof r->how, "a class has no fingerprint on some SM: not tested");
            return 0;
        }
    if (nc == 1) {
        r->partitions = 1;
        r->conf = 0.99;
        r->structure = -1;
        snprintf(r->how, sizeof r->how, "one slice class: one partition");
        return 0;
    }
    double *x = malloc((size_t)nc * S * sizeof *x);
    double *y = malloc((size_t)nc * S * sizeof *y);
    double *work = malloc((size_t)(SP_MAX_P + 1) * (S + nc) * sizeof *work);
    uint32_t *a = malloc(nc * sizeof *a), *b = malloc(nc * sizeof *b);
    if (!x || !y || !work || !a || !b) {
        free(x);
        free(y);
        free(work);
        free(a);
        free(b);
        return -1;
    }
    /* center each slot's column (the SM's base latency drops out) */
    for (uint32_t s = 0; s < S; s++) {
        double m = 0;
        for (uint32_t j = 0; j < nc; j++)
            m += centers[(size_t)j * S + s] / nc;
        for (uint32_t j = 0; j < nc; j++)
            x[(size_t)j * S + s] = centers[(size_t)j * S + s] - m;
    }
    gx_rng rng;
    gx_rng_seed(&rng, gx_mix64(seed ^ 0x9a7715ULL));
    structure_test(x, nc, S, &rng, y, a, b, work, r);

    uint32_t found = 0, order[SP_MAX_P] = {0};
    for (uint32_t P = SP_MAX_P; P >= 2 && !found; P /= 2) {
        if (nc % P || S < 2 * P)
            continue;
        if (nc == P) {
            for (uint32_t j = 0; j < nc; j++)
                a[j] = j;
        } else {
            kmeans(x, nc, S, P, &rng, SP_RESTARTS, a, b, work);
            if (!equal_groups(a, nc, P))
                continue;
        }
        uint32_t runs = 0;
        if (runs_test(x, nc, S, P, a, order, &runs)) {
            found = P;
            r->runs = runs;
            for (uint32_t j = 0; j < nc; j++)
                group[j] = order[a[j]];
        } else if (P == 2) {
            r->runs = runs;
        }
    }
    if (found) {
        r->partitions = found;
        r->conf = r->structure == 1 ? 0.99 : 0.95;
        snprintf(r->how, sizeof r->how,
                 "%u equal class groups, each fast from one run of SM ids (%u runs over %u SMs; "
                 "explained %.2f vs shuffled %.2f)",
                 found, r->runs, S, r->explained, r->null_mean);
    } else if (r->structure == 1) {
        r->partitions = 0;
        snprintf(r->how, sizeof r->how,
                 "classes split into groups (explained %.2f vs shuffled %.2f) but the SM sides "
                 "are not contiguous runs: not established",
                 r->explained, r->null_mean);
    } else {
        r->partitions = 1;
        r->conf = r->structure == 0 ? 0.95 : 0.9;
        snprintf(r->how, sizeof r->how,
                 "no partition pattern in the fingerprints (%u side runs over %u SMs; "
                 "explained %.2f vs shuffled %.2f)",
                 r->runs, S, r->explained, r->null_mean);
    }
    free(x);
    free(y);
    free(work);
    free(a);
    free(b);
    return 0;
}
