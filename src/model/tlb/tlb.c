/* tlb.c - one TLB level (see tlb.h).
 *
 * Models: instances = ceil(sm_count / SMs per sharing domain); instance k
 * serves SMs [k * domain, (k + 1) * domain). Each instance has entries / ways
 * sets of `ways` ways in one gx_cache or gx_salru (instance k owns sets
 * k * sets ..). A tag is (VA / reach) with the page-size index in its low 3
 * bits; the set is (VA / reach) mod sets, or with the xor index the XOR of
 * (VA / reach)'s successive log2(sets)-bit chunks (or, given set_masks, set
 * bit i = the parity of (VA / reach) & set_masks[i]); the sector is the
 * page within the entry.
 *
 * Notes: the level's policy comes from the registry (policy.h), "lru" when
 * the profile gives none; ways are limited to the registry's 64. With lru
 * the sets are a gx_salru instead (tlb/salru.c): the same hits and misses,
 * O(1) per lookup and fill instead of a search over the ways and an update
 * of every way's rank. Measured: see docs/performance.md ("Translation:
 * instructions per access"). A lean level (lru, entries of one page, the
 * set by a mask: decided once, when built) has probes and fills of its
 * own without the general placement, and the chain (gx_tlb_chain_*) of
 * the later levels' lookups and fills after a first-level miss; measured:
 * see docs/performance.md ("Translation: lean paths for 4 KiB pages"). */
#include "gpuxray/tlb.h"

#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/cache.h"
#include "gpuxray/policy.h"
#include "salru.h"

#define MAX_PAGES_PER_ENTRY 32 /* the cache's sector mask is 32 bits */
#define ENTRY_LINE_BYTES 256   /* the cache's line: 32 sectors of 8 bytes = 32 valid bits */
#define ENTRY_SECTOR_BYTES 8

