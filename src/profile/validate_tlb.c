/* validate_tlb.c - the cross-field rules of the tlb section (address
 * translation): page sizes, VA regions, walk levels, the walker's fetch,
 * TLB and page-walk-cache shapes, sharing domains, predicted sizes.
 *
 * Notes:
 * - The per-field ranges (powers of two, 4 KiB..512 GiB pages, ...) are the
 *   table's (fields.def); these rules link fields. One function per rule,
 *   run in TLB_RULES order; each names the field it refuses.
 * - A virtual address has 64 bits: the walk levels over the smallest page
 *   cover at most that, and a region may not wrap past 2^64. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/policy.h"
#include "validate_internal.h"

#define VA_BITS 64

static int is_page_size(const gx_tlb_cfg *t, uint64_t bytes)
{
    for (int i = 0; i < t->n_page_sizes; i++)
        if (t->page_sizes[i] == bytes)
            return 1;
    return 0;
}

static int rule_page_sizes_ascending(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    for (int i = 1; i < t->n_page_sizes; i++)
        if (t->page_sizes[i] <= t->page_sizes[i - 1]) {
            char f[64];
            snprintf(f, sizeof f, "tlb.page_table.page_sizes[%d]", i);
            return BAD(f, "%" PRIu64 " must exceed the previous size %" PRIu64 " (ascending)",
                       t->page_sizes[i], t->page_sizes[i - 1]);
        }
    return GX_OK;
}

static int rule_default_page_installable(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    if (t->default_page_bytes && t->n_page_sizes && !is_page_size(t, t->default_page_bytes))
        return BAD("tlb.page_table.default_page_bytes", "%" PRIu64 " is not one of page_sizes",
                   t->default_page_bytes);
    return GX_OK;
}

static int rule_region_shape(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    for (int i = 0; i < t->n_regions; i++) {
        const gx_va_region *r = &t->regions[i];
        char f[80];
        snprintf(f, sizeof f, "tlb.page_table.regions[%d].page_bytes", i);
        if (t->n_page_sizes && !is_page_size(t, r->page_bytes))
            return BAD(f, "%" PRIu64 " is not one of page_sizes", r->page_bytes);
        snprintf(f, sizeof f, "tlb.page_table.regions[%d].va_base", i);
        if (r->va_base % r->page_bytes)
            return BAD(f, "0x%" PRIx64 " must be aligned to its page_bytes = %" PRIu64,
                       r->va_base, r->page_bytes);
        snprintf(f, sizeof f, "tlb.page_table.regions[%d].bytes", i);
        if (r->bytes % r->page_bytes)
            return BAD(f, "%" PRIu64 " must be a multiple of its page_bytes = %" PRIu64,
                       r->bytes, r->page_bytes);
        if (r->bytes - 1 > UINT64_MAX - r->va_base)
            return BAD(f, "%" PRIu64 " from va_base 0x%" PRIx64 " runs past 2^64", r->bytes,
                       r->va_base);
    }
    return GX_OK;
}

static int rule_regions_disjoint(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    for (int i = 0; i < t->n_regions; i++)
        for (int j = 0; j < i; j++) {
            const gx_va_region *a = &t->regions[j], *b = &t->regions[i];
            uint64_t a_last = a->va_base + (a->bytes - 1), b_last = b->va_base + (b->bytes - 1);
            if (b->va_base <= a_last && a->va_base <= b_last) {
                char f[64];
                snprintf(f, sizeof f, "tlb.page_table.regions[%d]", i);
                return BAD(f, "[0x%" PRIx64 ", 0x%" PRIx64 "] overlaps regions[%d] [0x%" PRIx64
                           ", 0x%" PRIx64 "] (regions must not overlap)", b->va_base, b_last,
                           j, a->va_base, a_last);
            }
        }
    return GX_OK;
}

static int rule_level_bits_fit_va(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    if (!t->n_level_bits || !t->n_page_sizes)
        return GX_OK;
    uint32_t sum = 0;
    for (int i = 0; i < t->n_level_bits; i++)
        sum += t->level_bits[i];
    uint32_t page_bits = (uint32_t)gx_log2_u64(t->page_sizes[0]);
    if (sum + page_bits > VA_BITS)
        return BAD("tlb.page_table.level_bits", "%u bits over %u-bit pages (page_sizes[0]) "
                   "exceed a %d-bit virtual address", sum, page_bits, VA_BITS);
    return GX_OK;
}

static int rule_fetch_bytes(const gx_vctx *v)
{
    const gx_profile *p = v->p;
    uint32_t fb = p->tlb.walker.fetch_bytes, pte = p->tlb.pte_bytes;
    if (!fb)
        return GX_OK;
    if (pte && (fb < pte || fb % pte))
        return BAD("tlb.walker.fetch_bytes", "%u must be a power-of-two multiple of "
                   "pte_bytes = %u", fb, pte);
    if (p->l2.present && p->l2.line_bytes && fb > p->l2.line_bytes)
        return BAD("tlb.walker.fetch_bytes", "%u must be at most l2.line_bytes = %u (one "
                   "aligned read of one line)", fb, p->l2.line_bytes);
    return GX_OK;
}

static int ways_divide(const gx_vctx *v, const char *name, uint32_t entries, uint32_t ways)
{
    if (entries && ways && (ways > entries || entries % ways)) {
        char f[80];
        snprintf(f, sizeof f, "%s.ways", name);
        return BAD(f, "%u must divide entries = %u (ways = entries: fully associative)", ways,
                   entries);
    }
    return GX_OK;
}

/* The policy registry's way masks stop at GX_POLICY_MAX_WAYS; the model's
 * fully associative LRU page-walk cache (src/model/walker/facache.h) has
 * no bound, so a small cache may exceed it when ways = entries with lru. */
