/* pagetable.c - the page table of the virtual memory (see vmem.h): which VA
 * is mapped at which page size, and the entries the walker reads.
 *
 * Models:
 * - A radix table of tlb.page_table.level_bits (root first) over the
 *   smallest page; the PTE of a page of size S sits at the deepest level
 *   whose entries cover at most S; a size larger than that level's span
 *   (64 KiB over 4 KiB) has a table of its own whose entries cover S each
 *   (the big-page table of NVIDIA's GMMU: PD0 points to a small-page table
 *   of 512 x 4 KiB and a big-page table of 32 x 64 KiB).
 * - Mapping: the profile's regions, the trace's MAP records (later ones
 *   win over the part of earlier ones they overlap; a trimmed region keeps
 *   only its whole pages), and default_page_bytes for every other VA until
 *   the first MAP record; with default 0 every other VA is unmapped.
 * - An entry is INVALID where nothing is mapped below it (a walk for an
 *   unmapped VA stops at the first such entry: a fault).
 * - Page-table memory: each table (node) gets a physical address on first
 *   use, from the end of the frames' physical space up, aligned to its size,
 *   so page-table reads hash into the L2 like any other physical address.
 *
 * Notes:
 * - Regions are a sorted array of disjoint ranges (binary search); a new
 *   region is merged with an adjacent one of the same page size, so a
 *   trace mapping its pages in order keeps the array short. Inserting out
 *   of order costs a move of the array's tail. */
#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/rng.h"
#include "vmem_internal.h"

#define EMPTY_KEY UINT64_MAX
#define MIN_LEVEL_BITS 1
#define MAX_LEVEL_BITS 20 /* 1M entries a table: far beyond any GPU's 512 */
#define MAX_VA_BITS 64
#define NODE_ALIGN 64 /* bytes: the smallest alignment of a table */

static int size_index(const gx_ptable *pt, uint64_t s)
{
    for (int i = 0; i < pt->n_sizes; i++)
        if (pt->sizes[i] == s)
            return i;
    return -1;
}

static int check_geometry(gx_ptable *pt, const gx_tlb_cfg *t, gx_msg *msg)
{
    if (t->n_page_sizes < 1 || t->n_page_sizes > GX_MAX_PAGE_SIZES)
        return gx_fail(msg, GX_ECONFIG, "tlb.page_table.page_sizes: 1 to %d sizes required",
                       GX_MAX_PAGE_SIZES);
    for (int i = 0; i < t->n_page_sizes; i++)
        if (!gx_is_pow2_u64(t->page_sizes[i]) || t->page_sizes[i] < 4096 ||
            (i && t->page_sizes[i] <= t->page_sizes[i - 1]))
            return gx_fail(msg, GX_ECONFIG,
                           "tlb.page_table.page_sizes[%d]: %llu is not a power of two >= 4096 "
                           "above the previous size",
                           i, (unsigned long long)t->page_sizes[i]);
    if (t->n_level_bits < 1 || t->n_level_bits > GX_MAX_PT_LEVELS)
        return gx_fail(msg, GX_ECONFIG, "tlb.page_table.level_bits: 1 to %d levels required",
                       GX_MAX_PT_LEVELS);
    uint32_t total = (uint32_t)gx_log2_u64(t->page_sizes[0]);
    for (int i = 0; i < t->n_level_bits; i++) {
        if (t->level_bits[i] < MIN_LEVEL_BITS || t->level_bits[i] > MAX_LEVEL_BITS)
            return gx_fail(msg, GX_ECONFIG, "tlb.page_table.level_bits[%d]: %u is not in %d..%d",
                           i, t->level_bits[i], MIN_LEVEL_BITS, MAX_LEVEL_BITS);
        total += t->level_bits[i];
    }
    if (total > MAX_VA_BITS)
        return gx_fail(msg, GX_ECONFIG,
                       "tlb.page_table.level_bits: %u VA bits with the smallest page, more than %d",
                       total, MAX_VA_BITS);
    if (!gx_is_pow2_u64(t->pte_bytes) || t->pte_bytes < 4 || t->pte_bytes > 16)
        return gx_fail(msg, GX_ECONFIG, "tlb.page_table.pte_bytes: %u is not 4, 8 or 16",
                       t->pte_bytes);
    pt->n_levels = t->n_level_bits;
    pt->n_sizes = t->n_page_sizes;
    memcpy(pt->sizes, t->page_sizes, sizeof pt->sizes);
    memcpy(pt->bits, t->level_bits, sizeof pt->bits);
    pt->pte_bytes = t->pte_bytes;
    pt->pte_shift = (uint32_t)gx_log2_u64(t->pte_bytes);
    pt->span_shift[pt->n_levels - 1] = (uint32_t)gx_log2_u64(t->page_sizes[0]);
    for (int i = pt->n_levels - 2; i >= 0; i--)
        pt->span_shift[i] = pt->span_shift[i + 1] + pt->bits[i + 1];
    for (int s = 0; s < pt->n_sizes; s++) {
        uint32_t lg = (uint32_t)gx_log2_u64(pt->sizes[s]);
        int f = pt->n_levels - 1;
        while (f > 0 && pt->span_shift[f - 1] <= lg)
            f--;
        if (lg >= pt->span_shift[f] + pt->bits[f])
            return gx_fail(msg, GX_ECONFIG,
                           "tlb.page_table.page_sizes[%d]: %llu is larger than the whole table",
                           s, (unsigned long long)pt->sizes[s]);
        pt->final_level[s] = f;
        pt->can_final[f] = 1;
    }
    return GX_OK;
}