struct gx_tlb {
    gx_cache *c;   /* a policy other than lru */
    gx_salru *lru; /* lru (c NULL) */
    uint32_t sets, domain, instances;
    uint32_t set_mask;  /* sets - 1 when sets is a power of two */
    int set_div;        /* sets is not a power of two: the set by a division */
    uint32_t xor_bits;  /* xor index: log2(sets) (> 0); 0 the modulo index */
    int n_masks;        /* xor index by masks: set bit i = parity(e & masks[i]) */
    uint64_t masks[GX_MAX_TLB_SET_MASKS];
    uint32_t n_base;    /* SMs with a precomputed first set */
    uint64_t *set_base; /* the first set of SM i's instance, i < n_base */
    int n_sizes;
    uint64_t sizes[GX_MAX_PAGE_SIZES];
    uint32_t size_shift[GX_MAX_PAGE_SIZES];
    uint32_t reach_shift[GX_MAX_PAGE_SIZES]; /* log2 of the VA one entry covers */
    uint32_t sector_mask[GX_MAX_PAGE_SIZES]; /* pages per entry - 1 */
    /* bit s: an entry of page size s may be present (set by a fill, cleared
     * by a flush): a lookup skips the sizes it never filled, whose probes
     * would miss without a state change (allocate 0). Measured: see
     * docs/performance.md ("Translation: instructions per access"). */
    uint32_t filled_sizes;
    /* some page size's entry covers more than one page: else a neighbour
     * fill never adds anything (the memory system offers every neighbour
     * of every walk to every level; measured: see docs/performance.md) */
    int multi_page;
    /* lru (salru), entries of one page, the set by a mask: gx_tlb_chain_* */
    int lean;
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

static int is_lru(const char *policy)
{
    return !policy[0] || !strcmp(policy, "lru");
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
        tlb->sector_mask[s] = (1u << (tlb->reach_shift[s] - tlb->size_shift[s])) - 1;
        tlb->multi_page |= reach > sz;
    }
    tlb->set_div = !gx_is_pow2_u64(tlb->sets);
    tlb->set_mask = tlb->sets - 1;
    if (l->set_index == GX_TLB_INDEX_XOR && tlb->sets > 1) {
        if (tlb->set_div) {
            uint32_t sets = tlb->sets;
            free(tlb);
            return gx_fail(msg, GX_ECONFIG, "tlb.levels[%s].index: xor needs a power-of-two "
                           "number of sets, not %u", l->name, sets);
        }
        tlb->xor_bits = (uint32_t)gx_log2_u64(tlb->sets);
        if (l->n_set_masks) {
            if ((uint32_t)l->n_set_masks != tlb->xor_bits) {
                uint32_t sets = tlb->sets;
                free(tlb);
                return gx_fail(msg, GX_ECONFIG, "tlb.levels[%s].set_masks: %d masks for %u sets",
                               l->name, l->n_set_masks, sets);
            }
            tlb->n_masks = l->n_set_masks;
            memcpy(tlb->masks, l->set_masks, sizeof tlb->masks);
        }
    }
    tlb->n_base = sm_count ? sm_count : 1;
    tlb->set_base = malloc((size_t)tlb->n_base * sizeof *tlb->set_base);
    if (!tlb->set_base) {
        free(tlb);
        return gx_fail(msg, GX_ENOMEM, "tlb: out of memory");
    }
    for (uint32_t i = 0; i < tlb->n_base; i++)
        tlb->set_base[i] = (uint64_t)gx_tlb_instance(tlb, i) * tlb->sets;
    uint64_t all_sets = (uint64_t)tlb->sets * tlb->instances;
    /* ways beyond the registry's bound stay gx_cache's error */
    if (is_lru(l->policy) && l->ways <= GX_POLICY_MAX_WAYS && all_sets <= UINT32_MAX)
        tlb->lru = gx_salru_new((uint32_t)all_sets, l->ways);
    if (tlb->lru) {
        tlb->lean = !tlb->multi_page && !tlb->xor_bits && !tlb->set_div;
        *out = tlb;
        return GX_OK;
    }
    gx_cache_cfg cc = {ENTRY_LINE_BYTES, ENTRY_SECTOR_BYTES, l->ways, all_sets,
                       l->policy[0] ? l->policy : "lru", seed, 0};
    int rc = gx_cache_new(&cc, &tlb->c, msg);
    if (rc != GX_OK) {
        free(tlb->set_base);
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
    gx_salru_free(tlb->lru);
    free(tlb->set_base);
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

/* The first set of the SM's instance. */
static inline uint64_t set_base(const gx_tlb *tlb, uint32_t sm)
{
    return sm < tlb->n_base ? tlb->set_base[sm] : (uint64_t)gx_tlb_instance(tlb, sm) * tlb->sets;
}

/* Set, tag and sector of va for page size index s in the instance whose
 * first set is base. */
/* The xor index: e's successive xor_bits-bit chunks XORed together. */
static inline uint64_t xor_fold(uint64_t e, uint32_t bits, uint32_t mask)
{
    uint64_t x = 0;
    for (; e; e >>= bits)
        x ^= e;
    return x & mask;
}

/* The xor index by masks: bit i the parity of e's bits under mask i. */
static inline uint64_t xor_masks(const gx_tlb *tlb, uint64_t e)
{
    uint64_t x = 0;
    for (int i = 0; i < tlb->n_masks; i++)
        x |= (uint64_t)__builtin_parityll(e & tlb->masks[i]) << i;
    return x;
}

static inline uint64_t set_of(const gx_tlb *tlb, uint64_t e)
{
    if (tlb->xor_bits)
        return tlb->n_masks ? xor_masks(tlb, e) : xor_fold(e, tlb->xor_bits, tlb->set_mask);
    return tlb->set_div ? e % tlb->sets : e & tlb->set_mask;
}

static inline void place(const gx_tlb *tlb, uint64_t base, uint64_t va, int s, uint64_t *set,
                         uint64_t *tag, uint32_t *sector)
{
    uint64_t e = va >> tlb->reach_shift[s];
    *set = base + set_of(tlb, e);
    *tag = e << 3 | (uint64_t)s;
    *sector = (uint32_t)(va >> tlb->size_shift[s]) & tlb->sector_mask[s];
}

/* Is the page (tag, sector) in the set? A hit updates the policy, a miss
 * changes nothing (allocate 0). */
static inline int probe(gx_tlb *tlb, uint64_t set, uint64_t tag, uint32_t sector)
{
    if (tlb->lru)
        return gx_salru_probe(tlb->lru, (uint32_t)set, tag, 1u << sector);
    return gx_cache_access(tlb->c, set, tag, sector, 0, NULL) == GX_CACHE_HIT;
}

int gx_tlb_lookup(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t *page_bytes)
{
    tlb->st.accesses++;
    const uint64_t base = set_base(tlb, sm);
    for (uint32_t f = tlb->filled_sizes; f; f &= f - 1) { /* the filled sizes, smallest first */
        int s = __builtin_ctz(f);
        uint64_t set, tag;
        uint32_t sector;
        place(tlb, base, va, s, &set, &tag, &sector);
        if (probe(tlb, set, tag, sector)) {
            tlb->st.hits++;
            tlb->st.hits_by_size[s]++;
            *page_bytes = tlb->sizes[s];
            return 1;
        }
    }
    tlb->st.misses++;
    return 0;
}

/* The size index of the filled size whose probe hits va (smallest first),
 * -1 on a miss: gx_tlb_lookup's probes without its counts. */
static inline __attribute__((always_inline)) int find_size(gx_tlb *tlb, uint32_t filled,
                                                           uint32_t sm, uint64_t va)
{
    const uint64_t base = set_base(tlb, sm);
    for (uint32_t f = filled; f; f &= f - 1) {
        int s = __builtin_ctz(f);
        uint64_t set, tag;
        uint32_t sector;
        place(tlb, base, va, s, &set, &tag, &sector);
        if (probe(tlb, set, tag, sector))
            return s;
    }
    return -1;
}

/* find_size of a lean level (tlb->lean: lru, entries of one page, the set
 * by a mask): the same probes without the general placement. */
static inline __attribute__((always_inline)) int find_size_lean(gx_tlb *tlb, uint32_t filled,
                                                                uint32_t sm, uint64_t va)
{
    gx_salru *const c = tlb->lru;
    const uint64_t base = set_base(tlb, sm);
    for (uint32_t f = filled; f; f &= f - 1) {
        const int s = __builtin_ctz(f);
        const uint64_t e = va >> tlb->size_shift[s];
        if (gx_salru_probe(c, (uint32_t)(base + (e & tlb->set_mask)), e << 3 | (uint64_t)s, 1u))
            return s;
    }
    return -1;
}

/* The hits from request 0 on (lean: the level's tlb->lean, a constant in
 * each use so each loop has its own probe). */
static inline __attribute__((always_inline)) size_t hit_run(gx_tlb *tlb, const uint32_t *sm,
                                                            const uint64_t *va, size_t n,
                                                            uint64_t *page_bytes, int lean)
{
    const uint32_t filled = tlb->filled_sizes;
    size_t i = 0;
    for (; i < n; i++) {
        const int s = lean ? find_size_lean(tlb, filled, sm[i], va[i])
                           : find_size(tlb, filled, sm[i], va[i]);
        if (s < 0)
            break;
        tlb->st.hits_by_size[s]++;
        page_bytes[i] = tlb->sizes[s];
    }
    return i;
}

/* The counts in locals, the filled sizes read once (lookups fill nothing):
 * the same probes and counts as gx_tlb_lookup one request at a time. */
size_t gx_tlb_lookup_run(gx_tlb *tlb, const uint32_t *sm, const uint64_t *va, size_t n,
                         uint64_t *page_bytes)
{
    const size_t i = tlb->lean ? hit_run(tlb, sm, va, n, page_bytes, 1)
                               : hit_run(tlb, sm, va, n, page_bytes, 0);
    const uint64_t missed = i < n;
    tlb->st.accesses += i + missed;
    tlb->st.hits += i;
    tlb->st.misses += missed;
    return i;
}

static int index_of(const gx_tlb *tlb, uint64_t page_bytes)
{
    for (int s = 0; s < tlb->n_sizes; s++)
        if (tlb->sizes[s] == page_bytes)
            return s;
    return -1;
}

/* The fill of page size index s; absent: the page's lookup just missed
 * (with entries of one page the tag is then absent: no look for it). */
static inline __attribute__((always_inline)) void fill_size(gx_tlb *tlb, uint32_t sm, uint64_t va,
                                                            int s, int absent)
{
    uint64_t set, tag;
    uint32_t sector;
    place(tlb, set_base(tlb, sm), va, s, &set, &tag, &sector);
    if (tlb->lru && absent && !tlb->multi_page)
        gx_salru_insert_absent(tlb->lru, (uint32_t)set, tag, 1u << sector);
    else if (tlb->lru) /* with multi-page entries a tag may be present without the page's bit */
        gx_salru_insert(tlb->lru, (uint32_t)set, tag, 1u << sector);
    else
        gx_cache_insert(tlb->c, set, tag, 1u << sector, NULL);
    tlb->filled_sizes |= 1u << s;
}

void gx_tlb_fill(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes)
{
    int s = index_of(tlb, page_bytes);
    if (s >= 0)
        fill_size(tlb, sm, va, s, 0);
}

/* The missed lookup probed every filled size, so the page's tag is absent
 * from a level of one-page entries (a size never filled since the flush
 * has no entries). */
void gx_tlb_fill_missed(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes)
{
    int s = index_of(tlb, page_bytes);
    if (s >= 0)
        fill_size(tlb, sm, va, s, 1);
}

int gx_tlb_lean(const gx_tlb *tlb)
{
    return tlb->lean;
}

/* Level l's lookup of a lean level: 1 on a hit (its size into *page_bytes);
 * on a miss the first probe's placement into ch's slot j. */
static inline int lean_lookup(gx_tlb *l, int j, uint32_t sm, uint64_t va, uint64_t *page_bytes,
                              gx_tlb_chain *ch)
{
    gx_salru *const c = l->lru;
    const uint64_t base = set_base(l, sm);
    l->st.accesses++;
    ch->size[j] = -1;
    for (uint32_t f = l->filled_sizes; f; f &= f - 1) { /* the filled sizes, smallest first */
        const int s = __builtin_ctz(f);
        const uint64_t e = va >> l->size_shift[s];
        const uint32_t set = (uint32_t)(base + (e & l->set_mask));
        const uint64_t tag = e << 3 | (uint64_t)s;
        const uint32_t b = gx_salru_home(c, set, tag), k = gx_salru_find(c, b, set, tag);
        if (k != GX_SALRU_NIL && (c->slots[k].mask & 1u)) {
            gx_salru_touch(c, &c->hdr[set], k);
            l->st.hits++;
            l->st.hits_by_size[s]++;
            *page_bytes = l->sizes[s];
            return 1;
        }
        if (ch->size[j] < 0) {
            ch->size[j] = s;
            ch->set[j] = set;
            ch->home[j] = b;
            ch->tag[j] = tag;
        }
    }
    l->st.misses++;
    return 0;
}

int gx_tlb_chain_lookup(gx_tlb *const *tlb, int from, int n, uint32_t sm, uint64_t va,
                        uint64_t *page_bytes, gx_tlb_chain *ch)
{
    for (int j = from; j < n; j++)
        if (lean_lookup(tlb[j], j, sm, va, page_bytes, ch))
            return j;
    return -1;
}

void gx_tlb_chain_fill(gx_tlb *const *tlb, int from, int n, uint32_t sm, uint64_t va,
                       uint64_t page_bytes, const gx_tlb_chain *ch)
{
    for (int j = 0; j < n; j++) {
        gx_tlb *const l = tlb[j];
        const int s = l->sizes[0] == page_bytes ? 0 : index_of(l, page_bytes);
        if (s < 0)
            continue;
        if (j >= from && ch->size[j] == s) {
            gx_salru_add_absent(l->lru, ch->home[j], ch->set[j], ch->tag[j], 1u);
        } else {
            const uint64_t e = va >> l->size_shift[s];
            const uint32_t set = (uint32_t)(set_base(l, sm) + (e & l->set_mask));
            const uint64_t tag = e << 3 | (uint64_t)s;
            gx_salru_add_absent(l->lru, gx_salru_home(l->lru, set, tag), set, tag, 1u);
        }
        l->filled_sizes |= 1u << s;
    }
}

uint32_t gx_tlb_entry_pages(const gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes,
                            uint64_t *entry_va)
{
    int s = index_of(tlb, page_bytes);
    if (s < 0)
        return 0;
    uint64_t set, tag;
    uint32_t sector;
    place(tlb, set_base(tlb, sm), va, s, &set, &tag, &sector);
    *entry_va = va >> tlb->reach_shift[s] << tlb->reach_shift[s];
    if (tlb->lru)
        return gx_salru_mask(tlb->lru, (uint32_t)set, tag);
    uint32_t m = 0;
    for (uint32_t k = 0; k <= tlb->sector_mask[s]; k++)
        m |= (uint32_t)gx_cache_contains(tlb->c, set, tag, k) << k;
    return m;
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

int gx_tlb_takes_neighbours(const gx_tlb *tlb)
{
    return tlb->multi_page;
}

void gx_tlb_flush(gx_tlb *tlb)
{
    if (tlb->lru)
        gx_salru_flush(tlb->lru);
    else
        gx_cache_flush(tlb->c);
    tlb->filled_sizes = 0;
}

void gx_tlb_get_stats(const gx_tlb *tlb, gx_tlb_stats *s)
{
    *s = tlb->st;
}
