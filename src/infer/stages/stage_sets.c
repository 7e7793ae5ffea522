/* stage_sets.c - discovery stage 6: the set index within a slice
 * (l2.hash.set, l2.sets_per_slice), cross-checked against the capacity.
 *
 * Method:
 * - Points: the lines of the ways stage's target page whose observable
 *   slice bits equal the target's (the slice hash's masks, from stage 5):
 *   T xor span(K), K = the null space of the slice masks over the
 *   observable line bits. Same page, so the unobservable part of every hash
 *   is one constant: only observable bits vary.
 * - Congruence class of T among them: probe every point against the
 *   target's minimal eviction set (load, walk the set, reload: evicted =
 *   same set), positives confirmed by a second probe.
 * - Linear (power-of-two sets): the class is T xor K0, a subspace; sets per
 *   slice = 2^(dim K - dim K0); the set masks span the null space of K0
 *   minus the slice masks' span (any such basis gives the same partition of
 *   every slice, which is what Contract 1 compares). Under a table slice
 *   hash, one slice spans several slice cosets and the masks are right only
 *   up to slice masks: page sweeps (each eviction set in its own page, and
 *   in-page sets moved into other slices) give congruent pairs across
 *   cosets, and a vote per mask picks the slice-mask correction; not pinned
 *   = flagged.
 * - Not linear: set = value mod m, value = sum 2^i parity(addr & mask_i).
 *   K1 = the differences that keep every member of T's class in it (they
 *   flip no value bit); Q = K / K1 has dimension n (the value bits). Every
 *   point of Q is classified with eviction sets obtained by translating the
 *   target's (xor the offset difference; verified by an overflow test), so
 *   the whole partition of Q into m classes is measured. Then: a direction
 *   that flips one value bit moves every class by +-2^i, so it links each
 *   class to at most two others; the least significant one (+-1) strings all
 *   m classes into one cycle, which orders them as residues. The other
 *   directions' steps along that cycle (2^i mod m) give their bit i; the
 *   dual basis gives each value bit as a function of the point, a search
 *   over the constant part reproduces the measured partition exactly, and
 *   each bit becomes an address mask (lowest weight among the equivalent
 *   ones over the slice masks). Even m = 2^a * o: the low a bits are the
 *   functionals constant on every class; the rest is an odd-modulus fit.
 *   Noise: a robust stabilizer and a majority label per coset of it.
 * - Slice directions of the masks: measured in the coset T xor e (its xor on
 *   the packed bits), up to a bit permutation that keeps |2^i mod m|; lifts
 *   that fit alike are told apart by probing where they disagree (8 xors
 *   per direction, up to 256 lifts). A linear slice hash: the eviction set
 *   of T xor e is T's moved by e, or, when that does not evict (a modulo
 *   keeps a moved set only for lines with T's value bits), one reduced
 *   inside the coset (coset_evset); other frames that fit T's coset alike
 *   are lifted when the fitted one does not lift. Under a
 *   table slice hash the eviction sets of T xor e are reduced inside their
 *   slice (a moved set does not keep a modulo congruence), the lift is tried
 *   in every frame that fits T's coset alike (equal-step permutations, g x L
 *   functionals; at most 10 lifts), and kept only when a check ACROSS slice
 *   cosets of one slice passes; otherwise flagged (0.6). Lifts that fit
 *   every coset alike are told apart by probes across slice cosets
 *   (discriminate_table). T's page's unobservable slice part is pinned with
 *   the slices stage's predictor when the sweep leaves several.
 * - Table slice hash, XOR sets, vote not sure: E0 = W lines congruent with
 *   T in T's absolute slice coset (pages identified by the predictor); E0
 *   moved by d evicts T xor d, and lines of another coset of that slice
 *   probed against it give cross-coset congruences (cross_coset_pairs).
 * - Modulo, no fit after two measurements: the last one uses another of
 *   the ways stage's targets (T's class may be closed by chance).
 * - Verification: in up to 5 other cosets, 32 points predicted congruent
 *   with a target and 16 not, disagreements probed again.
 * - Cross-check: slices x sets x ways x line against the levels' capacity.
 *
 * Notes: needs stage 4's eviction sets (same arena) and stage 5's slice hash.
 * Costs: one probe pass over 2^dim K points (linear); m probe passes over
 * 2^n points (modulo). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../evset/evset.h"
#include "../slice/gf2.h"
#include "gpuxray/hash.h"
#include "gpuxray/slicepredict.h"
#include "../infer_util.h"
#include "gpuxray/bits.h"

#define SETS_MAX_K 16
#define SETS_MAX_N 14
#define SETS_MAX_CLASSES 4096
#define SETS_CAP_TOL 0.125
#define SETS_EC_MAX 32
#define SETS_LIFT_TRIES 10
#define SETS_MAX_ALTS 256
#define SETS_DIR_CANDS 8 /* best-supported xors kept per slice direction */
#define VERIFY_SAME 32 /* verification points per coset: predicted congruent */
#define VERIFY_OTHER 16 /* and not */
#define SETS_TABLE_ALTS 256 /* table slice hash: more lifts, more chance passes */

typedef struct sets_ctx {
    gx_infer *ctx;
    gx_evx ev;
    uint32_t w, line;
    uint64_t page, base, toff; /* target = base + toff */
    uint64_t space;            /* observable line-address bits */
    int lo, hi;
    uint64_t smask[GX_MAX_MASKS];
    int ns;                    /* slice masks (observable parts) */
    uint64_t kb[64];
    int k;                     /* basis of K (slice-preserving differences) */
    const gx_evset *es;
    uint64_t *cong;            /* table hash: in-page differences to lines congruent */
    size_t ncong;              /* with T (T's page sweep) */
    uint16_t *hs;              /* the page's possible unobservable slice parts */
    int nh;
    int vote_sure;             /* table hash: cross-coset congruences pinned the masks */
    uint32_t exact_m;          /* modulo: class count of an earlier clean measurement */
    uint64_t probes;           /* probe calls */
    /* table slice hash, modulo: eviction sets reduced per in-page target
     * (slice_evset), reused by every frame that the lift tries */
    uint64_t ec_t[SETS_EC_MAX];
    uint32_t ec_n[SETS_EC_MAX];
    uint64_t ec_set[SETS_EC_MAX][GX_EVX_MAX_WAYS];
    int n_ec;
    int lift_tries;            /* frames lifted so far (bounded: each costs probes) */
    /* table slice hash, modulo: cross-coset probes measured once, shared by
     * every discriminate_table call (targets, points, answers) */
    int bank_done, bank_n;
    uint64_t bank_tt[4], bank_x[4][40];
    uint8_t bank_ev[4][40];
    size_t bank_np[4];
} sets_ctx;

static int coset_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset);

/* measurements of a modulo partition before giving up on a value fit */
#define SETS_MEASURES 3

