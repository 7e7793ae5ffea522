/* sets_probe.c - the sets stage's probes (src/infer/stages/sets/): a line
 * against an eviction set (load, walk the set, reload: evicted = same set),
 * batched over many offsets, the overflow test that tells an eviction set
 * from a set that misses, and the small GF(2) helpers every algorithm of
 * the stage uses. Assumes the ways stage's eviction sets (same arena). */
#include <stdlib.h>

#include "sets_internal.h"

uint64_t sets_span_point(const uint64_t *basis, int n, uint64_t c)
{
    uint64_t d = 0;
    for (int j = 0; j < n; j++)
        if (c >> j & 1)
            d ^= basis[j];
    return d;
}

/* ---- probing ------------------------------------------------------------------ */

/* Which of the offsets (in-page) are evicted by the eviction set `set`
 * (arena offsets)? ev_out[i] = 1 / 0. Batches of `batch`; positives are
 * confirmed by a second probe. */
static int probe_batches(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *offs,
                         size_t n, size_t batch, uint8_t *ev_out);

/* Batches of random members: neighbouring points share most index bits,
 * so a batch of consecutive ones would crowd a few sets and evict itself. */
int sets_probe_offsets(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *offs,
                       size_t n, size_t batch, uint8_t *ev_out)
{
    uint64_t *perm = malloc((n ? n : 1) * sizeof *perm);
    uint64_t *sh = malloc((n ? n : 1) * sizeof *sh);
    uint8_t *ev = malloc(n ? n : 1);
    if (!perm || !sh || !ev) {
        free(perm);
        free(sh);
        free(ev);
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    gx_rng_shuffle_u64(&s->ctx->rng, perm, (uint64_t)n);
    for (size_t i = 0; i < n; i++)
        sh[i] = offs[perm[i]];
    int rc = probe_batches(s, set, nset, sh, n, batch, ev);
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        ev_out[perm[i]] = ev[i];
    free(perm);
    free(sh);
    free(ev);
    return rc;
}

/* The eviction check: the line at offset tt (from s->base) reloaded for its
 * hit latency, then the overflow test of tt + set (the set's lines
 * measured there). *ovf = 1 when the set evicts tt. */
int sets_set_overflows(sets_ctx *s, uint64_t tt, const uint64_t *set, uint32_t nset, int *ovf)
{
    double hit = 0;
    int rc = gx_evx_hit_latency(&s->ev, s->base + tt, 5, &hit);
    if (rc == GX_OK)
        rc = gx_evx_overflows(&s->ev, s->base + tt, hit, set, NULL, nset, 0, ovf, NULL);
    return rc;
}

/* Probe offsets pts against `set` once an overflow test showed that the
 * set evicts the line at tt (*probed = 0 when it does not: nothing probed). */
int sets_probe_if_evset(sets_ctx *s, uint64_t tt, const uint64_t *set, uint32_t nset,
                        const uint64_t *pts, size_t np, uint8_t *ev, int *probed)
{
    int ovf = 0, rc;
    *probed = 0;
    if ((rc = sets_set_overflows(s, tt, set, nset, &ovf)) != GX_OK)
        return rc;
    if (!ovf)
        return GX_OK;
    if ((rc = sets_probe_offsets(s, set, nset, pts, np, 1, ev)) != GX_OK)
        return rc;
    *probed = 1;
    return GX_OK;
}

static int probe_batches(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *offs,
                         size_t n, size_t batch, uint8_t *ev_out)
{
    /* enough rounds that even random replacement evicts a congruent line
     * (each miss picks it with probability 1/W): about e^-6 to survive */
    uint32_t passes = 4 * nset + 8;
    /* confirmation groups: lines evicted by crowding (several in one set)
     * come back together, so with few ways they must be confirmed apart */
    size_t cg = s->w / 2 < 1 ? 1 : s->w / 2 > 8 ? 8 : s->w / 2;
    uint64_t *lines = malloc((batch ? batch : 1) * sizeof *lines);
    uint64_t *pos = malloc((batch ? batch : 1) * sizeof *pos);
    size_t *pidx = malloc((batch ? batch : 1) * sizeof *pidx);
    int *r1 = malloc((batch ? batch : 1) * sizeof *r1), *r2 = malloc((batch ? batch : 1) * sizeof *r2);
    int rc = lines && pos && pidx && r1 && r2 ? GX_OK
                                              : gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    for (size_t i = 0; rc == GX_OK && i < n; i += batch) {
        size_t nb = n - i < batch ? n - i : batch;
        for (size_t j = 0; j < nb; j++)
            lines[j] = s->base + offs[i + j];
        if ((rc = gx_evx_probe(&s->ev, set, nset, passes, lines, nb, r1)) != GX_OK)
            break;
        s->probes++;
        size_t np = 0;
        for (size_t j = 0; j < nb; j++) {
            ev_out[i + j] = 0;
            if (r1[j] != 0) { /* evicted or unsure: look again */
                pos[np] = lines[j];
                pidx[np++] = i + j;
            }
        }
        /* confirm a few at a time: an outlier, or a crowded set in the big
         * batch, must not make a line congruent */
        for (size_t j0 = 0; rc == GX_OK && j0 < np; j0 += cg) {
            size_t nc = np - j0 < cg ? np - j0 : cg;
            if ((rc = gx_evx_probe(&s->ev, set, nset, passes, pos + j0, nc, r2)) != GX_OK)
                break;
            s->probes++;
            for (size_t j = 0; j < nc; j++)
                ev_out[pidx[j0 + j]] = (uint8_t)(r2[j] == 1);
        }
    }
    free(lines);
    free(pos);
    free(pidx);
    free(r1);
    free(r2);
    return rc;
}

/* Batch size: few enough points that no set of the slice gets more than
 * W/2 of them (they must not evict each other). */
size_t sets_batch_for(const sets_ctx *s, double sets_est)
{
    double b = sets_est > 0 ? sets_est * s->w / 4.0 : s->w / 2.0;
    if (b < 1)
        b = 1;
    if (b > 512)
        b = 512;
    return (size_t)b;
}

/* ---- helpers -------------------------------------------------------------------- */

int sets_in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else if (v[mid] > x)
            hi = mid;
        else
            return 1;
    }
    return 0;
}

