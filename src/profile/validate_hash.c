/* validate_hash.c - the rules linking the index functions (l2.hash.slice,
 * l2.hash.set) to the L2 geometry.
 *
 * Notes:
 * - An index function has at most GX_HASH_MAX_MASKS masks: the model
 *   evaluates it through tables of 2^masks entries (src/model/l2.c).
 * - Masks are nonzero, linearly independent over GF(2) and use no bit
 *   below log2(line_bytes) (the hash works on line addresses); a measured
 *   profile's masks stay inside its observable_bits.
 * - Without a table the slice hash gives 2^masks slices (or the slices of
 *   one partition, near-far); a table maps onto every slice. Without a
 *   modulo the set hash gives 2^masks sets; a modulo is sets_per_slice and
 *   reachable (2^masks >= modulo). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "validate_internal.h"

/* Rank over GF(2) of the masks (Gaussian elimination on copies). */
static int gf2_rank(const uint64_t *m, int n)
{
    uint64_t v[GX_MAX_MASKS];
    int r = 0;
    memcpy(v, m, (size_t)n * sizeof *v);
    for (int bit = 63; bit >= 0 && r < n; bit--) {
        uint64_t b = (uint64_t)1 << bit;
        int piv = -1;
        for (int i = r; i < n; i++)
            if (v[i] & b) {
                piv = i;
                break;
            }
        if (piv < 0)
            continue;
        uint64_t t = v[piv];
        v[piv] = v[r];
        v[r] = t;
        for (int i = 0; i < n; i++)
            if (i != r && (v[i] & b))
                v[i] ^= v[r];
        r++;
    }
    return r;
}

static int check_masks(const gx_vctx *v, const gx_hash_fn *h, const char *name)
{
    const gx_profile *p = v->p;
    char f[64];
    snprintf(f, sizeof f, "%s.masks", name);
    if (h->n_masks < 0 || h->n_masks > GX_HASH_MAX_MASKS)
        return BAD(f, "%d masks: an index function has at most %d (the model evaluates it "
                   "by tables of 2^masks entries)", h->n_masks, GX_HASH_MAX_MASKS);
    uint64_t low = 0;
    if (p->l2.line_bytes && gx_is_pow2_u64(p->l2.line_bytes))
        low = (uint64_t)p->l2.line_bytes - 1;
    for (int i = 0; i < h->n_masks; i++) {
        snprintf(f, sizeof f, "%s.masks[%d]", name, i);
        if (h->masks[i] == 0)
            return BAD(f, "a mask must be nonzero");
        if (h->masks[i] & low)
            return BAD(f, "0x%" PRIx64 " uses bits below log2(line_bytes) = %d (the hash works "
                       "on line addresses)", h->masks[i], gx_log2_u64(p->l2.line_bytes));
        if (strcmp(p->provenance.kind, "measured") == 0 && h->obs_lo >= 0 && h->obs_hi >= 0 &&
            h->obs_hi < 64) {
            uint64_t in = (h->obs_hi == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (h->obs_hi + 1)) - 1)) &
                          ~(((uint64_t)1 << h->obs_lo) - 1);
            if (h->masks[i] & ~in)
                return BAD(f, "0x%" PRIx64 " uses bits outside observable_bits [%d, %d] of a "
                           "measured profile", h->masks[i], h->obs_lo, h->obs_hi);
        }
    }
    snprintf(f, sizeof f, "%s.masks", name);
    if (gf2_rank(h->masks, h->n_masks) != h->n_masks)
        return BAD(f, "the %d masks are not linearly independent over GF(2)", h->n_masks);
    if (h->obs_lo >= 0 || h->obs_hi >= 0) {
        snprintf(f, sizeof f, "%s.observable_bits", name);
        if (h->obs_lo < 0 || h->obs_hi < 0 || h->obs_lo > h->obs_hi || h->obs_hi >= 64)
            return BAD(f, "[%d, %d] must satisfy 0 <= lo <= hi < 64", h->obs_lo, h->obs_hi);
    }
    return GX_OK;
}

/* Near-far: the slice hash may give the slice WITHIN a partition (range
 * slices/partitions), since a line sits in the partition of the SM that reads
 * it; or the global slice (range slices, the partition being the line's home). */