static int ways_bound(const gx_vctx *v, const char *name, uint32_t entries, uint32_t ways,
                      const char *policy, int fa_lru_ok)
{
    if (ways <= GX_POLICY_MAX_WAYS)
        return GX_OK;
    int lru = !policy[0] || !strcmp(policy, "lru");
    if (fa_lru_ok && lru && ways == entries)
        return GX_OK;
    char f[80];
    snprintf(f, sizeof f, "%s.ways", name);
    if (fa_lru_ok)
        return BAD(f, "%u exceeds %d: more ways only fully associative (ways = entries) with "
                   "policy lru", ways, GX_POLICY_MAX_WAYS);
    return BAD(f, "%u exceeds the policy registry's %d ways", ways, GX_POLICY_MAX_WAYS);
}

static int rule_ways_bound(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    int rc;
    for (int i = 0; i < t->n_levels; i++) {
        char f[32];
        snprintf(f, sizeof f, "tlb.levels[%d]", i);
        const gx_tlb_level_cfg *l = &t->levels[i];
        if ((rc = ways_bound(v, f, l->entries, l->ways, l->policy, 0)))
            return rc;
    }
    const gx_small_cache_cfg *c = &t->walker.pwc, *n = &t->walker.neighbour_pwc;
    if (c->present && (rc = ways_bound(v, "tlb.walker.pwc", c->entries, c->ways, c->policy, 1)))
        return rc;
    if (n->present &&
        (rc = ways_bound(v, "tlb.walker.neighbour_pwc", n->entries, n->ways, n->policy, 1)))
        return rc;
    return GX_OK;
}

static int rule_ways_divide_entries(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    int rc;
    for (int i = 0; i < t->n_levels; i++) {
        char f[32];
        snprintf(f, sizeof f, "tlb.levels[%d]", i);
        if ((rc = ways_divide(v, f, t->levels[i].entries, t->levels[i].ways)))
            return rc;
    }
    if (t->walker.pwc.present &&
        (rc = ways_divide(v, "tlb.walker.pwc", t->walker.pwc.entries, t->walker.pwc.ways)))
        return rc;
    if (t->walker.neighbour_pwc.present &&
        (rc = ways_divide(v, "tlb.walker.neighbour_pwc", t->walker.neighbour_pwc.entries,
                          t->walker.neighbour_pwc.ways)))
        return rc;
    return GX_OK;
}

