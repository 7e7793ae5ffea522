/* tlb.c - one TLB level (see tlb.h).
 *
 * Models: instances = ceil(sm_count / SMs per sharing domain); instance k
 * serves SMs [k * domain, (k + 1) * domain). Each instance has entries / ways
 * sets of `ways` ways in one gx_cache (instance k owns sets k * sets ..). A
 * tag is (VA / reach) with the page-size index in its low 3 bits; the set
 * is (VA / reach) mod sets; the sector is the page within the entry.
 *
 * Notes: the level's policy comes from the registry (policy.h), "lru" when
 * the profile gives none; ways are limited to the registry's 64. */
#include "gpuxray/tlb.h"

#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/cache.h"

#define MAX_PAGES_PER_ENTRY 32 /* the cache's sector mask is 32 bits */
#define ENTRY_LINE_BYTES 256   /* the cache's line: 32 sectors of 8 bytes = 32 valid bits */
#define ENTRY_SECTOR_BYTES 8

struct gx_tlb {
    gx_cache *c;
    uint32_t sets, domain, instances;
    int n_sizes;
    uint64_t sizes[GX_MAX_PAGE_SIZES];
    uint32_t size_shift[GX_MAX_PAGE_SIZES];
    uint32_t reach_shift[GX_MAX_PAGE_SIZES]; /* log2 of the VA one entry covers */
    /* bit s: an entry of page size s may be present (set by a fill, cleared
     * by a flush): a lookup skips the sizes it never filled, whose probes
     * would miss without a state change (allocate 0). Measured: see
     * docs/performance.md ("Translation: instructions per access"). */
    uint32_t filled_sizes;
    /* some page size's entry covers more than one page: else a neighbour
     * fill never adds anything (the memory system offers every neighbour
     * of every walk to every level; measured: see docs/performance.md) */
    int multi_page;
    gx_tlb_stats st;
};

static uint32_t domain_of(const gx_tlb_level_cfg *l, const gx_tlb_cfg *t, uint32_t sms)
{
    switch (l->sharing) {
    case GX_SHARE_TPC:
        return t->sms_per_tpc;
    case GX_SHARE_GPC:
        return t->sms_per_gpc;
    case GX_SHARE_GPU:
        return sms;
    default:
        return 1;
    }
}

int gx_tlb_new(const gx_tlb_level_cfg *l, const gx_tlb_cfg *t, uint32_t sm_count,
               uint64_t seed, gx_tlb **out, gx_msg *msg)
{
    *out = NULL;
    if (!l->entries || !l->ways || l->entries % l->ways)
        return gx_fail(msg, GX_ECONFIG, "tlb.levels[%s].ways: %u does not divide entries %u",
                       l->name, l->ways, l->entries);
    if (l->entry_bytes && !gx_is_pow2_u64(l->entry_bytes))
        return gx_fail(msg, GX_ECONFIG, "tlb.levels[%s].entry_bytes: %llu is not a power of two",
                       l->name, (unsigned long long)l->entry_bytes);
    if (l->sharing == GX_SHARE_UNKNOWN)
        return gx_fail(msg, GX_ECONFIG, "tlb.levels[%s].sharing: required by the model", l->name);
    uint32_t dom = domain_of(l, t, sm_count ? sm_count : 1);
    if (!dom)
        return gx_fail(msg, GX_ECONFIG, "tlb.sms_per_%s: required by tlb.levels[%s].sharing",
                       l->sharing == GX_SHARE_TPC ? "tpc" : "gpc", l->name);
    gx_tlb *tlb = calloc(1, sizeof *tlb);
    if (!tlb)
        return gx_fail(msg, GX_ENOMEM, "tlb: out of memory");
    tlb->sets = l->entries / l->ways;
    tlb->domain = dom;
    tlb->instances = (sm_count + dom - 1) / dom;
    if (!tlb->instances)
        tlb->instances = 1;
    tlb->n_sizes = t->n_page_sizes;
    for (int s = 0; s < t->n_page_sizes; s++) {
        uint64_t sz = t->page_sizes[s], reach = sz;
        if (l->entry_bytes > sz)
            reach = l->entry_bytes / sz > MAX_PAGES_PER_ENTRY ? sz * MAX_PAGES_PER_ENTRY
                                                               : l->entry_bytes;
        tlb->sizes[s] = sz;
        tlb->size_shift[s] = (uint32_t)gx_log2_u64(sz);
        tlb->reach_shift[s] = (uint32_t)gx_log2_u64(reach);
        tlb->multi_page |= reach > sz;
    }
    gx_cache_cfg cc = {ENTRY_LINE_BYTES, ENTRY_SECTOR_BYTES, l->ways,
                       (uint64_t)tlb->sets * tlb->instances, l->policy[0] ? l->policy : "lru",
                       seed, 0};
    int rc = gx_cache_new(&cc, &tlb->c, msg);
    if (rc != GX_OK) {
        free(tlb);
        return gx_fail(msg, rc, "tlb.levels[%s]: %s", l->name, msg ? msg->text : "");
    }
    *out = tlb;
    return GX_OK;
}