static uint64_t span_point(const uint64_t *basis, int n, uint64_t c)
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
static int probe_offsets(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *offs,
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
static int set_overflows(sets_ctx *s, uint64_t tt, const uint64_t *set, uint32_t nset, int *ovf)
{
    double hit = 0;
    int rc = gx_evx_hit_latency(&s->ev, s->base + tt, 5, &hit);
    if (rc == GX_OK)
        rc = gx_evx_overflows(&s->ev, s->base + tt, hit, set, NULL, nset, 0, ovf, NULL);
    return rc;
}

/* Probe offsets pts against `set` once an overflow test showed that the
 * set evicts the line at tt (*probed = 0 when it does not: nothing probed). */
static int probe_if_evset(sets_ctx *s, uint64_t tt, const uint64_t *set, uint32_t nset,
                          const uint64_t *pts, size_t np, uint8_t *ev, int *probed)
{
    int ovf = 0, rc;
    *probed = 0;
    if ((rc = set_overflows(s, tt, set, nset, &ovf)) != GX_OK)
        return rc;
    if (!ovf)
        return GX_OK;
    if ((rc = probe_offsets(s, set, nset, pts, np, 1, ev)) != GX_OK)
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
static size_t batch_for(const sets_ctx *s, double sets_est)
{
    double b = sets_est > 0 ? sets_est * s->w / 4.0 : s->w / 2.0;
    if (b < 1)
        b = 1;
    if (b > 512)
        b = 512;
    return (size_t)b;
}

/* ---- helpers -------------------------------------------------------------------- */

static int in_sorted(const uint64_t *v, size_t n, uint64_t x)
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
static uint64_t bit_step(int i, uint32_t m)
{
    uint64_t k = ((uint64_t)1 << i) % m;
    return k < m - k ? k : m - k;
}

/* The span of a congruence class's translations, robustly: a difference
 * d = member ^ toff enters only when it maps at least 80% of the sorted
 * class ct onto members. A stray false positive (or a missed member) does
 * not hide a direction; one that flips set-index bits keeps at most about
 * a quarter of the class. */
static void class_span(const uint64_t *ct, size_t nct, uint64_t toff, gx_gf2_basis *b)
{
    gx_gf2_basis_init(b);
    for (size_t i = 0; i < nct; i++) {
        uint64_t dd = ct[i] ^ toff;
        if (!dd || gx_gf2_basis_contains(b, dd))
            continue;
        size_t support = 0;
        for (size_t j = 0; j < nct; j++)
            support += (size_t)in_sorted(ct, nct, ct[j] ^ dd);
        if (support * 10 >= nct * 8)
            gx_gf2_basis_add(b, dd);
    }
}

/* Lowest-weight vector of v xor span(null). */
static uint64_t min_weight(uint64_t v, const uint64_t *null, int nn)
{
    uint64_t best = v;
    if (nn > 16)
        nn = 16;
    for (uint64_t c = 1; c < ((uint64_t)1 << nn); c++) {
        uint64_t x = v ^ span_point(null, nn, c);
        if (__builtin_popcountll(x) < __builtin_popcountll(best))
            best = x;
    }
    return best;
}

/* ---- linear ------------------------------------------------------------------------ */

/* Set masks for the class T xor span(k0): rho vectors of annihilator(k0)
 * independent of the slice masks, each of low weight. */
/* Up to `want` set masks: lowest-weight vectors of annihilator(k0)
 * independent of the slice masks. *spare = how many more independent
 * vectors the space holds (0: the choice was forced). */
static int linear_masks(const sets_ctx *s, const uint64_t *k0, int nk0, int want,
                        uint64_t *masks, int *spare)
{
    uint64_t ann[64];
    int na = gx_gf2_annihilator(k0, (size_t)nk0, s->space, ann);
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (int i = 0; i < s->ns; i++)
        gx_gf2_basis_add(&b, s->smask[i]);
    int base = b.n, rho = 0;
    gx_gf2_basis all = b;
    for (int i = 0; i < na; i++)
        gx_gf2_basis_add(&all, ann[i]);
    *spare = all.n - base - want;
    if (na <= 16) {
        for (int wt = 1; wt <= 64 && rho < want; wt++)
            for (uint64_t c = 1; c < ((uint64_t)1 << na) && rho < want; c++) {
                uint64_t x = span_point(ann, na, c);
                if (__builtin_popcountll(x) == wt && gx_gf2_basis_add(&b, x))
                    masks[rho++] = x;
            }
        return rho;
    }
    for (int i = 0; i < na && rho < want; i++)
        if (gx_gf2_basis_add(&b, ann[i]))
            masks[rho++] = ann[i];
    return rho;
}

/* Differences X xor Y of congruent lines (X evicted by target Y's set),
 * gathered by the page sweeps. */
typedef struct sweep_diffs {
    uint64_t *v;
    size_t n, cap;
} sweep_diffs;

static int diffs_push(sweep_diffs *dl, uint64_t x)
{
    if (dl->n == dl->cap) {
        size_t nc = dl->cap ? 2 * dl->cap : 256;
        uint64_t *nv = realloc(dl->v, nc * sizeof *nv);
        if (!nv)
            return GX_ENOMEM;
        dl->v = nv;
        dl->cap = nc;
    }
    dl->v[dl->n++] = x;
    return GX_OK;
}

/* With a table slice hash, lines of one slice also sit in other cosets of
 * the slice bits, where a set mask plus a slice mask is no longer
 * equivalent to the mask alone: the set masks must be exact. Sweep the page
 * against eviction sets of several targets (T, then T xor d with the set
 * moved by d, each verified): every congruent line X of target Y gives a
 * difference X xor Y on which the true set masks vanish (kept in dl; the
 * span goes to b, *extra counts the new dimensions). */
static int sweep_target_n(sets_ctx *s, uint64_t toff, const uint64_t *set, uint32_t nset,
                          gx_gf2_basis *b, int *extra, sweep_diffs *dl)
{
    uint64_t lines_in_page = s->page / s->line;
    uint64_t *offs = calloc((size_t)lines_in_page, sizeof *offs);
    uint8_t *ev = malloc((size_t)lines_in_page);
    if (!offs || !ev) {
        free(offs);
        free(ev);
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    size_t n = 0;
    for (uint64_t i = 0; i < lines_in_page; i++) {
        uint64_t off = i * s->line;
        if (off != toff)
            offs[n++] = off;
    }
    /* lines of every slice: a set of the cache gets about batch / (slices
     * x sets) of them; positives once more, a few at a time */
    int rc = probe_offsets(s, set, nset, offs, n, 512, ev);
    size_t np = 0;
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (ev[i])
            offs[np++] = offs[i];
    if (rc == GX_OK && np)
        rc = probe_offsets(s, set, nset, offs, np, 4, ev);
    for (size_t i = 0; rc == GX_OK && i < np; i++) {
        if (!ev[i])
            continue;
        uint64_t dd = (offs[i] ^ toff) & s->space;
        if (gx_gf2_basis_add(b, dd))
            (*extra)++;
        if (diffs_push(dl, dd) != GX_OK)
            rc = gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    free(offs);
    free(ev);
    return rc;
}

/* Packed observable slice bits of an in-page offset. */
static uint64_t slice_bits(const sets_ctx *s, uint64_t off)
{
    return gx_gf2_apply(s->smask, s->ns, off & s->space);
}

/* Rank of the slice bits over the sweep differences (what they can pin). */
static int diffs_slice_rank(const sets_ctx *s, const sweep_diffs *dl)
{
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (size_t i = 0; i < dl->n && b.n < s->ns; i++)
        gx_gf2_basis_add(&b, slice_bits(s, dl->v[i]));
    return b.n;
}

static int sweep_target(sets_ctx *s, uint64_t toff, const uint64_t *set, gx_gf2_basis *b,
                        int *extra, sweep_diffs *dl)
{
    return sweep_target_n(s, toff, set, s->es->n, b, extra, dl);
}

/* T's page sweep found the lines of T's page congruent with T (the first
 * n_first differences): they fix which unobservable parts h (an xor on the
 * packed slice bits) the page can have under the found table. */
static int table_page_info(sets_ctx *s, const uint64_t *v, size_t n_first)
{
    const uint32_t *tab = s->ctx->slice_hash.table;
    uint64_t nx = (uint64_t)1 << s->ns, tb = slice_bits(s, s->toff);
    s->cong = malloc((n_first ? n_first : 1) * sizeof *s->cong);
    s->hs = malloc((size_t)nx * sizeof *s->hs);
    s->ncong = 0;
    s->nh = 0;
    if (!s->cong || !s->hs)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    if (n_first)
        memcpy(s->cong, v, n_first * sizeof *s->cong);
    s->ncong = n_first;
    s->nh = 0;
    for (uint64_t h = 0; h < nx; h++) {
        int one = 1;
        for (size_t i = 0; i < n_first && one; i++)
            one = tab[tb ^ slice_bits(s, s->cong[i]) ^ h] == tab[tb ^ h];
        if (one)
            s->hs[s->nh++] = (uint16_t)h;
    }
    return GX_OK;
}

/* An eviction set for T xor d (slice bits x): the lines of T's page
 * congruent with T, moved by d, that stay in one slice under every possible
 * h (a move keeps the set index of a linear one). Returns how many (<= W). */
static uint32_t moved_set(const sets_ctx *s, uint64_t x, uint64_t d, uint64_t *set)
{
    const uint32_t *tab = s->ctx->slice_hash.table;
    uint64_t tb = slice_bits(s, s->toff) ^ x;
    uint32_t n = 0;
    for (size_t i = 0; i < s->ncong && n < s->w; i++) {
        int keep = s->nh > 0;
        for (int j = 0; j < s->nh && keep; j++)
            keep = tab[tb ^ slice_bits(s, s->cong[i]) ^ s->hs[j]] == tab[tb ^ s->hs[j]];
        if (keep)
            set[n++] = s->base + (s->toff ^ d ^ s->cong[i]);
    }
    return n;
}

/* The packed slice-bit moves x (shuffled; *xs owned by the caller) for
 * which moved_set finds W lines. */
static int table_moves(sets_ctx *s, uint64_t **xs_out, size_t *n_out)
{
    uint64_t nx = (uint64_t)1 << s->ns;
    uint64_t *xs = malloc((size_t)nx * sizeof *xs), set[GX_EVX_MAX_WAYS];
    *xs_out = NULL;
    *n_out = 0;
    if (!xs)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    size_t nxs = 0;
    for (uint64_t x = 1; x < nx && s->cong; x++)
        if (moved_set(s, x, 0, set) == s->w)
            xs[nxs++] = x;
    gx_rng_shuffle_u64(&s->ctx->rng, xs, (uint64_t)nxs);
    *xs_out = xs;
    *n_out = nxs;
    return GX_OK;
}

/* Sweeps: every eviction set of the ways stage in its own page, then T's
 * set moved into other slices: by d whose slice bits keep every line of
 * the set in one slice under the found table (verified by an overflow
 * test). The differences must pin every slice direction, several times
 * each (a vote, see fix_table_masks). */
/* Moves inside the current page (s->base, s->toff, s->cong): sweeps for
 * targets T xor d in other slices, at most `most` of them. */
static int page_moves(sets_ctx *s, gx_gf2_basis *b, int *extra, sweep_diffs *dl, int most,
                      int *swept)
{
    uint64_t *xs = NULL, set[GX_EVX_MAX_WAYS];
    size_t nxs = 0;
    int rc = table_moves(s, &xs, &nxs), done = 0;
    for (size_t t = 0; rc == GX_OK && t < nxs && t < 12 && done < most; t++) {
        uint64_t d = 0;
        if (!gx_gf2_preimage(s->smask, s->ns, s->space, xs[t], &d))
            continue;
        if (s->k > 0)
            d ^= span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
        uint32_t nset = moved_set(s, xs[t], d, set);
        int ovf = 0;
        if ((rc = set_overflows(s, s->toff ^ d, set, nset, &ovf)) != GX_OK)
            break;
        if (!ovf)
            continue;
        rc = sweep_target_n(s, s->toff ^ d, set, nset, b, extra, dl);
        done++;
        (*swept)++;
    }
    free(xs);
    return rc;
}

/* Sweeps: every eviction set of the ways stage in its own page; in each
 * page, lines congruent with its target moved into other slices (see
 * moved_set), until the differences pin every slice direction several
 * times (a vote, see fix_table_masks). Leaves s->cong / s->hs of T's page
 * (for verify_function). */
static int table_constraints(sets_ctx *s, int *extra, sweep_diffs *dl)
{
    *extra = 0;
    if (s->page / s->line > ((uint64_t)1 << 16) || s->ns > 14 || !s->ctx->slice_hash.table)
        return GX_OK;
    gx_infer *ctx = s->ctx;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    int rc = GX_OK, swept = 0, pages = 0;
    int srank = gx_gf2_rank(s->smask, (size_t)s->ns);
    const gx_evset *es0 = s->es;
    uint64_t base0 = s->base, toff0 = s->toff;
    uint64_t *cong0 = NULL;
    uint16_t *hs0 = NULL;
    size_t ncong0 = 0;
    int nh0 = 0;
    uint64_t arena = gx_target_arena_bytes(ctx->t);
    for (int e = 0; rc == GX_OK && e < ctx->n_evsets && e < GX_INFER_MAX_EVSETS && pages < 4;
         e++) {
        const gx_evset *es = &ctx->evsets[e];
        uint64_t toff = es->target % s->page, base = es->target - toff;
        if (!es->lines || es->n != s->w || base + s->page > arena)
            continue;
        s->es = es;
        s->base = base;
        s->toff = toff;
        size_t n0 = dl->n;
        if ((rc = sweep_target(s, toff, es->lines, &b, extra, dl)) != GX_OK)
            break;
        swept++;
        pages++;
        if ((rc = table_page_info(s, dl->v + n0, dl->n - n0)) != GX_OK)
            break;
        int rank_ok = swept >= 6 && diffs_slice_rank(s, dl) >= srank;
        if (!rank_ok && (rc = page_moves(s, &b, extra, dl, 3, &swept)) != GX_OK)
            break;
        if (es == es0 && !cong0) { /* keep T's page */
            cong0 = s->cong;
            hs0 = s->hs;
            ncong0 = s->ncong;
            nh0 = s->nh;
        } else {
            free(s->cong);
            free(s->hs);
        }
        s->cong = NULL;
        s->hs = NULL;
    }
    free(s->cong);
    free(s->hs);
    s->es = es0;
    s->base = base0;
    s->toff = toff0;
    s->cong = cong0;
    s->hs = hs0;
    s->ncong = ncong0;
    s->nh = nh0;
    return rc;
}

/* The masks from T's coset are right up to slice masks: the true ones are
 * masks[r] xor sum_j c[r][j] smask[j]. Every swept difference D across
 * slice cosets gives one equation per mask, <c[r], S(D)> = <masks[r], D>.
 * A vote: per mask, the c that violates the fewest equations (a noisy
 * congruence breaks one). *sure = 0 when a runner-up comes within one
 * equation, when the best breaks too many, or when nothing crossed. */
static void fix_table_masks(const sets_ctx *s, uint64_t *masks, int rho, const sweep_diffs *dl,
                            int *sure, size_t *n_cross)
{
    *sure = 0;
    *n_cross = 0;
    if (s->ns > 14 || !dl->n)
        return;
    uint64_t *sd = malloc(dl->n * sizeof *sd);
    uint64_t *dv = malloc(dl->n * sizeof *dv);
    if (!sd || !dv) {
        free(sd);
        free(dv);
        return;
    }
    size_t nc = 0;
    for (size_t i = 0; i < dl->n; i++) {
        uint64_t x = gx_gf2_apply(s->smask, s->ns, dl->v[i]);
        if (x) {
            sd[nc] = x;
            dv[nc++] = dl->v[i];
        }
    }
    *n_cross = nc;
    int ok = nc >= (size_t)(2 * s->ns);
    uint64_t ncand = (uint64_t)1 << s->ns;
    for (int r = 0; ok && r < rho; r++) {
        size_t best = (size_t)-1, second = (size_t)-1;
        uint64_t bc = 0;
        for (uint64_t c = 0; c < ncand; c++) {
            size_t bad = 0;
            for (size_t i = 0; i < nc && bad <= second; i++)
                bad += (size_t)(gx_gf2_dot(c, sd[i]) != gx_gf2_dot(masks[r], dv[i]));
            if (bad < best) {
                second = best;
                best = bad;
                bc = c;
            } else if (bad < second) {
                second = bad;
            }
        }
        size_t tol = nc / 20 > 2 ? nc / 20 : 2;
        if (best > tol || second <= best + 1)
            ok = 0;
        for (int j = 0; j < s->ns; j++)
            if ((bc >> j) & 1)
                masks[r] ^= s->smask[j];
    }
    *sure = ok;
    free(sd);
    free(dv);
}

#define SETS_XPAGES 24    /* pages identified at most for E0 */
#define SETS_XPAIRS 32    /* slice-coset pairs probed at most */

/* The absolute slice coset of an in-page offset of an identified page (the
 * reference page's packed slice bits). */
static uint64_t abs_coset(const sets_ctx *s, const gx_slicepred_page *pg, uint64_t off)
{
    return slice_bits(s, off) ^ pg->z;
}

/* E0: W lines congruent with T, all in T's absolute slice coset a0, from
 * several pages identified by the slices stage's predictor (each page's
 * unobservable slice part z is then known). Per page, the 2^k lines of
 * coset a0 are probed against T's eviction set. */
static int collect_e0(sets_ctx *s, const gx_slicepred_page *pgt, uint64_t *e0, uint32_t *n0)
{
    gx_infer *ctx = s->ctx;
    uint64_t arena = gx_target_arena_bytes(ctx->t), npages = arena / s->page;
    uint64_t a0 = abs_coset(s, pgt, s->toff), np = (uint64_t)1 << s->k;
    uint64_t *pages = malloc((size_t)npages * sizeof *pages);
    uint64_t *pts = malloc((size_t)np * sizeof *pts);
    uint8_t *ev = malloc((size_t)np);
    int rc = pages && pts && ev ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    uint32_t max_lines = (uint32_t)(s->page / s->line / 100);
    if (max_lines < 16)
        max_lines = 16;
    *n0 = 0;
    for (uint64_t p = 0; rc == GX_OK && p < npages; p++)
        pages[p] = p;
    if (rc == GX_OK)
        gx_rng_shuffle_u64(&ctx->rng, pages, npages);
    uint64_t base0 = s->base;
    for (uint64_t p = 0; rc == GX_OK && p < npages && p < SETS_XPAGES && *n0 < s->w; p++) {
        uint64_t pb = pages[p] * s->page;
        gx_slicepred_page pg;
        gx_msg m;
        memset(&pg, 0, sizeof pg);
        int irc = pb == s->base ? GX_OK
                                : gx_slicepred_identify(ctx->slicepred, pb, max_lines, &pg, &m);
        if (pb == s->base)
            pg = *pgt;
        if (irc != GX_OK || pg.component != pgt->component)
            continue;
        uint64_t d = 0;
        if (!gx_gf2_preimage(s->smask, s->ns, s->space, a0 ^ pg.z, &d))
            continue;
        size_t n = 0;
        for (uint64_t c = 0; c < np; c++) {
            uint64_t x = d ^ span_point(s->kb, s->k, c), a = pb + x;
            if (a == s->es->target)
                continue;
            int in_set = 0;
            for (uint32_t j = 0; j < s->es->n && !in_set; j++)
                in_set = s->es->lines[j] == a;
            if (in_set) {
                if (*n0 < s->w)
                    e0[(*n0)++] = a;
            } else {
                pts[n++] = x;
            }
        }
        s->base = pb;
        rc = probe_offsets(s, s->es->lines, s->es->n, pts, n, batch_for(s, (double)np), ev);
        s->base = base0;
        for (size_t i = 0; rc == GX_OK && i < n && *n0 < s->w; i++)
            if (ev[i])
                e0[(*n0)++] = pb + pts[i];
    }
    s->base = base0;
    free(pages);
    free(pts);
    free(ev);
    return rc;
}


/* Identify the target's page with the slices stage's predictor, measuring
 * at most 1% of its lines (at least 16). 1: pg holds its component. */
static int identify_target_page(sets_ctx *s, gx_slicepred_page *pg)
{
    gx_msg m;
    memset(pg, 0, sizeof *pg);
    uint32_t max_lines = (uint32_t)(s->page / s->line / 100);
    if (max_lines < 16)
        max_lines = 16;
    return gx_slicepred_identify(s->ctx->slicepred, s->base, max_lines, pg, &m) == GX_OK &&
           pg->component >= 0;
}

/* More congruences across slice cosets (a table slice hash, XOR sets):
 * with E0 (collect_e0), the set E0 xor d1 evicts T xor d1 (every line
 * moves to the absolute coset a0 xor S(d1), one slice, and the XOR set
 * index moves alike; checked by an overflow test). The lines of T's page
 * in ANOTHER absolute coset b of that slice are probed against it; each
 * congruent X gives a difference X xor (T xor d1) across cosets (slice
 * bits a0 ^ S(d1) ^ b), on which the true set masks vanish. Pairs are
 * chosen to reach new slice directions until the vote is sure. */
static int cross_coset_pairs(sets_ctx *s, uint64_t *masks, const uint64_t *m0, int rho,
                             sweep_diffs *dl, int *sure, size_t *n_cross)
{
    gx_infer *ctx = s->ctx;
    const uint32_t *tab = ctx->slice_hash.table;
    if (!ctx->slicepred || !tab)
        return GX_OK;
    gx_slicepred_page pgt;
    if (!identify_target_page(s, &pgt))
        return GX_OK;
    uint64_t a0 = abs_coset(s, &pgt, s->toff), nx = (uint64_t)1 << s->ns;
    if (gx_slicepred_predict(ctx->slicepred, &pgt, s->base + s->toff) != (int)tab[a0])
        return GX_OK; /* the predictor's frame is not the slice hash's */
    uint64_t e0[GX_EVX_MAX_WAYS], set[GX_EVX_MAX_WAYS];
    uint32_t n0 = 0;
    int rc = collect_e0(s, &pgt, e0, &n0), ovf = 0;
    if (rc != GX_OK || n0 < s->w)
        return rc;
    if ((rc = set_overflows(s, s->toff, e0, n0, &ovf)) != GX_OK || !ovf)
        return rc;
    gx_gf2_basis got;
    gx_gf2_basis_init(&got);
    for (size_t i = 0; i < dl->n; i++)
        gx_gf2_basis_add(&got, slice_bits(s, dl->v[i]));
    uint64_t np = (uint64_t)1 << s->k, cap = np < 128 ? np : 128;
    uint64_t *pts = malloc((size_t)cap * sizeof *pts);
    uint8_t *ev = malloc((size_t)cap);
    if (!pts || !ev) {
        free(pts);
        free(ev);
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (int t = 0; rc == GX_OK && t < 4 * SETS_XPAIRS && t < 4096 && !*sure; t++) {
        uint64_t a = gx_rng_below(&ctx->rng, nx), b = a;
        if (a == a0)
            continue;
        /* another coset of a's slice, preferring a new direction */
        int fresh = 0;
        uint64_t st = gx_rng_below(&ctx->rng, nx);
        for (uint64_t i = 0; i < nx; i++) {
            uint64_t c = (st + i) % nx;
            if (c == a || tab[c] != tab[a])
                continue;
            int nw = !gx_gf2_basis_contains(&got, a ^ c);
            if (b == a || (nw && !fresh)) {
                b = c;
                fresh = nw;
            }
        }
        if (b == a || (!fresh && got.n < s->ns && t < 2 * SETS_XPAIRS))
            continue;
        uint64_t d1 = 0, d2 = 0;
        if (!gx_gf2_preimage(s->smask, s->ns, s->space, a ^ a0, &d1) ||
            !gx_gf2_preimage(s->smask, s->ns, s->space, b ^ pgt.z, &d2))
            continue;
        d1 ^= span_point(s->kb, s->k, gx_rng_below(&ctx->rng, np));
        uint64_t y = s->toff ^ d1;
        for (uint32_t i = 0; i < n0; i++)
            set[i] = e0[i] ^ d1;
        if ((rc = set_overflows(s, y, set, n0, &ovf)) != GX_OK)
            break;
        if (!ovf)
            continue;
        size_t n = 0;
        uint64_t c0 = gx_rng_below(&ctx->rng, np);
        for (uint64_t c = 0; c < np && n < cap; c++)
            pts[n++] = d2 ^ span_point(s->kb, s->k, (c0 + c) % np);
        if ((rc = probe_offsets(s, set, n0, pts, n, batch_for(s, (double)np), ev)) != GX_OK)
            break;
        for (size_t i = 0; i < n && rc == GX_OK; i++)
            if (ev[i] && diffs_push(dl, (pts[i] ^ y) & s->space) != GX_OK)
                rc = gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
        gx_gf2_basis_add(&got, a ^ b);
        memcpy(masks, m0, (size_t)rho * sizeof *masks);
        fix_table_masks(s, masks, rho, dl, sure, n_cross);
    }
    free(pts);
    free(ev);
    return rc;
}

/* The vote of fix_table_masks; when it is not sure (a slice direction not
 * pinned twice: few lines of a page congruent with T, e.g. many slices and
 * ways), more congruences across slice cosets (cross_coset_pairs). */
static int vote_with_foreign_pages(sets_ctx *s, uint64_t *masks, int rho, sweep_diffs *dl,
                                   int *sure, size_t *n_cross)
{
    uint64_t m0[64];
    memcpy(m0, masks, (size_t)rho * sizeof *m0);
    fix_table_masks(s, masks, rho, dl, sure, n_cross);
    if (*sure || s->ns > 14 || s->k > SETS_MAX_K)
        return GX_OK;
    int rc = cross_coset_pairs(s, masks, m0, rho, dl, sure, n_cross);
    if (!*sure) {
        memcpy(masks, m0, (size_t)rho * sizeof *masks);
        fix_table_masks(s, masks, rho, dl, sure, n_cross);
    }
    return rc;
}

/* ---- modulo ------------------------------------------------------------------------ */

typedef struct mod_fit {
    int n;          /* value bits */
    uint32_t m;     /* classes */
    uint64_t q[SETS_MAX_N];  /* Q basis (offset differences) */
    int32_t *lab;   /* class per point of Q */
    uint64_t mask[SETS_MAX_N];
    int ok;
} mod_fit;

/* Renumber class labels lab[0..np) (each < m) to 0..k-1 in order of first
 * appearance; map is scratch of m entries. Returns k. */
static uint32_t renumber_labels(int32_t *lab, size_t np, int32_t *map, uint32_t m)
{
    for (uint32_t r = 0; r < m; r++)
        map[r] = -1;
    int32_t next = 0;
    for (size_t c = 0; c < np; c++) {
        if (map[lab[c]] < 0)
            map[lab[c]] = next++;
        lab[c] = map[lab[c]];
    }
    return (uint32_t)next;
}

/* A probe that spared a congruent line once makes it the first member of
 * a new class: classes of less than half the typical size are tried
 * against the oracles of the others and merged where they belong. */
static int merge_small_classes(sets_ctx *s, mod_fit *f, const uint64_t *offs,
                               const uint64_t *rep, size_t batch)
{
    size_t np = (size_t)1 << f->n;
    uint32_t m = f->m;
    if (m < 2 || m > SETS_MAX_CLASSES)
        return GX_OK;
    uint32_t *size = calloc(m, sizeof *size);
    uint64_t *pts = malloc(np * sizeof *pts);
    size_t *idx = malloc(np * sizeof *idx);
    uint8_t *ev = malloc(np);
    uint64_t set[GX_EVX_MAX_WAYS];
    int rc = size && pts && idx && ev ? GX_OK
                                      : gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    for (size_t c = 0; rc == GX_OK && c < np; c++)
        size[f->lab[c]]++;
    double avg = (double)np / m;
    size_t nsm = 0;
    for (size_t c = 0; rc == GX_OK && avg >= 3 && c < np; c++)
        if (size[f->lab[c]] * 2.0 < avg) {
            pts[nsm] = offs[c];
            idx[nsm++] = c;
        }
    for (uint32_t r = 0; rc == GX_OK && nsm && r < m; r++) {
        if (size[r] * 2.0 < avg)
            continue;
        uint64_t d = rep[r] ^ s->toff;
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        if ((rc = probe_offsets(s, set, s->es->n, pts, nsm, batch, ev)) != GX_OK)
            break;
        size_t k = 0;
        for (size_t j = 0; j < nsm; j++) {
            if (ev[j]) {
                f->lab[idx[j]] = (int32_t)r;
            } else {
                pts[k] = pts[j];
                idx[k++] = idx[j];
            }
        }
        nsm = k;
    }
    if (rc == GX_OK) { /* renumber the classes that are left */
        int32_t *map = malloc(m * sizeof *map);
        if (!map) {
            rc = gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
        } else {
            f->m = renumber_labels(f->lab, np, map, m);
            free(map);
        }
    }
    free(size);
    free(pts);
    free(idx);
    free(ev);
    return rc;
}

/* Classify every point of Q with translated eviction sets. */
static int classify_q(sets_ctx *s, mod_fit *f, const uint64_t *ct, size_t nct, double sets_est)
{
    size_t np = (size_t)1 << f->n;
    uint64_t *offs = malloc(np * sizeof *offs);
    uint64_t *todo = malloc(np * sizeof *todo);
    size_t *tidx = malloc(np * sizeof *tidx);
    uint8_t *ev = malloc(np);
    uint64_t set[GX_EVX_MAX_WAYS];
    int rc = offs && todo && tidx && ev ? GX_OK
                                        : gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    uint32_t classes = 0;
    uint64_t *rep = malloc(SETS_MAX_CLASSES * sizeof *rep); /* a member of each class */
    if (!rep && rc == GX_OK)
        rc = gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    if (rep)
        rep[0] = s->toff;
    for (size_t c = 0; rc == GX_OK && c < np; c++) {
        offs[c] = s->toff ^ span_point(f->q, f->n, c);
        f->lab[c] = in_sorted(ct, nct, offs[c]) ? 0 : -1;
    }
    if (rc == GX_OK)
        classes = 1;
    size_t batch = batch_for(s, sets_est);
    for (size_t c = 0; rc == GX_OK && c < np; c++) {
        if (f->lab[c] >= 0)
            continue;
        if (classes >= SETS_MAX_CLASSES) {
            rc = gx_fail(s->ctx->msg, GX_EUNSURE, "sets: more than %u classes", SETS_MAX_CLASSES);
            break;
        }
        /* oracle for this point: the target's set moved by the same offset */
        uint64_t d = offs[c] ^ s->toff;
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        int ovf = 0;
        if ((rc = set_overflows(s, offs[c], set, s->es->n, &ovf)) != GX_OK)
            break;
        if (!ovf) {
            rc = gx_fail(s->ctx->msg, GX_EUNSURE,
                         "sets: a translated eviction set does not evict its line");
            break;
        }
        f->lab[c] = (int32_t)classes;
        size_t nt = 0;
        for (size_t e = c + 1; e < np; e++)
            if (f->lab[e] < 0) {
                tidx[nt] = e;
                todo[nt++] = offs[e];
            }
        if ((rc = probe_offsets(s, set, s->es->n, todo, nt, batch, ev)) != GX_OK)
            break;
        for (size_t j = 0; j < nt; j++)
            if (ev[j])
                f->lab[tidx[j]] = (int32_t)classes;
        if (classes < SETS_MAX_CLASSES)
            rep[classes] = offs[c];
        classes++;
    }
    f->m = classes;
    if (rc == GX_OK)
        rc = merge_small_classes(s, f, offs, rep, batch);
    free(rep);
    free(offs);
    free(todo);
    free(tidx);
    free(ev);
    return rc;
}

/* Partners of every class under direction w: 0 = inconsistent (a class
 * meets itself or more than two others), else 1 and p1/p2 filled. */
static int partners(const mod_fit *f, uint64_t w, int32_t *p1, int32_t *p2)
{
    size_t np = (size_t)1 << f->n;
    for (uint32_t r = 0; r < f->m; r++)
        p1[r] = p2[r] = -1;
    for (size_t c = 0; c < np; c++) {
        int32_t a = f->lab[c], b = f->lab[c ^ w];
        if (a == b)
            return 0;
        if (p1[a] < 0 || p1[a] == b)
            p1[a] = b;
        else if (p2[a] < 0 || p2[a] == b)
            p2[a] = b;
        else
            return 0;
    }
    return 1;
}

/* Order the classes along the cycle of direction u: pos[class]. */
static int cycle_order(const mod_fit *f, const int32_t *p1, const int32_t *p2, int32_t *pos)
{
    uint32_t m = f->m;
    for (uint32_t r = 0; r < m; r++)
        pos[r] = -1;
    int32_t prev = -1, cur = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (cur < 0 || pos[cur] >= 0)
            return 0;
        pos[cur] = (int32_t)i;
        int32_t next = p1[cur] != prev ? p1[cur] : p2[cur];
        if (m == 2)
            next = p1[cur];
        prev = cur;
        cur = next;
    }
    return m <= 2 || cur == 0;
}

/* Does g(c) = sum 2^i (beta_i ^ <a_i, c>) mod m reproduce the partition? */
static int partition_matches(const mod_fit *f, const uint64_t *a, uint64_t beta, int32_t *map)
{
    size_t np = (size_t)1 << f->n;
    for (uint32_t r = 0; r < f->m; r++)
        map[r] = -1;
    int32_t *inv = map + f->m;
    for (uint32_t r = 0; r < f->m; r++)
        inv[r] = -1;
    for (size_t c = 0; c < np; c++) {
        uint64_t v = 0;
        for (int i = 0; i < f->n; i++)
            v |= (uint64_t)((beta >> i & 1) ^ (uint64_t)gx_gf2_dot(a[i], c)) << i;
        int32_t g = (int32_t)(v % f->m), l = f->lab[c];
        if (map[l] < 0 && inv[g] < 0) {
            map[l] = g;
            inv[g] = l;
        } else if (map[l] != g || inv[g] != l) {
            return 0;
        }
    }
    return 1;
}

/* Dual basis: a[i] with <a[i], u[j]> = (i == j). 0 when u is singular. */
static int dual_basis(const uint64_t *u, int n, uint64_t *a)
{
    for (int i = 0; i < n; i++) {
        uint8_t y[SETS_MAX_N];
        for (int j = 0; j < n; j++)
            y[j] = (uint8_t)(i == j);
        uint64_t space = n >= 64 ? ~0ull : (((uint64_t)1 << n) - 1);
        if (!gx_gf2_solve(u, y, (size_t)n, space, &a[i], NULL, NULL))
            return 0;
    }
    return 1;
}

typedef struct fit_search {
    mod_fit *f;
    uint64_t cand[SETS_MAX_N][16]; /* directions that may flip bit i */
    int ncand[SETS_MAX_N];
    uint64_t u[SETS_MAX_N];
    uint64_t a[SETS_MAX_N];
    uint64_t beta;
    int32_t *map;
    long budget;
} fit_search;

static int search_bits(fit_search *fs, int i)
{
    mod_fit *f = fs->f;
    if (fs->budget-- <= 0)
        return 0;
    if (i == f->n) {
        if (!dual_basis(fs->u, f->n, fs->a))
            return 0;
        for (uint64_t beta = 0; beta < ((uint64_t)1 << f->n); beta++)
            if (partition_matches(f, fs->a, beta, fs->map)) {
                fs->beta = beta;
                return 1;
            }
        return 0;
    }
    for (int k = 0; k < fs->ncand[i]; k++) {
        uint64_t u = fs->cand[i][k];
        int used = 0;
        for (int j = 0; j < i && !used; j++)
            used = fs->u[j] == u;
        if (used)
            continue;
        fs->u[i] = u;
        if (gx_gf2_rank(fs->u, (size_t)i + 1) != i + 1)
            continue;
        if (search_bits(fs, i + 1))
            return 1;
    }
    return 0;
}

/* From the measured partition of Q to value functionals (a_i, beta). */
static int fit_value_bits(mod_fit *f, uint64_t *a_out, uint64_t *beta_out)
{
    uint32_t m = f->m;
    size_t np = (size_t)1 << f->n;
    int32_t *p1 = malloc(m * sizeof *p1), *p2 = malloc(m * sizeof *p2);
    int32_t *pos = malloc(m * sizeof *pos), *map = malloc(2 * m * sizeof *map);
    uint64_t *single = malloc(np * sizeof *single);
    int ok = 0;
    if (!p1 || !p2 || !pos || !map || !single)
        goto out;
    size_t ns = 0;
    for (uint64_t w = 1; w < np; w++)
        if (partners(f, w, p1, p2))
            single[ns++] = w;
    /* each candidate for the least significant bit: its cycle orders the
     * classes; then every direction's step along it names its bit */
    for (size_t s0 = 0; s0 < ns && !ok; s0++) {
        partners(f, single[s0], p1, p2);
        if (!cycle_order(f, p1, p2, pos))
            continue;
        fit_search fs;
        memset(&fs, 0, sizeof fs);
        fs.f = f;
        fs.map = map;
        fs.budget = 20000;
        for (size_t t = 0; t < ns; t++) {
            uint64_t u = single[t];
            int32_t step = -1;
            int consistent = 1;
            for (size_t c = 0; c < np && consistent; c++) {
                int32_t d = (pos[f->lab[c ^ u]] - pos[f->lab[c]] + (int32_t)m) % (int32_t)m;
                int32_t cd = d < (int32_t)m - d ? d : (int32_t)m - d;
                if (step < 0)
                    step = cd;
                else if (cd != step)
                    consistent = 0;
            }
            if (!consistent)
                continue;
            for (int i = 0; i < f->n; i++) {
                int32_t c2 = (int32_t)bit_step(i, m);
                if (c2 == step && fs.ncand[i] < 16)
                    fs.cand[i][fs.ncand[i]++] = u;
            }
        }
        int complete = 1;
        for (int i = 0; i < f->n; i++)
            complete &= fs.ncand[i] > 0;
        if (complete && search_bits(&fs, 0)) {
            memcpy(a_out, fs.a, (size_t)f->n * sizeof *a_out);
            *beta_out = fs.beta;
            ok = 1;
        }
    }
out:
    free(p1);
    free(p2);
    free(pos);
    free(map);
    free(single);
    return ok;
}

/* Which x (value of the high functionals on direction e) reproduce the
 * partition of the coset Q0 ^ e? Up to 4 of them in xs; returns the count. */
static int coset_offsets(const mod_fit *f, const uint64_t *q0, int n2, const uint64_t *ah,
                         uint64_t bh, uint64_t e, uint32_t o, int32_t *map, uint64_t *xs)
{
    int nx = 0;
    for (uint64_t x = 0; x < ((uint64_t)1 << n2) && nx < 4; x++) {
        int32_t *inv = map + f->m;
        for (uint32_t r = 0; r < f->m; r++)
            map[r] = -1;
        for (uint32_t r = 0; r < o; r++)
            inv[r] = -1;
        int ok = 1;
        for (uint64_t c = 0; c < ((uint64_t)1 << n2) && ok; c++) {
            int32_t g = (int32_t)((gx_gf2_apply(ah, n2, c) ^ bh ^ x) % o);
            int32_t l = f->lab[e ^ span_point(q0, n2, c)];
            if (map[l] < 0 && inv[g] < 0) {
                map[l] = g;
                inv[g] = l;
            } else if (map[l] != g || inv[g] != l) {
                ok = 0;
            }
        }
        if (ok)
            xs[nx++] = x;
    }
    return nx;
}

/* Even m = 2^a * o (o odd): value mod m = (low a bits, (value >> a) mod o).
 * The low bits are constant on every class: their span is the annihilator
 * of the intra-class differences (any basis of it gives the same
 * partition). On Q0 (where those functionals are 0) the classes are the
 * high value mod o, an odd modulus: fit_value_bits. Each complement
 * direction e_j adds an unknown xor x_j to the high value, found from the
 * partition of the coset Q0 ^ e_j; the whole fit is checked on Q. */
static int fit_value_bits_even(mod_fit *f, uint64_t *a_out, uint64_t *beta_out)
{
    uint32_t m = f->m;
    int a = __builtin_ctz(m), n = f->n, n2 = n - a, ok = 0;
    uint32_t o = m >> a;
    if (o < 3 || n2 < 2 || a > 6)
        return 0;
    size_t np = (size_t)1 << n;
    uint64_t space = ((uint64_t)1 << n) - 1;
    int64_t *rep = malloc(m * sizeof *rep);
    int32_t *map = malloc(2 * (size_t)m * sizeof *map);
    mod_fit g;
    memset(&g, 0, sizeof g);
    g.lab = malloc(((size_t)1 << n2) * sizeof *g.lab);
    if (!rep || !map || !g.lab)
        goto out;
    gx_gf2_basis d;
    gx_gf2_basis_init(&d);
    for (uint32_t r = 0; r < m; r++)
        rep[r] = -1;
    for (size_t c = 0; c < np; c++) {
        int32_t l = f->lab[c];
        if (l < 0 || (uint32_t)l >= m)
            goto out;
        if (rep[l] < 0)
            rep[l] = (int64_t)c;
        else
            gx_gf2_basis_add(&d, c ^ (uint64_t)rep[l]);
    }
    uint64_t low[64], q0[64], e[64];
    if (gx_gf2_basis_annihilator(&d, space, low) != a)
        goto out;
    if (gx_gf2_annihilator(low, (size_t)a, space, q0) != n2 ||
        gx_gf2_complement_bits(q0, (size_t)n2, space, e) != a)
        goto out;
    /* the sub-problem on Q0, labels renumbered 0..o-1 */
    for (uint32_t r = 0; r < m; r++)
        map[r] = -1;
    int32_t next = 0;
    for (uint64_t c = 0; c < ((uint64_t)1 << n2); c++) {
        int32_t l = f->lab[span_point(q0, n2, c)];
        if (map[l] < 0)
            map[l] = next++;
        g.lab[c] = map[l];
    }
    g.n = n2;
    g.m = (uint32_t)next;
    uint64_t ah[SETS_MAX_N], bh = 0;
    if ((uint32_t)next != o || !fit_value_bits(&g, ah, &bh))
        goto out;
    uint64_t xs[8][4];
    int nx[8];
    long combos = 1;
    for (int j = 0; j < a; j++) {
        nx[j] = coset_offsets(f, q0, n2, ah, bh, e[j], o, map, xs[j]);
        if (!nx[j])
            goto out;
        combos *= nx[j];
    }
    for (long k = 0; k < combos && !ok; k++) {
        long rest = k;
        uint64_t x[8];
        for (int j = 0; j < a; j++) {
            x[j] = xs[j][rest % nx[j]];
            rest /= nx[j];
        }
        uint64_t beta = bh << a;
        for (int j = 0; j < a; j++)
            a_out[j] = low[j];
        int solved = 1;
        for (int i = 0; i < n2 && solved; i++) {
            uint64_t rows[64];
            uint8_t y[64];
            size_t nr = 0;
            for (int q = 0; q < n2; q++) {
                rows[nr] = q0[q];
                y[nr++] = (uint8_t)(ah[i] >> q & 1);
            }
            for (int j = 0; j < a; j++) {
                rows[nr] = e[j];
                y[nr++] = (uint8_t)(x[j] >> i & 1);
            }
            solved = gx_gf2_solve(rows, y, nr, space, &a_out[a + i], NULL, NULL);
        }
        if (solved && partition_matches(f, a_out, beta, map)) {
            *beta_out = beta;
            ok = 1;
        }
    }
out:
    free(rep);
    free(map);
    free(g.lab);
    return ok;
}

/* Any m: odd moduli by the +-1 cycle, even ones by splitting off the low bits. */
static int fit_value_any(mod_fit *f, uint64_t *a_out, uint64_t *beta_out)
{
    if (f->m % 2 == 0 && fit_value_bits_even(f, a_out, beta_out))
        return 1;
    return fit_value_bits(f, a_out, beta_out);
}

/* ---- stage ----------------------------------------------------------------------- */

/* Probe the points of a verification against set: the ones predicted
 * congruent a few per batch (they all go to one set: at most W/4 of them
 * at once, as batch_for), the others 8 per batch. A disagreement is
 * probed again, alone, and stands only when it repeats (a randomized
 * policy spares a congruent line now and then). */
static int verify_probe(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *pts,
                        const uint8_t *want, size_t n, uint8_t *ev)
{
    uint64_t grp[2][VERIFY_SAME + VERIFY_OTHER];
    size_t idx[2][VERIFY_SAME + VERIFY_OTHER], ng[2] = {0, 0};
    uint8_t e2[VERIFY_SAME + VERIFY_OTHER];
    for (size_t i = 0; i < n && i < VERIFY_SAME + VERIFY_OTHER; i++) {
        int g = want[i] ? 1 : 0;
        grp[g][ng[g]] = pts[i];
        idx[g][ng[g]++] = i;
    }
    size_t bsame = s->w / 4 < 1 ? 1 : s->w / 4 > 8 ? 8 : s->w / 4;
    for (int g = 0; g < 2; g++) {
        int rc = ng[g] ? probe_offsets(s, set, nset, grp[g], ng[g], g ? bsame : 8, e2) : GX_OK;
        if (rc != GX_OK)
            return rc;
        for (size_t j = 0; j < ng[g]; j++)
            ev[idx[g][j]] = e2[j];
    }
    size_t na = 0;
    for (size_t i = 0; i < n && i < VERIFY_SAME + VERIFY_OTHER; i++)
        if (ev[i] != want[i]) {
            grp[0][na] = pts[i];
            idx[0][na++] = i;
        }
    if (!na || na > 4) /* many: the function is wrong here, no second look */
        return GX_OK;
    int rc = probe_offsets(s, set, nset, grp[0], na, 1, e2);
    for (size_t j = 0; rc == GX_OK && j < na; j++)
        ev[idx[0][j]] = e2[j];
    return rc;
}

/* Check a set function where it was not fitted: targets in other slice
 * cosets of the page (T xor d, eviction set moved by d and verified), 40
 * points of each coset probed against it, predicted congruent iff the
 * function gives the target's index. *agree = 1 when every prediction held
 * (up to one noisy answer per coset); *tested = cosets tested (up to 5). */
static int verify_function(sets_ctx *s, const gx_hash_fn *h, int *agree, int *tested)
{
    *agree = 1;
    *tested = 0;
    uint64_t set[GX_EVX_MAX_WAYS], pts[VERIFY_SAME + VERIFY_OTHER];
    uint8_t ev[VERIFY_SAME + VERIFY_OTHER], want[VERIFY_SAME + VERIFY_OTHER];
    size_t bad_all = 0;
    gx_gf2_basis kb;
    gx_gf2_basis_from(&kb, s->kb, (size_t)s->k);
    /* a table slice hash: only moves that keep the set in one slice */
    uint64_t *xs = NULL;
    size_t nxs = 0;
    int tab = s->ctx->slice_hash.table && s->ns <= 14 && s->cong;
    if (tab && table_moves(s, &xs, &nxs) != GX_OK)
        return GX_ENOMEM;
    for (int t = 0; t < 16 && *tested < 5 && *agree; t++) {
        uint64_t d = gx_rng_below(&s->ctx->rng, s->page / s->line) * s->line;
        if (tab) {
            if ((size_t)t >= nxs || !gx_gf2_preimage(s->smask, s->ns, s->space, xs[t], &d))
                break;
            if (s->k > 0)
                d ^= span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
        }
        if (gx_gf2_basis_contains(&kb, d & s->space))
            continue; /* same coset as T: that is where the function came from */
        uint64_t tt = s->toff ^ d;
        uint32_t nset = s->es->n;
        if (tab)
            nset = moved_set(s, xs[t], d, set);
        else
            for (uint32_t i = 0; i < s->es->n; i++)
                set[i] = s->es->lines[i] ^ d;
        int ovf = 0;
        int rc;
        if ((rc = set_overflows(s, tt, set, nset, &ovf)) != GX_OK) {
            free(xs);
            return rc;
        }
        /* a modulo index keeps a moved set only when its lines share T's
         * value bits: reduce one inside tt's coset instead */
        if (!ovf && !tab && h->modulo && (rc = coset_evset(s, tt, set, &nset)) != GX_OK) {
            free(xs);
            return rc;
        }
        if (!ovf && !tab && h->modulo && nset > 0)
            ovf = 1;
        if (!ovf)
            continue;
        uint64_t want_idx = gx_hash_eval(h, tt);
        size_t n = 0, nin = 0;
        /* up to 32 points predicted congruent and 16 others: a function
         * wrong on a few percent of the pairs (a value bit off by a slice
         * mask, which errs only in the slices where that mask's parity is
         * odd: a few percent of all pairs) shows only in the congruent
         * ones, of which a random draw gives 1/m.
         * The coset is walked in a random order (an odd stride) */
        uint64_t np_k = (uint64_t)1 << s->k, c0 = gx_rng_below(&s->ctx->rng, np_k);
        uint64_t stride = (gx_rng_below(&s->ctx->rng, np_k) | 1) & (np_k - 1);
        if (!stride)
            stride = 1;
        for (uint64_t i = 0; i < np_k && n < VERIFY_SAME + VERIFY_OTHER; i++) {
            uint64_t x = tt ^ span_point(s->kb, s->k, (c0 + i * stride) & (np_k - 1));
            if (x == tt)
                continue;
            int same = gx_hash_eval(h, x) == want_idx;
            if ((same && nin >= VERIFY_SAME) || (!same && n - nin >= VERIFY_OTHER))
                continue;
            int dup = 0;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x; /* a line of the set itself */
            if (dup)
                continue;
            pts[n] = x;
            want[n++] = (uint8_t)same;
            nin += (size_t)same;
        }
        if ((rc = verify_probe(s, set, nset, pts, want, n, ev)) != GX_OK) {
            free(xs);
            return rc;
        }
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += ev[i] != want[i];
        (*tested)++;
        bad_all += bad;
        if (bad > 1 || bad_all > 2) /* a few wrong pairs per coset add up */
            *agree = 0;
    }
    free(xs);
    return GX_OK;
}

static void write_sets(gx_infer *ctx, sets_ctx *vs, uint32_t sets, const uint64_t *masks,
                       int n, uint64_t modulo, int lo, int hi, double conf_sets, double conf_hash,
                       const char *how)
{
    gx_profile *p = ctx->out;
    char v[160], m[160];
    ctx->sets_per_slice = sets;
    gx_hash_clear(&ctx->set_hash);
    if (n > 0) {
        ctx->set_hash.present = 1;
        ctx->set_hash.n_masks = n;
        for (int i = 0; i < n; i++)
            ctx->set_hash.masks[i] = masks[i];
        ctx->set_hash.modulo = modulo;
        ctx->set_hash.obs_lo = lo;
        ctx->set_hash.obs_hi = hi;
    }
    if (n > 0 && vs) {
        int agree = 1, tested = 0;
        if (verify_function(vs, &ctx->set_hash, &agree, &tested) != GX_OK)
            agree = 0;
        if (!agree)
            conf_hash = fmin(conf_hash, 0.4);
        else if (tested == 0 && vs->k < __builtin_popcountll(vs->space) && !vs->vote_sure)
            conf_hash = fmin(conf_hash, 0.8); /* other cosets exist, none checked */
    }
    uint64_t geom = (uint64_t)ctx->slices * sets * ctx->ways * ctx->line_bytes;
    uint64_t cap = ctx->l2_capacity;
    double rel = cap ? fabs((double)geom - (double)cap) / (double)cap : NAN;
    int agree = cap && rel <= SETS_CAP_TOL;
    if (cap && !agree) {
        conf_sets = fmin(conf_sets, 0.3);
        conf_hash = fmin(conf_hash, 0.3);
    }
    if (!cap) { /* nothing to cross-check against */
        conf_sets = fmin(conf_sets, 0.9);
        conf_hash = fmin(conf_hash, 0.9);
    }
    int in_sets = conf_sets >= 0.9, in_hash = n > 0 && conf_hash >= 0.9 && in_sets;
    if (in_sets) {
        p->l2.present = 1;
        p->l2.sets_per_slice = sets;
        gx_profile_set_confidence(p, "l2.sets_per_slice", conf_sets);
    }
    if (in_hash) {
        gx_hash_clear(&p->l2.set_hash);
        gx_hash_copy(&p->l2.set_hash, &ctx->set_hash);
        gx_profile_set_confidence(p, "l2.hash.set", conf_hash);
    }
    snprintf(v, sizeof v, "%u", sets);
    snprintf(m, sizeof m, "%s; x %u slices x %u ways x %u B = %llu B (levels %llu, %s)", how,
             ctx->slices, ctx->ways, ctx->line_bytes, (unsigned long long)geom,
             (unsigned long long)cap, !cap ? "unknown" : agree ? "agrees" : "DISAGREES");
    infer_report_row(ctx, "l2.sets_per_slice", v, m, conf_sets, in_sets);
    int k;
    if (n > 0) {
        k = snprintf(v, sizeof v, "%d masks%s:", n, modulo ? " + modulo" : "");
        for (int i = 0; i < n && k > 0 && (size_t)k < sizeof v - 12; i++)
            k += snprintf(v + k, sizeof v - (size_t)k, " 0x%llx", (unsigned long long)masks[i]);
        snprintf(m, sizeof m, "congruence classes within a slice, bits %d..%d", lo, hi);
    } else {
        snprintf(v, sizeof v, "unknown%s", modulo ? " (not XOR; mod sets_per_slice?)" : "");
        snprintf(m, sizeof m, "classes counted, no value-mod-m function over bits %d..%d fits",
                 lo, hi);
    }
    infer_report_row(ctx, "l2.hash.set", v, m, conf_hash, in_hash);
}

static int sets_setup(sets_ctx *s, gx_infer *ctx)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    if (!ctx->ways || ctx->n_evsets < 1 || ctx->evsets_generation != ctx->arena_generation)
        return gx_fail(ctx->msg, GX_EUNSURE, "sets: needs the ways stage's eviction sets");
    if (!ctx->slices)
        return gx_fail(ctx->msg, GX_EUNSURE, "sets: needs the slice count");
    s->es = &ctx->evsets[0];
    s->w = ctx->ways;
    s->line = ctx->line_bytes ? ctx->line_bytes : 128;
    s->page = ctx->info->page_bytes;
    s->lo = gx_log2_u64(s->line);
    s->hi = gx_log2_u64(s->page) - 1;
    s->space = ((s->hi >= 63) ? ~0ull : (((uint64_t)1 << (s->hi + 1)) - 1)) &
               ~(((uint64_t)1 << s->lo) - 1);
    s->toff = s->es->target % s->page;
    s->base = s->es->target - s->toff;
    if (ctx->slices > 1) {
        if (!ctx->slice_hash.present)
            return gx_fail(ctx->msg, GX_EUNSURE, "sets: needs the slice hash");
        for (int i = 0; i < ctx->slice_hash.n_masks; i++)
            s->smask[s->ns++] = ctx->slice_hash.masks[i] & s->space;
    }
    s->k = gx_gf2_annihilator(s->smask, (size_t)s->ns, s->space, s->kb);
    if (s->k > SETS_MAX_K)
        return gx_fail(ctx->msg, GX_ERANGE, "sets: %d free bits in a slice", s->k);
    return gx_evx_init(&s->ev, ctx, 0);
}

/* T's class among the 2^k points: sorted in-page offsets. */
static int class_of_target(sets_ctx *s, double sets_est, uint64_t **ct, size_t *nct)
{
    size_t np = (size_t)1 << s->k;
    uint64_t *offs = malloc(np * sizeof *offs);
    uint8_t *ev = malloc(np);
    *ct = NULL;
    *nct = 0;
    if (!offs || !ev) {
        free(offs);
        free(ev);
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (size_t c = 0; c < np; c++)
        offs[c] = s->toff ^ span_point(s->kb, s->k, c);
    int rc = probe_offsets(s, s->es->lines, s->es->n, offs + 1, np - 1, batch_for(s, sets_est),
                           ev + 1);
    size_t n = 0;
    if (rc == GX_OK) {
        ev[0] = 1; /* the target itself */
        for (size_t c = 0; c < np; c++)
            if (ev[c])
                offs[n++] = offs[c];
        qsort(offs, n, sizeof *offs, gx_cmp_u64);
        *ct = offs;
        *nct = n;
    } else {
        free(offs);
    }
    free(ev);
    return rc;
}

/* Probe again the points of T xor span(b) that the first pass missed; add
 * those evicted now. */
static int repair_class(sets_ctx *s, const gx_gf2_basis *b, double sets_est, uint64_t **ct,
                        size_t *nct)
{
    size_t full = (size_t)1 << b->n, nm = 0;
    uint64_t *miss = malloc(full * sizeof *miss);
    uint64_t *grown = realloc(*ct, full * sizeof *grown);
    uint8_t *ev = malloc(full);
    if (!miss || !grown || !ev) {
        free(miss);
        free(ev);
        if (grown)
            *ct = grown;
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    *ct = grown;
    for (size_t c = 0; c < full; c++) {
        uint64_t x = s->toff ^ span_point(b->v, b->n, c);
        if (!in_sorted(*ct, *nct, x))
            miss[nm++] = x;
    }
    int rc = probe_offsets(s, s->es->lines, s->es->n, miss, nm, batch_for(s, sets_est), ev);
    size_t n = *nct;
    for (size_t i = 0; rc == GX_OK && i < nm; i++)
        if (ev[i])
            (*ct)[n++] = miss[i];
    qsort(*ct, n, sizeof **ct, gx_cmp_u64);
    *nct = n;
    free(miss);
    free(ev);
    return rc;
}

/* An XOR set index makes every class a translate of T's: check two. The
 * class of T^d (its eviction set = the target's moved by d) must be
 * exactly (T^d) xor span(k0) among 16 of its members and 16 others. */
static int check_translations(sets_ctx *s, const uint64_t *k0, int nk0, double sets_est,
                              int *ok)
{
    *ok = 1;
    gx_gf2_basis b0;
    gx_gf2_basis_from(&b0, k0, (size_t)nk0);
    uint64_t set[GX_EVX_MAX_WAYS], pts[32];
    uint8_t ev[32], want[32];
    for (int t = 0; t < 2 && *ok; t++) {
        uint64_t d = 0;
        for (int tries = 0; tries < 64 && (!d || gx_gf2_basis_contains(&b0, d)); tries++)
            d = span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
        if (!d || gx_gf2_basis_contains(&b0, d))
            return GX_OK; /* one class only */
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        /* distinct points only: a line probed twice reloads as a hit the
         * second time */
        size_t n = 0;
        for (int i = 0; i < 16; i++) {
            uint64_t in = span_point(k0, nk0, gx_rng_below(&s->ctx->rng, (uint64_t)1 << nk0));
            uint64_t out = span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
            uint64_t cand[2] = {s->toff ^ d ^ in, s->toff ^ out};
            uint8_t wv[2] = {1, 0};
            for (int j = 0; j < 2; j++) {
                if (j == 1 && gx_gf2_basis_contains(&b0, out ^ d))
                    continue;
                int dup = 0;
                for (size_t q = 0; q < n && !dup; q++)
                    dup = pts[q] == cand[j];
                if (!dup) {
                    pts[n] = cand[j];
                    want[n++] = wv[j];
                }
            }
        }
        int rc = probe_offsets(s, set, s->es->n, pts, n, batch_for(s, sets_est), ev);
        if (rc != GX_OK)
            return rc;
        /* look again at the disagreeing ones (a randomized policy can spare
         * a congruent line once) */
        uint64_t again[32];
        uint8_t wa[32], ev2[32];
        size_t na = 0;
        for (size_t i = 0; i < n; i++)
            if (ev[i] != want[i]) {
                again[na] = pts[i];
                wa[na++] = want[i];
            }
        if (na > 4) {
            *ok = 0;
            break;
        }
        if (na && (rc = probe_offsets(s, set, s->es->n, again, na, batch_for(s, sets_est), ev2)) !=
                      GX_OK)
            return rc;
        size_t persist = 0;
        for (size_t i = 0; i < na; i++)
            persist += ev2[i] != wa[i];
        if (persist > 1) /* one answer may still be noise */
            *ok = 0;
    }
    return GX_OK;
}

/* Plain modulo: value = address bits [sh, sh + nb) as an integer. Tried
 * first (real GPUs index this way; a value bit above the page only adds a
 * per-page constant, which keeps the partition). */
static int fit_contiguous(const sets_ctx *s, const mod_fit *full, int *sh_out, int *nb_out)
{
    size_t np = (size_t)1 << full->n;
    uint32_t m = full->m;
    int32_t *map = malloc(2 * (size_t)m * sizeof *map);
    if (!map)
        return 0;
    int found = 0;
    for (int sh = s->lo; sh <= s->hi && !found; sh++)
        for (int nb = 1; sh + nb - 1 <= s->hi && !found; nb++) {
            if (((uint64_t)1 << nb) < m)
                continue;
            int32_t *inv = map + m;
            for (uint32_t r = 0; r < m; r++)
                map[r] = inv[r] = -1;
            int ok = 1;
            for (size_t c = 0; c < np && ok; c++) {
                uint64_t x = s->toff ^ span_point(full->q, full->n, c);
                int32_t g = (int32_t)(((x >> sh) & (((uint64_t)1 << nb) - 1)) % m);
                int32_t l = full->lab[c];
                if (map[l] < 0 && inv[g] < 0) {
                    map[l] = g;
                    inv[g] = l;
                } else if (map[l] != g || inv[g] != l) {
                    ok = 0;
                }
            }
            if (ok) {
                *sh_out = sh;
                *nb_out = nb;
                found = 1;
            }
        }
    free(map);
    return found;
}

/* The partition's stabilizer: differences c-space w with lab[c^w] ==
 * lab[c] for at least 90% of the cells (a few misclassified points must not
 * hide it; candidates: the members of the classes of cells 0 and 1). Then
 * every coset of it takes its majority label (repairing those points), and
 * the classes are renumbered (a stray class disappears). */
static int partition_stabilizer(mod_fit *f, uint64_t *out)
{
    size_t np = (size_t)1 << f->n;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (uint64_t w = 1; w < np; w++) {
        if ((f->lab[w] != f->lab[0] && f->lab[w ^ 1] != f->lab[1]) ||
            gx_gf2_basis_contains(&b, w))
            continue;
        size_t same = 0;
        for (size_t c = 0; c < np; c++)
            same += f->lab[c ^ w] == f->lab[c];
        if (same * 10 >= np * 9)
            gx_gf2_basis_add(&b, w);
    }
    for (int i = 0; i < b.n; i++)
        out[i] = b.v[i];
    size_t nc = (size_t)1 << b.n;
    int32_t *vote = malloc(nc * sizeof *vote), *map = malloc(f->m * sizeof *map);
    uint8_t *done = calloc(np, 1);
    if (b.n > 0 && vote && map && done) {
        for (size_t c = 0; c < np; c++) {
            if (done[c])
                continue;
            int32_t best = f->lab[c];
            size_t best_n = 0;
            for (size_t k = 0; k < nc; k++)
                vote[k] = f->lab[c ^ span_point(out, b.n, k)];
            for (size_t k = 0; k < nc; k++) {
                size_t cnt = 0;
                for (size_t q = 0; q < nc; q++)
                    cnt += vote[q] == vote[k];
                if (cnt > best_n) {
                    best_n = cnt;
                    best = vote[k];
                }
            }
            for (size_t k = 0; k < nc; k++) {
                size_t x = c ^ span_point(out, b.n, k);
                f->lab[x] = best;
                done[x] = 1;
            }
        }
        f->m = renumber_labels(f->lab, np, map, f->m);
    }
    free(vote);
    free(map);
    free(done);
    return b.n;
}

/* Do address masks (value mod m) reproduce the measured partition of the
 * points T xor span(full->q)? */
static int masks_reproduce_c(const sets_ctx *s, const mod_fit *full, const uint64_t *masks,
                             int n, uint32_t m, uint64_t c0);

static int masks_reproduce(const sets_ctx *s, const mod_fit *full, const uint64_t *masks, int n,
                           uint32_t m)
{
    return masks_reproduce_c(s, full, masks, n, m, 0);
}

/* As masks_reproduce, with c0 xored into the packed bits. */
static int masks_reproduce_c(const sets_ctx *s, const mod_fit *full, const uint64_t *masks,
                             int n, uint32_t m, uint64_t c0)
{
    size_t np = (size_t)1 << full->n;
    int32_t *map = malloc(2 * (size_t)(m > full->m ? m : full->m) * sizeof *map);
    if (!map || full->m != m)
        return free(map), 0;
    int32_t *inv = map + m;
    for (uint32_t r = 0; r < m; r++)
        map[r] = inv[r] = -1;
    int ok = 1;
    for (size_t c = 0; c < np && ok; c++) {
        uint64_t x = s->toff ^ span_point(full->q, full->n, c);
        int32_t g = (int32_t)((gx_gf2_apply(masks, n, x) ^ c0) % m), l = full->lab[c];
        if (map[l] < 0 && inv[g] < 0) {
            map[l] = g;
            inv[g] = l;
        } else if (map[l] != g || inv[g] != l) {
            ok = 0;
        }
    }
    free(map);
    return ok;
}


/* The fitted frame may be the true one composed with a symmetry of the
 * partition that needs a constant (e.g. bits 1 and 3 mod 5 swapped and
 * complemented); the linear lift then needs the inverse bit permutation.
 * Search the permutations that keep each bit's step |2^i mod m| for one
 * whose masks reproduce T's coset. */
static int perm_search(const sets_ctx *s, const mod_fit *full, const uint64_t *out, int n,
                       uint32_t m, int *perm, uint8_t *used, int i, uint64_t *res, long *budget)
{
    if ((*budget)-- <= 0)
        return 0;
    if (i == n) {
        for (int r = 0; r < n; r++)
            res[r] = out[perm[r]];
        return masks_reproduce(s, full, res, n, m);
    }
    uint64_t ki = bit_step(i, m);
    for (int j = 0; j < n; j++) {
        if (used[j] || bit_step(j, m) != ki)
            continue;
        used[j] = 1;
        perm[i] = j;
        if (perm_search(s, full, out, n, m, perm, used, i + 1, res, budget))
            return 1;
        used[j] = 0;
    }
    return 0;
}

/* Value of masks (mod m) at x, after xoring delta into the packed bits. */
static uint32_t mod_value(const uint64_t *masks, int n, uint64_t x, uint64_t delta, uint32_t m)
{
    return (uint32_t)((gx_gf2_apply(masks, n, x) ^ delta) % m);
}

/* Several lifts fit every measured coset alike: probe, in random slice
 * cosets, the points on which they disagree (congruent with the coset's
 * target or not), and keep the one with the fewest wrong predictions.
 * *pick = -1 when none stays within 2 + 1/32 of them wrong. */
static int discriminate(sets_ctx *s, uint64_t (*alts)[SETS_MAX_N], int na, int n, uint32_t m,
                        int *pick)
{
    uint64_t set[GX_EVX_MAX_WAYS], pts[32];
    uint8_t ev[32];
    int errs[SETS_MAX_ALTS] = {0}, seen[SETS_MAX_ALTS] = {0};
    gx_gf2_basis kb;
    gx_gf2_basis_from(&kb, s->kb, (size_t)s->k);
    for (int t = 0; t < 12; t++) {
        uint64_t d = gx_rng_below(&s->ctx->rng, s->page / s->line) * s->line;
        if (gx_gf2_basis_contains(&kb, d & s->space))
            continue;
        uint64_t tt = s->toff ^ d;
        size_t np = 0;
        for (uint64_t q = 0; q < ((uint64_t)1 << s->k) && np < 32; q++) {
            uint64_t x = tt ^ span_point(s->kb, s->k, q);
            int any = 0, all = 1;
            for (int a = 0; a < na; a++) {
                int c = mod_value(alts[a], n, x, 0, m) == mod_value(alts[a], n, tt, 0, m);
                any |= c;
                all &= c;
            }
            if (x != tt && any && !all)
                pts[np++] = x;
        }
        if (!np)
            continue;
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        int ovf = 0, rc;
        if ((rc = set_overflows(s, tt, set, s->es->n, &ovf)) != GX_OK)
            return rc;
        uint32_t nset = s->es->n;
        if (!ovf && (rc = coset_evset(s, tt, set, &nset)) != GX_OK)
            return rc;
        if (!ovf && nset > 0) { /* reduced inside tt's coset (its lines are no points) */
            size_t k2 = 0;
            for (size_t q = 0; q < np; q++) {
                int dup = 0;
                for (uint32_t i = 0; i < nset && !dup; i++)
                    dup = set[i] == s->base + pts[q];
                if (!dup)
                    pts[k2++] = pts[q];
            }
            np = k2;
            ovf = np > 0;
        }
        if (!ovf)
            continue;
        if ((rc = probe_offsets(s, set, nset, pts, np, 8, ev)) != GX_OK)
            return rc;
        for (int a = 0; a < na; a++)
            for (size_t q = 0; q < np; q++) {
                seen[a]++;
                errs[a] += (mod_value(alts[a], n, pts[q], 0, m) ==
                            mod_value(alts[a], n, tt, 0, m)) != ev[q];
            }
    }
    *pick = -1;
    /* the points are where the lifts disagree, so a wrong lift errs on
     * many of them; but a lift off by a slice mask errs only in the slices
     * where that mask's parity is odd, and only on the points those slices
     * contribute (about a tenth of them): a proportional 10% allowance
     * would keep it, so the allowance is 2 + 1/32 of the points seen */
    for (int a = 0; a < na; a++)
        if (errs[a] <= 2 + seen[a] / 32 && (*pick < 0 || errs[a] < errs[*pick]))
            *pick = a;
    return GX_OK;
}

static int slice_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset);


/* discriminate under a table slice hash: a set moved by d leaves its slice,
 * so the lifts are told apart ACROSS slice cosets instead: targets in other
 * slices (sets reduced inside their slice, verified), each probed one line
 * at a time at up to 40 lines of other slice cosets of its slice. The lift
 * with the fewest wrong predictions is kept (*pick = -1 when none stays
 * within 2 + 1.25% errors: a lift that is wrong only for some slice
 * directions errs only on the lines whose slice coset flips those
 * directions, a few percent of the lines probed in one page). */
static int discriminate_table(sets_ctx *s, uint64_t (*alts)[SETS_MAX_N], int na, int n,
                              uint32_t m, int *pick)
{
    const uint32_t *tab = s->ctx->slice_hash.table;
    uint64_t set[GX_EVX_MAX_WAYS], pts[40];
    uint8_t ev[40];
    int errs[SETS_MAX_ALTS] = {0}, seen = 0, rc = GX_OK;
    uint64_t nl = s->page / s->line;
    *pick = -1;
    for (int t = 0; rc == GX_OK && !s->bank_done && t < 12 && s->bank_n < 4; t++) {
        uint64_t tt = gx_rng_below(&s->ctx->rng, nl) * s->line, tb = slice_bits(s, tt);
        uint32_t nset = 0;
        if (tb == slice_bits(s, s->toff) || (rc = slice_evset(s, tt, set, &nset)) != GX_OK ||
            nset == 0)
            continue;
        size_t np = 0;
        uint64_t start = gx_rng_below(&s->ctx->rng, nl);
        for (uint64_t i = 0; i < nl && np < 40; i++) {
            uint64_t x = ((start + i) % nl) * s->line, sb = slice_bits(s, x);
            if (x == tt || sb == tb)
                continue;
            int same_slice = 1, dup = 0;
            for (int j = 0; j < s->nh && same_slice; j++)
                same_slice = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
            for (uint32_t q = 0; q < nset && !dup && same_slice; q++)
                dup = set[q] == s->base + x;
            if (same_slice && !dup)
                pts[np++] = x;
        }
        int probed = 0;
        if (np < 8)
            continue;
        if ((rc = probe_if_evset(s, tt, set, nset, pts, np, ev, &probed)) != GX_OK)
            break;
        if (!probed)
            continue;
        s->bank_tt[s->bank_n] = tt;
        s->bank_np[s->bank_n] = np;
        memcpy(s->bank_x[s->bank_n], pts, np * sizeof *pts);
        memcpy(s->bank_ev[s->bank_n++], ev, np);
    }
    s->bank_done = 1;
    int targets = s->bank_n;
    for (int b = 0; b < s->bank_n; b++) {
        seen += (int)s->bank_np[b];
        for (int a = 0; a < na; a++) {
            uint32_t ref = mod_value(alts[a], n, s->bank_tt[b], 0, m);
            for (size_t q = 0; q < s->bank_np[b]; q++)
                errs[a] += (mod_value(alts[a], n, s->bank_x[b][q], 0, m) == ref) !=
                           s->bank_ev[b][q];
        }
    }
    /* the random points are mostly not congruent under any lift (a random
     * point is congruent with probability 1/m), so several lifts, most of
     * them wrong, can score without an error: each bank target is also
     * probed at points of other cosets of its slice on which these lifts
     * disagree */
    for (int b = 0; rc == GX_OK && na > 1 && b < s->bank_n; b++) {
        uint64_t tt = s->bank_tt[b], tb = slice_bits(s, tt);
        uint32_t nset = 0;
        if ((rc = slice_evset(s, tt, set, &nset)) != GX_OK || nset == 0)
            continue;
        size_t np = 0;
        uint64_t start = gx_rng_below(&s->ctx->rng, nl);
        for (uint64_t i = 0; i < nl && np < 24; i++) {
            uint64_t x = ((start + i) % nl) * s->line, sb = slice_bits(s, x);
            if (x == tt || sb == tb)
                continue;
            int same_slice = 1, dup = 0, any = 0, all = 1;
            for (int j = 0; j < s->nh && same_slice; j++)
                same_slice = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
            for (int a = 0; a < na && same_slice && (all || !any); a++) {
                int c = mod_value(alts[a], n, x, 0, m) == mod_value(alts[a], n, tt, 0, m);
                any |= c;
                all &= c;
            }
            if (!same_slice || !any || all)
                continue;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x;
            for (size_t q = 0; q < s->bank_np[b] && !dup; q++)
                dup = s->bank_x[b][q] == x;
            if (!dup)
                pts[np++] = x;
        }
        int probed = 0;
        if (!np || (rc = probe_if_evset(s, tt, set, nset, pts, np, ev, &probed)) != GX_OK ||
            !probed)
            continue;
        seen += (int)np;
        for (int a = 0; a < na; a++) {
            uint32_t ref = mod_value(alts[a], n, tt, 0, m);
            for (size_t q = 0; q < np; q++)
                errs[a] += (mod_value(alts[a], n, pts[q], 0, m) == ref) != ev[q];
        }
    }
    if (!targets)
        return rc;
    for (int a = 0; a < na; a++)
        if (errs[a] <= 2 + seen / 80 && (*pick < 0 || errs[a] < errs[*pick]))
            *pick = a;
    return rc;
}

/* A table slice hash, a modulo set index: an eviction set for the in-page
 * line tt, reduced from the page's lines that lie in tt's slice under every
 * possible h (a moved set does not keep a modulo congruence). *nset = 0
 * when no verified set came out. */
static int slice_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset)
{
    *nset = 0;
    for (int i = 0; i < s->n_ec; i++)
        if (s->ec_t[i] == tt) {
            *nset = s->ec_n[i];
            memcpy(set, s->ec_set[i], (size_t)*nset * sizeof *set);
            return GX_OK;
        }
    const uint32_t *tab = s->ctx->slice_hash.table;
    uint64_t nl = s->page / s->line, tb = slice_bits(s, tt);
    uint64_t *pool = malloc((size_t)nl * sizeof *pool);
    if (!pool)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    size_t np = 0;
    for (uint64_t i = 0; i < nl && s->nh > 0; i++) {
        uint64_t x = i * s->line, sb = slice_bits(s, x);
        int same = x != tt;
        for (int j = 0; j < s->nh && same; j++)
            same = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
        if (same)
            pool[np++] = s->base + x;
    }
    gx_rng_shuffle_u64(&s->ctx->rng, pool, (uint64_t)np);
    gx_evx_result res;
    memset(&res, 0, sizeof res);
    int rc = np > s->w ? gx_evx_find(&s->ev, s->base + tt, pool, np, &res) : GX_EUNSURE;
    free(pool);
    if (rc == GX_EUNSURE)
        return GX_OK;
    if (rc != GX_OK)
        return rc;
    if (res.verified && res.n == s->w) {
        memcpy(set, res.lines, (size_t)res.n * sizeof *set);
        *nset = res.n;
    }
    if (s->n_ec < SETS_EC_MAX) { /* failures too: not tried again */
        s->ec_t[s->n_ec] = tt;
        s->ec_n[s->n_ec] = *nset;
        memcpy(s->ec_set[s->n_ec++], set, (size_t)*nset * sizeof *set);
    }
    return GX_OK;
}

/* Several unobservable slice parts h fit the lines of T's page congruent
 * with T (s->hs): then few lines lie in one slice under every one of them.
 * The slices stage's predictor identifies the page (its XOR constant z is
 * h in the slice hash's frame, checked on T): when z is one of s->hs, it
 * is the only one kept. */
static void pin_page_h(sets_ctx *s)
{
    gx_infer *ctx = s->ctx;
    const uint32_t *tab = ctx->slice_hash.table;
    if (s->nh <= 1 || !ctx->slicepred || !tab)
        return;
    gx_slicepred_page pg;
    if (!identify_target_page(s, &pg) || pg.z >> s->ns)
        return;
    uint64_t a0 = slice_bits(s, s->toff) ^ pg.z;
    if (gx_slicepred_predict(ctx->slicepred, &pg, s->base + s->toff) != (int)tab[a0])
        return;
    for (int j = 0; j < s->nh; j++)
        if (s->hs[j] == pg.z) {
            s->hs[0] = s->hs[j];
            s->nh = 1;
            return;
        }
}

/* A table slice hash: sweep T's page against T's eviction set once, which
 * gives the lines of the page congruent with T and the page's possible
 * unobservable slice parts (s->cong, s->hs: for moved_set). */
static int table_page_sweep(sets_ctx *s)
{
    if (s->cong || !s->ctx->slice_hash.table || s->ns > 14 ||
        s->page / s->line > ((uint64_t)1 << 16))
        return GX_OK;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    int extra = 0;
    sweep_diffs dl = {NULL, 0, 0};
    int rc = sweep_target(s, s->toff, s->es->lines, &b, &extra, &dl);
    if (rc == GX_OK)
        rc = table_page_info(s, dl.v, dl.n);
    free(dl.v);
    if (rc == GX_OK)
        pin_page_h(s);
    return rc;
}

/* A table slice hash puts several slice cosets in one slice: check the
 * modulo function ACROSS them. Targets T xor d in other slices (sets moved
 * inside the page, verified by an overflow test), probed at lines of OTHER
 * slice cosets that lie in the target's slice under every possible h, half
 * of them predicted congruent. *tested = targets with at least 2 predicted
 * congruent points; *agree = 0 when one of them had more than one wrong
 * answer. */
static int verify_cross_cosets(sets_ctx *s, const uint64_t *masks, int n, uint32_t m,
                               int *tested, int *agree)
{
    *tested = 0;
    *agree = 1;
    if (!s->cong || s->nh == 0)
        return GX_OK;
    const uint32_t *tab = s->ctx->slice_hash.table;
    uint64_t set[GX_EVX_MAX_WAYS], pts[40];
    uint8_t ev[40], want[40];
    uint64_t nl = s->page / s->line;
    int rc = GX_OK;
    for (int t = 0; rc == GX_OK && t < 8 && *tested < 4 && *agree; t++) {
        uint64_t tt = gx_rng_below(&s->ctx->rng, nl) * s->line, tb = slice_bits(s, tt);
        uint32_t nset = 0;
        if (tb == slice_bits(s, s->toff) || (rc = slice_evset(s, tt, set, &nset)) != GX_OK ||
            nset == 0)
            continue;
        uint32_t want_v = mod_value(masks, n, tt, 0, m);
        size_t np = 0, nin = 0;
        uint64_t start = gx_rng_below(&s->ctx->rng, nl);
        for (uint64_t i = 0; i < nl && np < 40; i++) {
            uint64_t x = ((start + i) % nl) * s->line, sb = slice_bits(s, x);
            if (x == tt || sb == tb)
                continue; /* other slice cosets only */
            int same_slice = 1;
            for (int j = 0; j < s->nh && same_slice; j++)
                same_slice = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
            if (!same_slice)
                continue;
            int same = mod_value(masks, n, x, 0, m) == want_v, dup = 0;
            if ((same && nin >= 20) || (!same && np - nin >= 20))
                continue;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x;
            if (dup)
                continue;
            pts[np] = x;
            want[np++] = (uint8_t)same;
            nin += (size_t)same;
        }
        if (nin < 2)
            continue;
        int probed = 0;
        if ((rc = probe_if_evset(s, tt, set, nset, pts, np, ev, &probed)) != GX_OK)
            break;
        if (!probed)
            continue;
        size_t bad = 0;
        for (size_t i = 0; i < np; i++)
            bad += ev[i] != want[i];
        (*tested)++;
        if (bad > 1)
            *agree = 0;
    }
    return rc;
}

/* A linear slice hash: an eviction set for tt reduced from the lines of
 * its own slice coset (tt xor span(K), one slice, same page). Used when
 * the target's set moved by tt ^ T does not evict tt: under a modulo set
 * index a moved set keeps the congruence only for lines whose value bits
 * equal T's (the ways stage's lines share T's residue, not its bits).
 * *nset = 0 when no verified set of W lines comes out. */
static int coset_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset)
{
    *nset = 0;
    size_t np = (size_t)1 << s->k, n = 0;
    if (s->cong || s->k < 1 || np <= s->w)
        return GX_OK;
    uint64_t *pool = malloc(np * sizeof *pool);
    if (!pool)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    for (size_t c = 1; c < np; c++)
        pool[n++] = s->base + (tt ^ span_point(s->kb, s->k, c));
    gx_rng_shuffle_u64(&s->ctx->rng, pool, (uint64_t)n);
    gx_evx_result res;
    memset(&res, 0, sizeof res);
    int rc = gx_evx_find(&s->ev, s->base + tt, pool, n, &res);
    free(pool);
    if (rc == GX_EUNSURE)
        return GX_OK;
    if (rc != GX_OK)
        return rc;
    if (res.verified && res.n == s->w) {
        memcpy(set, res.lines, (size_t)res.n * sizeof *set);
        *nset = res.n;
    }
    return GX_OK;
}

/* The masks fitted in T's coset say nothing about the slice directions
 * (a complement e_j of K): there each adds an unknown xor delta_j to the
 * packed bits. Measure it: target T^e_j with the eviction set moved by
 * e_j (verified), probe points of its coset, keep the deltas that predict
 * every answer (up to one), then probe points that the first survivor
 * calls congruent until one partition is left. delta_j = the packed bits
 * of e_j alone, so the new masks: the fitted ones on K, delta_j on e_j
 * (checked on T's coset by the caller). 1 when every direction resolved. */
static int lift_by_cosets(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n, uint32_t m,
                          uint64_t *out)
{
    uint64_t e[64], set[GX_EVX_MAX_WAYS], pts[48], delta[64], cand[64][SETS_DIR_CANDS];
    int nc[64] = {0};
    uint8_t ev[48];
    int ne = gx_gf2_complement_bits(s->kb, (size_t)s->k, s->space, e);
    size_t nd = (size_t)1 << n;
    uint16_t *bad = malloc(nd * sizeof *bad);
    if (!bad || ne > 24 || n > SETS_MAX_N)
        return free(bad), 0;
    int ok = 1;
    for (int j = 0; j < ne && ok; j++) {
        uint64_t tt = s->toff ^ e[j];
        uint32_t nset = s->es->n;
        if (s->cong) { /* a table slice hash: a set reduced inside tt's slice */
            if (slice_evset(s, tt, set, &nset) != GX_OK)
                nset = 0;
        } else
            for (uint32_t i = 0; i < s->es->n; i++)
                set[i] = s->es->lines[i] ^ e[j];
        int ovf = 0;
        if (nset == 0 || set_overflows(s, tt, set, nset, &ovf) != GX_OK)
            ovf = 0;
        if (!ovf && !s->cong && coset_evset(s, tt, set, &nset) == GX_OK && nset > 0)
            ovf = 1; /* reduced and verified inside tt's slice coset */
        if (!ovf) {
            ok = 0;
            break;
        }
        memset(bad, 0, nd * sizeof *bad);
        uint64_t lead = 0;
        size_t total = 0;
        for (int round = 0; round < 8; round++) {
            size_t np = 0;
            for (int tries = 0; tries < 4000 && np < 32; tries++) {
                uint64_t x = tt ^ span_point(s->kb, s->k,
                                             gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
                int dup = x == tt;
                for (uint32_t q = 0; q < nset && !dup; q++)
                    dup = set[q] == s->base + x; /* a line of the set itself */
                if (dup)
                    continue;
                /* after the first round: mostly points the leader calls congruent */
                if (round > 0 && tries < 3000 && np < 24 &&
                    mod_value(fm, n, x ^ e[j], lead, m) != mod_value(fm, n, s->toff, lead, m))
                    continue;
                pts[np++] = x;
            }
            if (probe_offsets(s, set, nset, pts, np, s->cong ? 1 : 8, ev) != GX_OK) {
                ok = 0;
                break;
            }
            total += np;
            /* answers are noisy (a randomized policy spares a line now and
             * then): keep the deltas within a small error budget */
            size_t alive = 0, first = nd;
            uint16_t tol = (uint16_t)(2 + total / 16), best = UINT16_MAX;
            for (size_t d = 0; d < nd; d++) {
                if (bad[d] > tol)
                    continue;
                uint32_t ref = mod_value(fm, n, s->toff, d, m);
                for (size_t q = 0; q < np && bad[d] <= tol; q++)
                    bad[d] += (uint16_t)((mod_value(fm, n, pts[q] ^ e[j], d, m) == ref) != ev[q]);
                if (bad[d] <= tol) {
                    alive++;
                    if (bad[d] < best) {
                        best = bad[d];
                        first = d;
                    }
                }
            }
            if (!alive) {
                ok = 0;
                break;
            }
            nc[j] = 0;
            for (size_t d = 0; d < nd && nc[j] < SETS_DIR_CANDS; d++)
                if (bad[d] == best) /* the best-supported ones only */
                    cand[j][nc[j]++] = d;
            /* next round targets the survivors in turn */
            lead = nc[j] ? cand[j][(size_t)round % (size_t)nc[j]] : first;
            if (round >= 2 && alive == 1)
                break;
            /* several survivors may split the coset alike: stop when all agree */
            int same = 1;
            for (size_t d = 0; d < nd && same; d++) {
                if (bad[d] > tol || d == first)
                    continue;
                /* compare over the whole coset (classes are small) */
                for (uint64_t q = 0; q < ((uint64_t)1 << s->k) && same; q++) {
                    uint64_t x = tt ^ span_point(s->kb, s->k, q);
                    uint32_t r1 = mod_value(fm, n, x ^ e[j], first, m);
                    uint32_t r2 = mod_value(fm, n, x ^ e[j], d, m);
                    same = (r1 == mod_value(fm, n, s->toff, first, m)) ==
                           (r2 == mod_value(fm, n, s->toff, d, m));
                }
            }
            if (round >= 2 && same)
                break;
        }
        (void)lead;
    }
    /* the survivors of each direction split its coset alike; T's own
     * coset decides between them (the fitted constant there is one of
     * several equivalent ones) */
    long combos = 1;
    for (int j = 0; ok && j < ne; j++)
        combos = combos * nc[j] > 256 ? 256 : combos * nc[j];
    int found = 0, nalt = 0, max_alts = s->cong ? SETS_TABLE_ALTS : SETS_MAX_ALTS;
    uint64_t alts[SETS_MAX_ALTS][SETS_MAX_N];
    for (long c = 0; ok && c < combos && !found; c++) {
        long rest = c;
        for (int j = 0; j < ne; j++) {
            delta[j] = cand[j][rest % nc[j]];
            rest /= nc[j];
        }
        int solved = 1;
        for (int i = 0; solved && i < n; i++) {
            uint64_t rows[128];
            uint8_t y[128];
            size_t nr = 0;
            for (int q = 0; q < s->k; q++) {
                rows[nr] = s->kb[q];
                y[nr++] = (uint8_t)gx_gf2_dot(fm[i], s->kb[q]);
            }
            for (int j = 0; j < ne; j++) {
                rows[nr] = e[j];
                y[nr++] = (uint8_t)(delta[j] >> i & 1);
            }
            solved = gx_gf2_solve(rows, y, nr, s->space, &out[i], NULL, NULL);
        }
        if (solved) {
            int perm[SETS_MAX_N];
            uint8_t used[SETS_MAX_N] = {0};
            long budget = 2000;
            if (perm_search(s, full, out, n, m, perm, used, 0, alts[nalt], &budget))
                nalt++;
        }
        found = nalt >= max_alts;
    }
    free(bad);
    if (!ok || nalt == 0)
        return 0;
    int pick = 0;
    if (nalt > 1 && s->cong && discriminate_table(s, alts, nalt, n, m, &pick) != GX_OK)
        return 0;
    if (nalt > 1 && !s->cong && discriminate(s, alts, nalt, n, m, &pick) != GX_OK)
        return 0;
    if (pick < 0) /* the probes could not tell the alternatives apart */
        return 0;
    memcpy(out, alts[pick], (size_t)n * sizeof *out);
    return 1;
}

/* A table slice hash: lift in the frame pm, then check across slice
 * cosets (verify_cross_cosets: at least 3 targets, every one right). */
static int lift_checked(sets_ctx *s, const mod_fit *full, const uint64_t *pm, int n, uint32_t m,
                        uint64_t *out)
{
    int xt = 0, xagree = 0;
    if (s->lift_tries++ >= SETS_LIFT_TRIES || !lift_by_cosets(s, full, pm, n, m, out))
        return 0;
    if (!s->cong) /* a linear slice hash: verify_function checks the result */
        return 1;
    if (verify_cross_cosets(s, out, n, m, &xt, &xagree) != GX_OK)
        return 0;

    return xt >= 3 && xagree;
}

/* A table slice hash: the lift reads other cosets in the fitted frame,
 * which may be the true one composed with a symmetry of T's coset (a
 * permutation of bits of equal step |2^i mod m|, with a constant). Try the
 * other frames (those that reproduce T's coset with some constant), at
 * most 24, until one lifts. */
static int lift_frames(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n, uint32_t m,
                       int *perm, uint8_t *used, int i, int *tries, uint64_t *out)
{
    if (*tries >= 24)
        return 0;
    if (i == n) {
        uint64_t pm[SETS_MAX_N];
        int ident = 1;
        for (int r = 0; r < n; r++) {
            pm[r] = fm[perm[r]];
            ident &= perm[r] == r;
        }
        if (ident)
            return 0; /* the fitted frame itself was tried */
        int rep = 0;
        for (uint64_t c = 0; c < ((uint64_t)1 << n) && !rep; c++)
            rep = masks_reproduce_c(s, full, pm, n, m, c);
        if (!rep)
            return 0;
        (*tries)++;
        return lift_checked(s, full, pm, n, m, out);
    }
    uint64_t ki = bit_step(i, m);
    for (int j = 0; j < n; j++) {
        if (used[j] || bit_step(j, m) != ki)
            continue;
        used[j] = 1;
        perm[i] = j;
        int r = lift_frames(s, full, fm, n, m, perm, used, i + 1, tries, out);
        used[j] = 0;
        if (r)
            return 1;
    }
    return 0;
}

/* A table slice hash: the fitted masks may differ from the true ones, on
 * T's coset, by g * L (an xor pattern g on the value bits times a linear
 * functional L of the coset) that leaves T's partition as it is and shows
 * only in other cosets. Try such frames (at most 16) until one lifts. */
static int lift_functionals(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n,
                            uint32_t m, uint64_t *out)
{
    if (full->n > 12 || n > 8)
        return 0;
    int tries = 0;
    for (uint64_t L = 1; L < ((uint64_t)1 << full->n) && tries < 16; L++) {
        uint64_t l = 0, rows[64];
        uint8_t y[64];
        for (int j = 0; j < full->n; j++) {
            rows[j] = full->q[j];
            y[j] = (uint8_t)(L >> j & 1);
        }
        if (!gx_gf2_solve(rows, y, (size_t)full->n, s->space, &l, NULL, NULL))
            continue;
        for (uint64_t g = 1; g < ((uint64_t)1 << n) && tries < 16; g++) {
            uint64_t pm[SETS_MAX_N];
            for (int i = 0; i < n; i++)
                pm[i] = fm[i] ^ ((g >> i & 1) ? l : 0);
            int rep = 0;
            for (uint64_t c = 0; c < ((uint64_t)1 << n) && !rep; c++)
                rep = masks_reproduce_c(s, full, pm, n, m, c);
            if (!rep)
                continue;
            tries++;
            if (lift_checked(s, full, pm, n, m, out))
                return 1;
        }
    }
    return 0;
}

static int modulo_path(sets_ctx *s, const uint64_t *ct, size_t nct, double sets_est, int last,
                       int *done)
{
    *done = 1;
    gx_infer *ctx = s->ctx;
    /* points: T xor span(cb). Many free bits: first drop the differences
     * that keep T's (large) class whole (they flip no value bit; z), which
     * the final masks must annihilate too */
    uint64_t cb[64], z[64];
    int ck = 0, nz = 0;
    /* A small class can be closed by chance under a direction that flips
     * value bits (with a few dozen members over a few values, a direction
     * maps the class onto itself with a probability that is not small):
     * factored only when the points are too many otherwise (2^k above
     * 2^12, unless the class is too small to trust or k fits the
     * unfactored search) */
    if (s->k <= 12 || nct < 16 || (nct < 32 && s->k <= SETS_MAX_N)) {
        memcpy(cb, s->kb, (size_t)s->k * sizeof *cb);
        ck = s->k;
    } else {
        gx_gf2_basis zb;
        class_span(ct, nct, s->toff, &zb);
        for (int i = 0; i < zb.n; i++)
            z[nz++] = zb.v[i];
        for (int i = 0; i < s->k; i++)
            if (gx_gf2_basis_add(&zb, s->kb[i]))
                cb[ck++] = s->kb[i];
    }
    if (ck > SETS_MAX_N)
        return gx_fail(ctx->msg, GX_ERANGE, "sets: 2^%d points in a slice: too many to classify",
                       ck);
    /* 1. the partition of all 2^ck points (c-space = coordinates over cb) */
    mod_fit full;
    memset(&full, 0, sizeof full);
    full.n = ck;
    memcpy(full.q, cb, (size_t)ck * sizeof *cb);
    full.lab = malloc(((size_t)1 << full.n) * sizeof *full.lab);
    if (!full.lab)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    int rc = classify_q(s, &full, ct, nct, sets_est);
    if (rc != GX_OK) {
        free(full.lab);
        return rc;
    }
    int sh = 0, nb = 0;
    if (fit_contiguous(s, &full, &sh, &nb)) {
        uint64_t masks[64];
        for (int i = 0; i < nb; i++)
            masks[i] = (uint64_t)1 << (sh + i);
        char how[96];
        snprintf(how, sizeof how, "%u classes over 2^%d points = address bits %d..%d mod %u",
                 full.m, ck, sh, sh + nb - 1, full.m);
        write_sets(ctx, s, full.m, masks, nb, full.m, s->lo, s->hi, 0.95, 0.95, how);
        free(full.lab);
        return GX_OK;
    }
    /* 2. K1 (flips no value bit) and Q: unit directions independent of it */
    uint64_t k1c[64];
    int nk1 = partition_stabilizer(&full, k1c);
    mod_fit f;
    memset(&f, 0, sizeof f);
    f.m = full.m;
    int qidx[SETS_MAX_N];
    gx_gf2_basis b;
    gx_gf2_basis_from(&b, k1c, (size_t)nk1);
    for (int j = 0; j < ck; j++)
        if (gx_gf2_basis_add(&b, (uint64_t)1 << j))
            qidx[f.n++] = j;
    f.lab = malloc(((size_t)1 << f.n) * sizeof *f.lab);
    if (!f.lab) {
        free(full.lab);
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (uint64_t c = 0; c < ((uint64_t)1 << f.n); c++) {
        uint64_t cc = 0;
        for (int j = 0; j < f.n; j++)
            if (c >> j & 1)
                cc |= (uint64_t)1 << qidx[j];
        f.lab[c] = full.lab[cc];
    }
    /* 3. value bits as functionals over Q, then over c-space, then masks */
    uint64_t a[SETS_MAX_N], beta = 0, alt[SETS_MAX_N];
    int alt_ok = 1, t_fixed = 0;
    int fitted = f.n <= SETS_MAX_N && fit_value_any(&f, a, &beta);
    for (int i = 0; fitted && i < f.n; i++) {
        uint64_t rows[64], phi = 0, mu = 0, null[64];
        uint8_t y[64];
        size_t nr = 0;
        for (int j = 0; j < f.n; j++) {
            rows[nr] = (uint64_t)1 << qidx[j];
            y[nr++] = (uint8_t)((a[i] >> j) & 1);
        }
        for (int j = 0; j < nk1; j++) {
            rows[nr] = k1c[j];
            y[nr++] = 0;
        }
        uint64_t cspace = ck >= 64 ? ~0ull : (((uint64_t)1 << ck) - 1);
        if (!gx_gf2_solve(rows, y, nr, cspace, &phi, NULL, NULL)) {
            fitted = 0;
            break;
        }
        /* address mask: <mu, cb_j> = phi_j, <mu, z> = 0, <mu, T> = beta_i */
        nr = 0;
        for (int j = 0; j < ck; j++) {
            rows[nr] = cb[j];
            y[nr++] = (uint8_t)((phi >> j) & 1);
        }
        for (int j = 0; j < nz && nr < 62; j++) {
            rows[nr] = z[j];
            y[nr++] = 0;
        }
        int nn = 0;
        /* the lowest-weight mask with these values on the coset's
         * differences; its constant on T is checked below as a whole */
        if (gx_gf2_solve(rows, y, nr, s->space, &mu, null, &nn))
            alt[i] = min_weight(mu, null, nn);
        else
            alt_ok = 0;
        rows[nr] = s->toff & s->space;
        y[nr++] = (uint8_t)((beta >> i) & 1);
        if (!gx_gf2_solve(rows, y, nr, s->space, &mu, null, &nn)) {
            /* T inside the span of the coset's differences: its constant
             * is fixed by them; the masks without it are checked below */
            t_fixed = 1;
            f.mask[i] = alt[i];
            continue;
        }
        f.mask[i] = min_weight(mu, null, nn);
    }
    if (fitted && t_fixed) {
        /* the fitted constant may need a symmetry of the partition: the
         * masks (or a step-keeping permutation of them) must reproduce T's
         * coset as they stand */
        int perm[SETS_MAX_N];
        uint8_t used[SETS_MAX_N] = {0};
        long budget = 2000;
        uint64_t res[SETS_MAX_N];
        fitted = alt_ok && perm_search(s, &full, alt, f.n, f.m, perm, used, 0, res, &budget);
        if (fitted) {
            memcpy(alt, res, (size_t)f.n * sizeof *res);
            memcpy(f.mask, res, (size_t)f.n * sizeof *res);
        }
    }
    /* several constants reproduce the partition in T's coset; prefer the
     * lowest-weight masks when their own constant does too */
    if (fitted && alt_ok && masks_reproduce(s, &full, alt, f.n, f.m))
        memcpy(f.mask, alt, (size_t)f.n * sizeof *alt);
    /* a table slice hash: T's page swept once (sets moved inside it) */
    int lifted = 0;
    if (fitted && s->ns > 0 && ctx->slice_hash.table && (rc = table_page_sweep(s)) != GX_OK) {
        free(full.lab);
        free(f.lab);
        return rc;
    }
    /* the slice directions: measured, when the slice hash has any. The
     * fitted frame first, then the other frames that fit T's coset alike (a
     * frame that differs from the true one by a symmetry of T's coset
     * explains no other coset by an xor on its bits). A table slice hash
     * with congruent lines: the lift must also hold across slice cosets;
     * a linear one, or a table one without them, is lifted the same way
     * (write_sets flags the unchecked table case below) */
    if (fitted && s->ns > 0) {
        int perm[SETS_MAX_N], tries = 0;
        uint8_t used[SETS_MAX_N] = {0};
        if (lift_checked(s, &full, f.mask, f.n, f.m, alt) ||
            lift_frames(s, &full, f.mask, f.n, f.m, perm, used, 0, &tries, alt) ||
            lift_functionals(s, &full, f.mask, f.n, f.m, alt)) {
            memcpy(f.mask, alt, (size_t)f.n * sizeof *alt);
            lifted = 1;
        }
    }
    char how[96];
    if (fitted) {
        /* a table slice hash puts several slice cosets in one slice: their
         * relative labels count only when checked across cosets (at least
         * two targets, every one right); otherwise flagged */
        int cross_ok = lifted && ctx->slice_hash.table && s->cong;
        double ch = !ctx->slice_hash.table ? 0.95 : cross_ok ? 0.95 : 0.6;
        snprintf(how, sizeof how, "%u classes over 2^%d points, %d value bits mod %u%s", f.m, ck,
                 f.n, f.m,
                 !ctx->slice_hash.table ? "" : cross_ok ? " (table slices: cross-checked)"
                                                        : " (table slices: unchecked)");
        s->vote_sure = ctx->slice_hash.table && cross_ok;
        write_sets(ctx, s, f.m, f.mask, f.n, f.m, s->lo, s->hi, 0.95, ch, how);
    } else {
        /* the count is exact when every point was classified right; the
         * function may use bits above the page, which no experiment in one
         * page can see. Residues of a value mod m are near uniform: a class
         * twice the size of another is two classes merged by a wrong probe */
        /* counts: over the 2^n cells of Q, n independent value bits give
         * every residue floor or ceil(2^n / m) cells; a stray, split or
         * merged class (misclassified points) breaks that */
        size_t np = (size_t)1 << f.n;
        uint32_t *cnt = calloc(f.m ? f.m : 1, sizeof *cnt);
        uint64_t lo_n = f.m ? np / f.m : 0, hi_n = f.m ? (np + f.m - 1) / f.m : 0;
        int exact = cnt != NULL && f.m > 0 && f.n >= 1;
        for (size_t c = 0; cnt && c < np; c++)
            cnt[f.lab[c]]++;
        /* a few misclassified cells may remain: allow 1/8 of a class */
        uint64_t tol = hi_n / 8 > 1 ? hi_n / 8 : 1;
        for (uint32_t r = 0; exact && r < f.m; r++)
            exact = cnt[r] + tol >= lo_n && cnt[r] <= hi_n + tol;
        free(cnt);
        if (!last) {
            /* no fit: a misclassified point or two break the exact
             * reproduction; the caller measures the partition again */
            *done = 0;
            if (exact)
                s->exact_m = f.m;
        } else {
            /* an earlier measurement with clean counts and the same m */
            exact = exact || (s->exact_m && s->exact_m == f.m);
            double csets = exact ? 0.95 : 0.5;
            snprintf(how, sizeof how, "%u classes over 2^%d points; no value-mod fit", f.m, ck);
            uint64_t none[1] = {0};
            write_sets(ctx, s, f.m, none, 0, f.m, s->lo, s->hi, csets, 0.2, how);
        }
    }
    free(full.lab);
    free(f.lab);
    return GX_OK;
}

/* Use the ways stage's eviction set e (its target, in its own page) as T;
 * the state learned for the previous T's page is dropped. 1 when switched
 * (e = 0 always switches back to the first set). */
static int switch_target(sets_ctx *s, int e)
{
    gx_infer *ctx = s->ctx;
    if (e >= ctx->n_evsets || e >= GX_INFER_MAX_EVSETS)
        return 0;
    const gx_evset *es = &ctx->evsets[e];
    uint64_t toff = es->target % s->page, base = es->target - toff;
    if (!es->lines || es->n != s->w || base + s->page > gx_target_arena_bytes(ctx->t))
        return 0;
    s->es = es;
    s->toff = toff;
    s->base = base;
    free(s->cong);
    free(s->hs);
    s->cong = NULL;
    s->hs = NULL;
    s->ncong = 0;
    s->nh = 0;
    s->n_ec = 0;
    s->lift_tries = 0;
    s->bank_done = 0;
    s->bank_n = 0;
    return 1;
}

int gx_stage_sets(gx_infer *ctx)
{
    sets_ctx s;
    int rc = sets_setup(&s, ctx);
    if (rc != GX_OK) {
        gx_evx_free(&s.ev);
        return rc;
    }
    double sets_est = 0;
    if (ctx->l2_capacity && ctx->slices && ctx->ways && s.line)
        sets_est = (double)ctx->l2_capacity / ((double)ctx->slices * ctx->ways * s.line);
    uint64_t *ct = NULL;
    size_t nct = 0;
    rc = class_of_target(&s, sets_est, &ct, &nct);
    if (rc == GX_OK) {
        /* linear: the class is T xor a subspace. Its span counts only
         * differences that map most members onto members (translation
         * invariance): a stray false positive does not enter it */
        uint64_t d[64];
        gx_gf2_basis b;
        class_span(ct, nct, s.toff, &b);
        if (b.n < 63 && nct > ((size_t)1 << b.n) &&
            nct - ((size_t)1 << b.n) <= 4 + ((size_t)1 << b.n) / 4) {
            /* a few strays: keep the members of T xor span(b) */
            size_t k2 = 0;
            for (size_t i = 0; i < nct; i++)
                if (gx_gf2_basis_contains(&b, ct[i] ^ s.toff))
                    ct[k2++] = ct[i];
            nct = k2;
        }
        if (b.n < 63 && nct < ((size_t)1 << b.n) && ((size_t)1 << b.n) - nct <= 256) {
            /* a few members of the span missing: probe them again (a
             * randomized policy lets a congruent line survive now and then) */
            rc = repair_class(&s, &b, sets_est, &ct, &nct);
        }
        int linear = rc == GX_OK && b.n < 63 && nct == ((size_t)1 << b.n);
        for (size_t i = 0; linear && i < nct; i++)
            linear = gx_gf2_basis_contains(&b, ct[i] ^ s.toff);
        if (linear) {
            for (int i = 0; i < b.n; i++)
                d[i] = b.v[i];
            int rho0 = s.k - b.n;
            double sets_lin = (double)((uint64_t)1 << (rho0 > 0 ? rho0 : 0));
            if (sets_est > 0 && fabs(sets_lin - sets_est) > 0.2 * sets_est)
                linear = 0; /* a small class closed by chance (a modulo) */
            if (linear && (rc = check_translations(&s, d, b.n, sets_est, &linear)) != GX_OK)
                linear = 0;
        }
        if (linear) {
            uint64_t masks[64];
            int nd = b.n, extra = 0, rho0 = s.k - b.n;
            double hconf = 0.99;
            sweep_diffs dl = {NULL, 0, 0};
            if (ctx->slice_hash.table) {
                if ((rc = table_constraints(&s, &extra, &dl)) != GX_OK)
                    dl.n = 0;
                rc = GX_OK;
            }
            int spare = 0;
            int rho = linear_masks(&s, d, nd, rho0, masks, &spare);
            if (ctx->slice_hash.table) {
                /* T's coset fixes the masks up to slice masks; the sweeps'
                 * cross-coset congruences fix the rest (by vote). Without
                 * enough of them the masks rest on the lowest-weight choice */
                int sure = 0;
                size_t ncross = 0;
                if (rho == rho0 && (rc = vote_with_foreign_pages(&s, masks, rho, &dl, &sure,
                                                                 &ncross)) != GX_OK)
                    sure = 0;
                rc = GX_OK;
                hconf = sure ? 0.95 : 0.6;
                s.vote_sure = sure;
            }
            free(dl.v);
            char how[96];
            snprintf(how, sizeof how, "class of 2^%d in 2^%d points: XOR, %d bits%s", b.n, s.k,
                     rho0, ctx->slice_hash.table ? " (+ page sweep)" : "");
            if (rho0 > GX_MAX_MASKS || rho != rho0)
                write_sets(ctx, &s, 1u << rho0, masks, 0, 0, s.lo, s.hi, 0.99, 0.2, how);
            else
                write_sets(ctx, &s, 1u << rho0, masks, rho, 0, s.lo, s.hi, 0.99, hconf, how);
        } else {
            int done = 0;
            /* no fit: the partition is measured again (a misclassified
             * point breaks the exact reproduction); at most SETS_MEASURES
             * times */
            for (int attempt = 0; rc == GX_OK && !done && attempt < SETS_MEASURES; attempt++) {
                /* T's class too may hold a stray point: measured again;
                 * the first one serves when the new one cannot be used */
                uint64_t *ct2 = NULL;
                size_t nct2 = 0;
                /* the last measurement uses another target when the ways
                 * stage left one: T's class can be closed by chance under
                 * differences that flip value bits (its few values form an
                 * affine subspace), which breaks the factoring of the free
                 * bits and every fit for this T alone */
                int moved = attempt == SETS_MEASURES - 1 && switch_target(&s, 1);
                if (attempt > 0 && class_of_target(&s, sets_est, &ct2, &nct2) != GX_OK) {
                    free(ct2);
                    ct2 = NULL;
                }
                if (moved && !ct2) {
                    switch_target(&s, 0);
                    moved = 0;
                }
                rc = ct2 ? modulo_path(&s, ct2, nct2, sets_est, attempt == SETS_MEASURES - 1, &done)
                         : modulo_path(&s, ct, nct, sets_est, attempt == SETS_MEASURES - 1, &done);
                if (rc != GX_OK && ct2) {
                    if (moved)
                        switch_target(&s, 0);
                    rc = modulo_path(&s, ct, nct, sets_est, attempt == SETS_MEASURES - 1, &done);
                }
                free(ct2);
            }
        }
    }
    infer_progress(ctx, "sets: %u per slice (%llu probe calls)", ctx->sets_per_slice,
                   (unsigned long long)s.probes);
    free(ct);
    free(s.cong);
    free(s.hs);
    gx_evx_free(&s.ev);
    return rc;
}
