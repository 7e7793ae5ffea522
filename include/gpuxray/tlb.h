/* tlb.h - one TLB level (tlb.levels[i] of a profile): its instances (one
 * per SM, TPC, GPC or the whole GPU, as the level is shared), each a
 * set-associative cache with the policy registry's replacement (a gx_cache;
 * with lru the same hits and misses from a faster structure, tlb/salru.c).
 *
 * Notes:
 * - Lookup probes every installable page size with the VA aligned to that
 *   size's entry reach and a set index from the VA bits above it (correct
 *   for that size): an entry of page size S covers C = S when entry_bytes
 *   <= S, else min(entry_bytes, 32 S) (at most 32 pages per entry), with a
 *   valid bit per page (the cache's sector mask).
 * - A fill installs one page; fill_neighbour adds a page of the same walk's
 *   fetch to the requesting page's entry when the entry covers both. */
#ifndef GPUXRAY_TLB_H
#define GPUXRAY_TLB_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef struct gx_tlb gx_tlb;

typedef struct gx_tlb_stats {
    uint64_t accesses, hits, misses;
    uint64_t hits_by_size[GX_MAX_PAGE_SIZES]; /* by index into the installable sizes */
} gx_tlb_stats;

/* level: the level's configuration; t: the section (page sizes, sharing
 * domains); sm_count: SMs of the device. */
int gx_tlb_new(const gx_tlb_level_cfg *level, const gx_tlb_cfg *t, uint32_t sm_count,
               uint64_t seed, gx_tlb **out, gx_msg *msg);
void gx_tlb_free(gx_tlb *tlb);
/* 1 on a hit (*page_bytes = the page size found), 0 on a miss. */
int gx_tlb_lookup(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t *page_bytes);
/* gx_tlb_lookup of (sm[i], va[i]) for i = 0, 1, .. until one misses:
 * returns the hits h (page_bytes[0 .. h) their sizes); when h < n, request h
 * was looked up too (a miss, counted). */
size_t gx_tlb_lookup_run(gx_tlb *tlb, const uint32_t *sm, const uint64_t *va, size_t n,
                         uint64_t *page_bytes);
void gx_tlb_fill(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes);
/* gx_tlb_fill of a page whose lookup at this level missed, nothing done to
 * the level since: the same state as gx_tlb_fill (with entries of one page
 * the page's tag is known absent, so the fill does not look for it). */
void gx_tlb_fill_missed(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes);
/* ---- the levels after a first-level miss, as one chain ----
 * For levels that are all lean (gx_tlb_lean: lru, entries of one page, the
 * set by a mask): the lookups of levels from .. n - 1 until one hits, each
 * missed level's placement of its first probe kept for the fill of the
 * same page after it (nothing done to the levels in between). The same
 * probes, fills and counts as gx_tlb_lookup level by level and
 * gx_tlb_fill_missed. */
typedef struct gx_tlb_chain {
    uint64_t tag[GX_MAX_TLB_LEVELS];
    uint32_t set[GX_MAX_TLB_LEVELS], home[GX_MAX_TLB_LEVELS];
    int size[GX_MAX_TLB_LEVELS]; /* the size index placed, -1: none */
} gx_tlb_chain;
int gx_tlb_lean(const gx_tlb *tlb);
/* The level that hit (*page_bytes its size), -1 when every level missed. */
int gx_tlb_chain_lookup(gx_tlb *const *tlb, int from, int n, uint32_t sm, uint64_t va,
                        uint64_t *page_bytes, gx_tlb_chain *ch);
/* gx_tlb_fill_missed of levels 0 .. n - 1 (level j < from of ch: placed anew). */
void gx_tlb_chain_fill(gx_tlb *const *tlb, int from, int n, uint32_t sm, uint64_t va,
                       uint64_t page_bytes, const gx_tlb_chain *ch);
/* Add page nb_va (same size) to the entry of va when one entry covers both. */
void gx_tlb_fill_neighbour(gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t nb_va,
                           uint64_t page_bytes);
/* The pages of size page_bytes that the entry holding va has valid: bit k
 * is the page *entry_va + k * page_bytes (*entry_va: va aligned to the
 * entry's reach); 0 when no entry holds va's tag. No state changes (a
 * hit's entry copied into nearer levels). */
uint32_t gx_tlb_entry_pages(const gx_tlb *tlb, uint32_t sm, uint64_t va, uint64_t page_bytes,
                            uint64_t *entry_va);
/* 1 when some page size's entry covers several pages (else fill_neighbour
 * never adds anything). */
int gx_tlb_takes_neighbours(const gx_tlb *tlb);
/* The instance an SM uses (for per-instance limits). */
uint32_t gx_tlb_instance(const gx_tlb *tlb, uint32_t sm);
uint32_t gx_tlb_instances(const gx_tlb *tlb);
void gx_tlb_flush(gx_tlb *tlb);
void gx_tlb_get_stats(const gx_tlb *tlb, gx_tlb_stats *s);

#endif