/* The step that value bit i makes in a value mod m, up to its sign:
 * min(2^i mod m, m - 2^i mod m). Bits with equal steps are the ones a fit
 * can swap. */
uint64_t sets_bit_step(int i, uint32_t m)
{
    uint64_t k = ((uint64_t)1 << i) % m;
    return k < m - k ? k : m - k;
}

/* The span of a congruence class's translations, robustly: a difference
 * d = member ^ toff enters only when it maps at least 80% of the sorted
 * class ct onto members. A stray false positive (or a missed member) does
 * not hide a direction; one that flips set-index bits keeps at most about
 * a quarter of the class. */
void sets_class_span(const uint64_t *ct, size_t nct, uint64_t toff, gx_gf2_basis *b)
{
    gx_gf2_basis_init(b);
    for (size_t i = 0; i < nct; i++) {
        uint64_t dd = ct[i] ^ toff;
        if (!dd || gx_gf2_basis_contains(b, dd))
            continue;
        size_t support = 0;
        for (size_t j = 0; j < nct; j++)
            support += (size_t)sets_in_sorted(ct, nct, ct[j] ^ dd);
        if (support * 10 >= nct * 8)
            gx_gf2_basis_add(b, dd);
    }
}

/* Lowest-weight vector of v xor span(null). */
uint64_t sets_min_weight(uint64_t v, const uint64_t *null, int nn)
{
    uint64_t best = v;
    if (nn > 16)
        nn = 16;
    for (uint64_t c = 1; c < ((uint64_t)1 << nn); c++) {
        uint64_t x = v ^ sets_span_point(null, nn, c);
        if (__builtin_popcountll(x) < __builtin_popcountll(best))
            best = x;
    }
    return best;
}