static uint32_t slice_hash_range(const gx_profile *p, const gx_hash_fn *h)
{
    const uint32_t s = p->l2.slices;
    if (p->l2.topology == GX_TOPO_NEAR_FAR && p->l2.partitions > 1 && s) {
        uint32_t spp = s / p->l2.partitions;
        if (h->table) {
            uint32_t mx = 0;
            for (size_t i = 0; i < ((size_t)1 << h->n_masks); i++)
                if (h->table[i] > mx)
                    mx = h->table[i];
            if (mx < spp)
                return spp;
        } else if (((uint64_t)1 << h->n_masks) == spp) {
            return spp;
        }
    }
    return s;
}

/* A table's entries (field: its name; noun, bound: what they index and the
 * field that counts them) all below s and every value 0..s-1 reached. */
static int check_table_covers(const gx_vctx *v, const gx_hash_fn *h, const char *field,
                              const char *noun, const char *bound, uint32_t s)
{
    size_t n = (size_t)1 << h->n_masks;
    for (size_t i = 0; i < n; i++)
        if (h->table[i] >= s)
            return BAD(field, "entry [%zu] = %u must be < %s = %u", i, h->table[i], bound, s);
    unsigned char *seen = calloc(s, 1);
    if (!seen)
        return gx_fail(v->msg, GX_ENOMEM, "%s: out of memory", field);
    for (size_t i = 0; i < n; i++)
        seen[h->table[i]] = 1;
    uint32_t missing = s;
    for (uint32_t i = 0; i < s; i++)
        if (!seen[i]) {
            missing = i;
            break;
        }
    free(seen);
    if (missing < s)
        return BAD(field, "%s %u never appears (the table must cover 0..%s-1 = %u)", noun,
                   missing, bound, s - 1);
    return GX_OK;
}

/* The slice table against the slices (or a partition's, near-far). */
static int check_table(const gx_vctx *v, const gx_hash_fn *h)
{
    const uint32_t s = slice_hash_range(v->p, h);
    return s ? check_table_covers(v, h, "l2.hash.slice.table", "slice", "slices", s) : GX_OK;
}

/* A set table (the set of each value of the masks' bits: an index no
 * modulo of parities expresses, e.g. one measured set by set) against
 * sets_per_slice, which it needs. */
static int check_set_table(const gx_vctx *v, const gx_hash_fn *h)
{
    const uint32_t s = v->p->l2.sets_per_slice;
    if (!s)
        return BAD("l2.hash.set.table", "a set table needs l2.sets_per_slice");
    return check_table_covers(v, h, "l2.hash.set.table", "set", "sets_per_slice", s);
}

int gx_vrule_hashes(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    const gx_hash_fn *sh = &p->l2.slice_hash, *st = &p->l2.set_hash;
    int rc;
    if (sh->present) {
        if ((rc = check_masks(v, sh, "l2.hash.slice")))
            return rc;
        if (sh->modulo)
            return BAD("l2.hash.slice.modulo", "a slice hash has no modulo (use a table)");
        if (sh->table) {
            if ((rc = check_table(v, sh)))
                return rc;
        } else if (p->l2.slices && ((uint64_t)1 << sh->n_masks) != slice_hash_range(p, sh)) {
            return BAD("l2.hash.slice.masks", "2^n_masks = %" PRIu64 " != slices = %u (without "
                       "a table)", (uint64_t)1 << sh->n_masks, p->l2.slices);
        }
    }
    if (st->present) {
        if ((rc = check_masks(v, st, "l2.hash.set")))
            return rc;
        const uint32_t sets = p->l2.sets_per_slice;
        if (st->table) {
            if (st->modulo)
                return BAD("l2.hash.set.modulo", "a set hash has a table or a modulo, not both");
            if ((rc = check_set_table(v, st)))
                return rc;
        } else if (st->modulo) {
            if (sets && st->modulo != sets)
                return BAD("l2.hash.set.modulo", "%" PRIu64 " != sets_per_slice = %u",
                           st->modulo, sets);
            if (((uint64_t)1 << st->n_masks) < st->modulo)
                return BAD("l2.hash.set.masks", "2^n_masks = %" PRIu64 " < modulo = %" PRIu64
                           " (some sets unreachable)", (uint64_t)1 << st->n_masks, st->modulo);
        } else if (sets && ((uint64_t)1 << st->n_masks) != sets) {
            return BAD("l2.hash.set.masks", "2^n_masks = %" PRIu64 " != sets_per_slice = %u "
                       "(without a modulo)", (uint64_t)1 << st->n_masks, sets);
        }
    }
    return GX_OK;
}