static int rule_entry_bytes_pages(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    if (!t->n_page_sizes)
        return GX_OK;
    for (int i = 0; i < t->n_levels; i++)
        if (t->levels[i].entry_bytes % t->page_sizes[0]) {
            char f[48];
            snprintf(f, sizeof f, "tlb.levels[%d].entry_bytes", i);
            return BAD(f, "%" PRIu64 " must be a multiple of a page size (page_sizes[0] = %"
                       PRIu64 ")", t->levels[i].entry_bytes, t->page_sizes[0]);
        }
    return GX_OK;
}

static int rule_sharing_domains(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    if (t->sms_per_tpc && t->sms_per_gpc && t->sms_per_gpc % t->sms_per_tpc)
        return BAD("tlb.sms_per_gpc", "%u must be a multiple of sms_per_tpc = %u",
                   t->sms_per_gpc, t->sms_per_tpc);
    if (!v->all)
        return GX_OK;
    for (int i = 0; i < t->n_levels; i++) {
        gx_sharing s = t->levels[i].sharing;
        char f[40];
        snprintf(f, sizeof f, "tlb.levels[%d].sharing", i);
        if (s == GX_SHARE_TPC && !t->sms_per_tpc)
            return BAD(f, "\"tpc\" needs tlb.sms_per_tpc (required %s)", v->why);
        if (s == GX_SHARE_GPC && !t->sms_per_gpc)
            return BAD(f, "\"gpc\" needs tlb.sms_per_gpc (required %s)", v->why);
    }
    return GX_OK;
}

static int rule_predicted_sizes(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    if (t->coalescer.predict_small_bytes >= t->coalescer.predict_large_bytes)
        return BAD("tlb.coalescer.predict_large_bytes", "%" PRIu64 " must exceed "
                   "predict_small_bytes = %" PRIu64, t->coalescer.predict_large_bytes,
                   t->coalescer.predict_small_bytes);
    return GX_OK;
}

/* The xor index folds VA / entry_bytes in log2(sets)-bit chunks: sets must
 * be a power of two. */
static int rule_xor_index_sets(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    for (int i = 0; i < t->n_levels; i++) {
        const gx_tlb_level_cfg *l = &t->levels[i];
        if (l->set_index != GX_TLB_INDEX_XOR || !l->ways || !l->entries || l->entries % l->ways)
            continue;
        uint32_t sets = l->entries / l->ways;
        if (sets & (sets - 1)) {
            char f[48];
            snprintf(f, sizeof f, "tlb.levels[%d].index", i);
            return BAD(f, "\"xor\" needs a power-of-two number of sets, not entries / ways = "
                       "%u / %u = %u", l->entries, l->ways, sets);
        }
    }
    return GX_OK;
}

/* set_masks: one mask per set bit, and only for the xor index. */
static int rule_set_masks(const gx_vctx *v)
{
    const gx_tlb_cfg *t = &v->p->tlb;
    for (int i = 0; i < t->n_levels; i++) {
        const gx_tlb_level_cfg *l = &t->levels[i];
        if (!l->n_set_masks)
            continue;
        char f[48];
        snprintf(f, sizeof f, "tlb.levels[%d].set_masks", i);
        if (l->set_index != GX_TLB_INDEX_XOR)
            return BAD(f, "given, but index is not \"xor\"");
        if (!l->ways || !l->entries || l->entries % l->ways)
            continue;
        uint32_t sets = l->entries / l->ways, bits = 0;
        while ((1u << bits) < sets)
            bits++;
        if ((uint32_t)l->n_set_masks != bits)
            return BAD(f, "%d masks, but entries / ways = %u sets need %u", l->n_set_masks, sets,
                       bits);
    }
    return GX_OK;
}

static const gx_vrule TLB_RULES[] = {
    rule_page_sizes_ascending, rule_default_page_installable, rule_region_shape,
    rule_regions_disjoint,     rule_level_bits_fit_va,        rule_fetch_bytes,
    rule_ways_divide_entries,  rule_ways_bound,               rule_entry_bytes_pages,
    rule_sharing_domains,      rule_predicted_sizes,          rule_xor_index_sets,
    rule_set_masks,
};

int gx_vrule_tlb(const gx_vctx *v)
{
    for (size_t i = 0; i < sizeof TLB_RULES / sizeof TLB_RULES[0]; i++) {
        int rc = TLB_RULES[i](v);
        if (rc)
            return rc;
    }
    return GX_OK;
}