static int alloc_nodes(gx_ptable *pt, uint64_t cap)
{
    uint64_t *k = malloc((size_t)cap * sizeof *k), *v = malloc((size_t)cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return GX_ENOMEM;
    }
    for (uint64_t i = 0; i < cap; i++)
        k[i] = EMPTY_KEY;
    uint64_t *ok = pt->node_key, *ov = pt->node_pa, ocap = pt->node_cap;
    pt->node_key = k;
    pt->node_pa = v;
    pt->node_cap = cap;
    for (uint64_t i = 0; i < ocap; i++) {
        if (ok[i] == EMPTY_KEY)
            continue;
        uint64_t j = gx_mix64(ok[i]) & (cap - 1);
        while (k[j] != EMPTY_KEY)
            j = (j + 1) & (cap - 1);
        k[j] = ok[i];
        v[j] = ov[i];
    }
    free(ok);
    free(ov);
    return GX_OK;
}

int gx_vmem_pt_init(gx_vmem *vm, const gx_tlb_cfg *t, uint64_t phys_bytes, gx_msg *msg)
{
    gx_ptable *pt = &vm->pt;
    int rc = check_geometry(pt, t, msg);
    if (rc != GX_OK)
        return rc;
    if (t->default_page_bytes && size_index(pt, t->default_page_bytes) < 0)
        return gx_fail(msg, GX_ECONFIG,
                       "tlb.page_table.default_page_bytes: %llu is not one of page_sizes",
                       (unsigned long long)t->default_page_bytes);
    pt->default_page = t->default_page_bytes;
    pt->next_pa = phys_bytes;
    for (int i = 0; i < GX_MAX_PT_LEVELS; i++)
        pt->memo_node[i] = EMPTY_KEY;
    if (alloc_nodes(pt, 1024) != GX_OK)
        return gx_fail(msg, GX_ENOMEM, "vmem: out of memory for the page table");
    pt->on = 1;
    for (int i = 0; i < t->n_regions; i++) {
        const gx_va_region *r = &t->regions[i];
        if ((rc = gx_vmem_map(vm, r->va_base, r->bytes, r->page_bytes, msg)) != GX_OK)
            return gx_fail(msg, rc, "tlb.page_table.regions[%d]: %s", i, msg ? msg->text : "");
    }
    pt->maps_seen = 0; /* the profile's regions keep the default on */
    return GX_OK;
}

void gx_vmem_pt_free(gx_vmem *vm)
{
    free(vm->pt.reg);
    free(vm->pt.node_key);
    free(vm->pt.node_pa);
}

int gx_vmem_translating(const gx_vmem *vm)
{
    return vm->pt.on;
}