void gx_tlb_free(gx_tlb *tlb)
{
    if (!tlb)
        return;
    gx_cache_free(tlb->c);
    free(tlb);
}

uint32_t gx_tlb_instance(const gx_tlb *tlb, uint32_t sm)
{
    uint32_t k = sm / tlb->domain;
    return k < tlb->instances ? k : k % tlb->instances;
}

uint32_t gx_tlb_instances(const gx_tlb *tlb)
{
    return tlb->instances;
}

/* Set, tag and sector of va for page size index s in the SM's instance. */
static void place(const gx_tlb *tlb, uint32_t sm, uint64_t va, int s, uint64_t *set,
                  uint64_t *tag, uint32_t *sector)
{
    uint64_t e = va >> tlb->reach_shift[s];
    *set = (uint64_t)gx_tlb_instance(tlb, sm) * tlb->sets + e % tlb->sets;
    *tag = e << 3 | (uint64_t)s;
    *sector = (uint32_t)((va >> tlb->size_shift[s]) &
                         ((1u << (tlb->reach_shift[s] - tlb->size_shift[s])) - 1));
}

int gx_tlb_lookup(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t *page_bytes)
{
    tlb->st.accesses++;
    for (int s = 0; s < tlb->n_sizes; s++) {
        if (!(tlb->filled_sizes >> s & 1u))
            continue;
        uint64_t set, tag;
        uint32_t sector;
        place(tlb, sm, va, s, &set, &tag, &sector);
        /* allocate 0: a hit updates the policy, a miss changes nothing */
        if (gx_cache_access(tlb->c, set, tag, sector, 0, NULL) == GX_CACHE_HIT) {
            tlb->st.hits++;
            tlb->st.hits_by_size[s]++;
            *page_bytes = tlb->sizes[s];
            return 1;
        }
    }
    tlb->st.misses++;
    return 0;
}

static int index_of(const gx_tlb *tlb, uint64_t page_bytes)
{
    for (int s = 0; s < tlb->n_sizes; s++)
        if (tlb->sizes[s] == page_bytes)
            return s;
    return -1;
}

void gx_tlb_fill(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes)
{
    int s = index_of(tlb, page_bytes);
    if (s < 0)
        return;
    uint64_t set, tag;
    uint32_t sector;
    place(tlb, sm, va, s, &set, &tag, &sector);
    gx_cache_insert(tlb->c, set, tag, 1u << sector, NULL);
    tlb->filled_sizes |= 1u << s;
}

void gx_tlb_fill_neighbour(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t nb_va,
                           uint64_t page_bytes)
{
    if (!tlb->multi_page)
        return;
    int s = index_of(tlb, page_bytes);
    if (s < 0 || tlb->reach_shift[s] == tlb->size_shift[s] ||
        va >> tlb->reach_shift[s] != nb_va >> tlb->reach_shift[s])
        return;
    gx_tlb_fill(tlb, sm, nb_va, page_bytes);
}

void gx_tlb_flush(gx_tlb *tlb)
{
    gx_cache_flush(tlb->c);
    tlb->filled_sizes = 0;
}

void gx_tlb_get_stats(const gx_tlb *tlb, gx_tlb_stats *s)
{
    *s = tlb->st;
}