int gx_vmem_pt_levels(const gx_vmem *vm)
{
    return vm->pt.n_levels;
}

int gx_vmem_level_can_be_final(const gx_vmem *vm, int level)
{
    return vm->pt.can_final[level];
}

int gx_vmem_size_index(const gx_vmem *vm, uint64_t page_bytes)
{
    return size_index(&vm->pt, page_bytes);
}

int gx_vmem_n_sizes(const gx_vmem *vm)
{
    return vm->pt.n_sizes;
}

uint64_t gx_vmem_size(const gx_vmem *vm, int index)
{
    return vm->pt.sizes[index];
}

/* First region with end > va (n_reg when none). */
static uint64_t first_ending_after(const gx_ptable *pt, uint64_t va)
{
    uint64_t lo = 0, hi = pt->n_reg;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (pt->reg[mid].end > va)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

uint64_t gx_vmem_page(const gx_vmem *vm, uint64_t va, uint64_t *base)
{
    const gx_ptable *pt = &vm->pt;
    uint64_t i = first_ending_after(pt, va);
    uint64_t s = 0;
    if (i < pt->n_reg && pt->reg[i].base <= va)
        s = pt->reg[i].page_bytes;
    else if (!pt->maps_seen)
        s = pt->default_page;
    if (s && base)
        *base = va & ~(s - 1);
    return s;
}

/* Is anything mapped in [lo, lo + bytes)? */
static int any_mapped(const gx_ptable *pt, uint64_t lo, uint64_t bytes)
{
    if (pt->default_page && !pt->maps_seen)
        return 1;
    uint64_t i = first_ending_after(pt, lo);
    return i < pt->n_reg && pt->reg[i].base - lo < bytes;
}

/* The node table's PA of a node, allocated on first use. */
static uint64_t node_table_pa(gx_ptable *pt, uint64_t node, uint64_t node_bytes)
{
    uint64_t j = gx_mix64(node) & (pt->node_cap - 1);
    while (pt->node_key[j] != EMPTY_KEY) {
        if (pt->node_key[j] == node)
            return pt->node_pa[j];
        j = (j + 1) & (pt->node_cap - 1);
    }
    uint64_t align = node_bytes > NODE_ALIGN ? node_bytes : NODE_ALIGN;
    uint64_t pa = (pt->next_pa + align - 1) & ~(align - 1);
    pt->next_pa = pa + node_bytes;
    pt->node_key[j] = node;
    pt->node_pa[j] = pa;
    if (++pt->node_n * 2 > pt->node_cap)
        (void)alloc_nodes(pt, pt->node_cap * 2); /* on failure the table stays fuller */
    return pa;
}

/* The PA of a node (allocated on first use): the level's memo, else the
 * node table. Measured: see docs/performance.md ("Translation:
 * instructions per access"). */
static uint64_t node_pa(gx_ptable *pt, uint64_t node, uint64_t node_bytes)
{
    const int level = (int)(node & 7);
    if (pt->memo_node[level] == node)
        return pt->memo_pa[level];
    uint64_t pa = node_table_pa(pt, node, node_bytes);
    pt->memo_node[level] = node;
    pt->memo_pa[level] = pa;
    return pa;
}

/* Entry (level, table class cls, index idx): key and PA. cls 0: the
 * level's own table (entries of span(level)); cls 1 + s: the table of page
 * size s (entries of sizes[s]). */
static void place_entry(gx_ptable *pt, int level, int cls, uint64_t idx, gx_vmem_pte *e)
{
    uint32_t ebits = pt->bits[level];
    if (cls)
        ebits -= (uint32_t)gx_log2_u64(pt->sizes[cls - 1]) - pt->span_shift[level];
    uint64_t node = gx_vmem_key(idx >> ebits, cls, level);
    uint64_t pa = node_pa(pt, node, (uint64_t)pt->pte_bytes << ebits);
    e->key = gx_vmem_key(idx, cls, level);
    e->pa = pa + ((idx & (((uint64_t)1 << ebits) - 1)) << pt->pte_shift);
}

static uint32_t entry_shift(const gx_ptable *pt, int level, int cls)
{
    return cls ? (uint32_t)gx_log2_u64(pt->sizes[cls - 1]) : pt->span_shift[level];
}

void gx_vmem_walk_begin(gx_vmem *vm, uint64_t va, gx_vmem_walk *w)
{
    uint64_t base = 0;
    w->va = va;
    w->page_bytes = gx_vmem_page(vm, va, &base);
    w->size = w->page_bytes ? size_index(&vm->pt, w->page_bytes) : -1;
    w->final_level = w->size >= 0 ? vm->pt.final_level[w->size] : -1;
    w->span_shift = vm->pt.span_shift;
}

void gx_vmem_walk_entry(gx_vmem *vm, const gx_vmem_walk *w, int level, gx_vmem_pte *e)
{
    gx_ptable *pt = &vm->pt;
    const uint64_t va = w->va, s = w->page_bytes;
    const int si = w->size, f = w->final_level;
    int cls = 0;
    memset(e, 0, sizeof *e);
    if (si >= 0 && level == f) {
        e->kind = GX_PTE_FINAL;
        e->page_bytes = s;
        cls = s == ((uint64_t)1 << pt->span_shift[level]) ? 0 : 1 + si;
    } else if (si >= 0) { /* above the page's level: a table; below it: none */
        e->kind = level < f ? GX_PTE_TABLE : GX_PTE_INVALID;
    } else {
        uint64_t span = (uint64_t)1 << pt->span_shift[level];
        e->kind = level + 1 < pt->n_levels && any_mapped(pt, va & ~(span - 1), span)
                      ? GX_PTE_TABLE
                      : GX_PTE_INVALID;
    }
    uint32_t sh = entry_shift(pt, level, cls);
    e->va_base = va >> sh << sh;
    place_entry(pt, level, cls, va >> sh, e);
}

void gx_vmem_entry(gx_vmem *vm, int level, uint64_t va, gx_vmem_pte *e)
{
    gx_vmem_walk w;
    gx_vmem_walk_begin(vm, va, &w);
    gx_vmem_walk_entry(vm, &w, level, e);
}

/* The kind and page size entry_in_table gives an entry of table (level,
 * cls) whose first VA is in a page of size s (mapped): the same for every
 * entry of a block block_page found uniform. 0 when s is not installable. */
static int entry_kind(const gx_ptable *pt, int level, int cls, uint64_t s, gx_vmem_pte *o)
{
    memset(o, 0, sizeof *o);
    int si = size_index(pt, s);
    if (si < 0)
        return 0;
    int f = pt->final_level[si];
    int scls = s == ((uint64_t)1 << pt->span_shift[f]) ? 0 : 1 + si;
    if (level == f && scls == cls) {
        o->kind = GX_PTE_FINAL;
        o->page_bytes = s;
    } else if (level < f && !cls) {
        o->kind = GX_PTE_TABLE;
    }
    return 1;
}

/* Entry idx of the table (level, cls) whose entry 0 is at pa0: its kind
 * from the mapping (what gx_vmem_entry gives, seen from this table). */
static void entry_in_table(gx_vmem *vm, int level, int cls, uint64_t idx, uint64_t pa0,
                           gx_vmem_pte *o)
{
    gx_ptable *pt = &vm->pt;
    uint32_t sh = entry_shift(pt, level, cls);
    uint64_t va = idx << sh, base = 0, s = gx_vmem_page(vm, va, &base);
    memset(o, 0, sizeof *o);
    const int page_entry = s && entry_kind(pt, level, cls, s, o);
    if (!page_entry && !cls && level + 1 < pt->n_levels) { /* a pointer, or nothing mapped */
        uint64_t span = (uint64_t)1 << pt->span_shift[level];
        o->kind = any_mapped(pt, va, span) ? GX_PTE_TABLE : GX_PTE_INVALID;
    }
    o->va_base = va;
    o->key = gx_vmem_key(idx, cls, level);
    o->pa = pa0 + (idx << pt->pte_shift);
}

/* The page size of every VA from first to last (the first VAs of a fetch
 * block's entries) when it is one region's, or the default's with no region
 * among them; 0 otherwise (the entries' kinds then differ or depend on what
 * is mapped below them). One look-up instead of one per entry; measured:
 * see docs/performance.md ("Translation: instructions per access"). */
static uint64_t block_page(const gx_ptable *pt, uint64_t first, uint64_t last)
{
    if (last < first)
        return 0;
    uint64_t i = first_ending_after(pt, first);
    if (i < pt->n_reg && pt->reg[i].base <= first)
        return pt->reg[i].end > last ? pt->reg[i].page_bytes : 0;
    if (i < pt->n_reg && pt->reg[i].base <= last)
        return 0;
    return pt->maps_seen ? 0 : pt->default_page;
}

/* The aligned fetch block holding entry e of level `level`. */
typedef struct fblock {
    int cls;
    uint32_t sh;    /* log2 of the VA an entry covers */
    uint64_t k;     /* entries */
    uint64_t start; /* index of the first */
    uint64_t pa0;   /* the PA of entry index 0 as seen from this node (entries are contiguous) */
} fblock;

static void block_of(const gx_ptable *pt, int level, const gx_vmem_pte *e, uint32_t fetch_bytes,
                     fblock *b)
{
    b->cls = (int)(e->key >> 3 & 7);
    b->sh = entry_shift(pt, level, b->cls);
    uint32_t ebits = pt->bits[level] - (b->cls ? b->sh - pt->span_shift[level] : 0);
    uint64_t k = fetch_bytes >> pt->pte_shift;
    if (k > ((uint64_t)1 << ebits))
        k = (uint64_t)1 << ebits;
    if (k > GX_VMEM_MAX_FETCH)
        k = GX_VMEM_MAX_FETCH;
    if (!k)
        k = 1;
    uint64_t idx = e->key >> 6, in_node = idx & (((uint64_t)1 << ebits) - 1);
    b->k = k;
    b->start = idx & ~(k - 1);
    b->pa0 = e->pa - (in_node << pt->pte_shift) - ((idx - in_node) << pt->pte_shift);
}

/* 1 when every entry of block b has one kind and page size (into o). */
static int block_uniform(const gx_ptable *pt, int level, const fblock *b, gx_vmem_pte *o)
{
    uint64_t ps = block_page(pt, b->start << b->sh, (b->start + b->k - 1) << b->sh);
    return ps && entry_kind(pt, level, b->cls, ps, o);
}

int gx_vmem_fetch_block(gx_vmem *vm, int level, const gx_vmem_pte *e, uint32_t fetch_bytes,
                        gx_vmem_pte *out)
{
    gx_ptable *pt = &vm->pt;
    fblock b;
    block_of(pt, level, e, fetch_bytes, &b);
    gx_vmem_pte o; /* every entry's kind and size: entry_in_table's */
    if (!block_uniform(pt, level, &b, &o)) {
        for (uint64_t j = 0; j < b.k; j++)
            entry_in_table(vm, level, b.cls, b.start + j, b.pa0, &out[j]);
        return (int)b.k;
    }
    for (uint64_t j = 0; j < b.k; j++) {
        uint64_t ix = b.start + j;
        out[j] = o;
        out[j].va_base = ix << b.sh;
        out[j].key = gx_vmem_key(ix, b.cls, level);
        out[j].pa = b.pa0 + (ix << pt->pte_shift);
    }
    return (int)b.k;
}

/* A final entry's block of one page size, the entry's own: every entry of
 * it is final with that size (entry_kind of e's size in e's table), known
 * without a look at the kinds. Measured: see docs/performance.md
 * ("Translation: lean paths for 4 KiB pages"). */
int gx_vmem_fetch_uniform(gx_vmem *vm, int level, const gx_vmem_pte *e, uint32_t fetch_bytes,
                          gx_vmem_block *out)
{
    gx_ptable *pt = &vm->pt;
    fblock b;
    block_of(pt, level, e, fetch_bytes, &b);
    gx_vmem_pte o;
    const uint64_t ps = block_page(pt, b.start << b.sh, (b.start + b.k - 1) << b.sh);
    if (ps && e->kind == GX_PTE_FINAL && ps == e->page_bytes) {
        o.kind = GX_PTE_FINAL;
        o.page_bytes = ps;
    } else if (!ps || !entry_kind(pt, level, b.cls, ps, &o)) {
        return 0;
    }
    out->kind = o.kind;
    out->page_bytes = o.page_bytes;
    out->first_key = gx_vmem_key(b.start, b.cls, level);
    out->first_va = b.start << b.sh;
    out->va_shift = b.sh;
    return (int)b.k;
}

static int grow_regions(gx_ptable *pt, uint64_t need)
{
    if (need <= pt->cap_reg)
        return GX_OK;
    uint64_t cap = pt->cap_reg ? pt->cap_reg * 2 : 64;
    while (cap < need)
        cap *= 2;
    gx_vregion *r = realloc(pt->reg, (size_t)cap * sizeof *r);
    if (!r)
        return GX_ENOMEM;
    pt->reg = r;
    pt->cap_reg = cap;
    return GX_OK;
}

/* Replace regions [i, j) by the n pieces p[] (sorted, disjoint). */
static int splice(gx_ptable *pt, uint64_t i, uint64_t j, const gx_vregion *p, uint64_t n)
{
    if (grow_regions(pt, pt->n_reg - (j - i) + n) != GX_OK)
        return GX_ENOMEM;
    memmove(&pt->reg[i + n], &pt->reg[j], (size_t)(pt->n_reg - j) * sizeof *pt->reg);
    memcpy(&pt->reg[i], p, (size_t)n * sizeof *p);
    pt->n_reg = pt->n_reg - (j - i) + n;
    return GX_OK;
}

int gx_vmem_map(gx_vmem *vm, uint64_t va, uint64_t bytes, uint64_t page_bytes, gx_msg *msg)
{
    gx_ptable *pt = &vm->pt;
    if (!pt->on)
        return gx_fail(msg, GX_EINVAL, "vmem: no page table (the profile has no tlb section)");
    if (size_index(pt, page_bytes) < 0)
        return gx_fail(msg, GX_EINVAL, "vmem: page size %llu is not one of page_sizes",
                       (unsigned long long)page_bytes);
    if (!bytes)
        return gx_fail(msg, GX_EINVAL, "vmem: a mapping of 0 bytes");
    uint64_t b = va & ~(page_bytes - 1), e = va + bytes;
    e = e < va || e > UINT64_MAX - page_bytes ? UINT64_MAX & ~(page_bytes - 1)
                                               : (e + page_bytes - 1) & ~(page_bytes - 1);
    if (e <= b)
        return gx_fail(msg, GX_EINVAL, "vmem: mapping at %#llx wraps the address space",
                       (unsigned long long)va);
    pt->maps_seen = 1;
    uint64_t i = first_ending_after(pt, b), j = i;
    while (j < pt->n_reg && pt->reg[j].base < e)
        j++;
    gx_vregion p[3];
    uint64_t n = 0;
    if (i < j && pt->reg[i].base < b) { /* left remainder, whole pages only */
        gx_vregion l = pt->reg[i];
        l.end = b & ~(l.page_bytes - 1);
        if (l.end > l.base)
            p[n++] = l;
    }
    p[n++] = (gx_vregion){b, e, page_bytes};
    if (i < j && pt->reg[j - 1].end > e) { /* right remainder */
        gx_vregion r = pt->reg[j - 1];
        r.base = (e + r.page_bytes - 1) & ~(r.page_bytes - 1);
        if (r.end > r.base)
            p[n++] = r;
    }
    /* merge the new region with adjacent ones of its page size */
    uint64_t mid = n == 3 || (n == 2 && p[0].base != b) ? 1 : 0;
    if (mid == 0 && i > 0 && pt->reg[i - 1].end == b && pt->reg[i - 1].page_bytes == page_bytes) {
        i--;
        p[0].base = pt->reg[i].base;
    }
    if (mid + 1 == n && j < pt->n_reg && pt->reg[j].base == e &&
        pt->reg[j].page_bytes == page_bytes) {
        p[mid].end = pt->reg[j].end;
        j++;
    }
    if (splice(pt, i, j, p, n) != GX_OK)
        return gx_fail(msg, GX_ENOMEM, "vmem: out of memory for a mapping");
    return GX_OK;
}
