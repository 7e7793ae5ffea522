/* tlb_page.c - the translation page of allocated memory (the arena), told
 * apart from the allocation granularity and from a TLB entry's reach: how
 * much of the arena one page-table walk translates (the method of
 * bench/tlb_page, in the stage).
 *
 * Method: every PAGE_REPS times, a translation chase over THRASH_STEPS pages
 * THRASH_GRANULES granules apart (every TLB level the SM sees refilled with
 * other pages: consecutive entries of any reach up to 32 MiB, spread over
 * every set by any index), then a timed seq pass over the arena in
 * PAGE_STEP steps (cold translations) and another (warm). An offset walked
 * when it is WALK_FRACTION of the measured walk slower cold than warm in
 * every repetition (a walk repeats at the same offsets, a data line's L2
 * miss does not). The distance between walks is W, the bytes one walk
 * translates: the page times the PTEs one fetch returns into an entry.
 *
 * What follows (assumptions: 8-byte PTEs, a fetch of at most one L2 line):
 * the page is at least W / (line / 8) and at most W; a walk of the arena
 * that costs at least what a walk of the chase window costs (less
 * WALK_SAME) reads no fewer levels of the page table, so its page is no
 * larger than the window's, which is at most the granule (the window maps
 * each granule on its own). A larger page ends its walk a level higher and
 * costs a read less; a walk that costs more is no sign of a smaller page
 * (its page-table lines may come from further away: in a whole discovery
 * the H200's arena walks cost 583 cycles against the window's 505), and W
 * bounds the page from below anyway. When the bounds meet, the page is
 * known; else a range is reported. Report rows only: the profile's page
 * sizes stay the model's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../infer.h"
#include "../../infer_util.h"
#include "tlb_internal.h"

#define PAGE_BYTES (256ULL << 20) /* arena scanned: 8 entries of 32 MiB */
#define PAGE_STEP (64ULL << 10)   /* below every GPU page but 4 KiB */
#define PAGE_REPS 3
#define THRASH_STEPS 16384u       /* twice the largest level the generator or an H200 has */
#define THRASH_GRANULES 17        /* odd: past a 32 MiB reach, consecutive entries */
#define WALK_FRACTION 0.5         /* of the measured walk: a walk, not a level's hit */
#define WALK_SAME 0.15            /* relative: no read fewer (one read of a walk of five is 20%) */
#define PTE_BYTES 8

/* The walks of one pass: *n_walk offsets (ascending) into at. */
static int page_walks(gx_infer *ctx, tlb_meter *m, double walk, uint64_t *at, size_t *n_walk,
                      double *cost)
{
    const size_t n = (size_t)(PAGE_BYTES / PAGE_STEP);
    gx_seq_op *ops = calloc(n, sizeof *ops);
    double *cold = malloc(n * sizeof *cold), *warm = malloc(n * sizeof *warm);
    double *chase = malloc((size_t)THRASH_STEPS * sizeof *chase);
    unsigned char *slow = calloc(n, 1);
    int rc = ops && cold && warm && chase && slow ? GX_OK
                                                  : gx_fail(ctx->msg, GX_ENOMEM, "tlb: out of memory");
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        ops[i] = (gx_seq_op){i * PAGE_STEP, GX_OP_LOAD, 1};
    for (int pass = 0; rc == GX_OK && pass < 2; pass++) /* data lines into the L2 */
        rc = gx_target_seq(ctx->t, ops, n, m->sm, warm, ctx->msg);
    gx_xchase_req q = {THRASH_GRANULES * m->granule, THRASH_STEPS, 0, 1, m->sm, 0, 0, 0};
    double sum = 0;
    for (int r = 0; rc == GX_OK && r < PAGE_REPS; r++) {
        if ((rc = gx_target_xchase(ctx->t, &q, chase, ctx->msg)) != GX_OK ||
            (rc = gx_target_seq(ctx->t, ops, n, m->sm, cold, ctx->msg)) != GX_OK ||
            (rc = gx_target_seq(ctx->t, ops, n, m->sm, warm, ctx->msg)) != GX_OK)
            break;
        m->chases++;
        for (size_t i = 0; i < n; i++)
            slow[i] = (unsigned char)(slow[i] + (cold[i] - warm[i] > WALK_FRACTION * walk));
    }
    *n_walk = 0;
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (slow[i] == PAGE_REPS) {
            at[(*n_walk)++] = i * PAGE_STEP;
            sum += cold[i] - warm[i];
        }
    *cost = *n_walk ? sum / (double)*n_walk : NAN;
    free(ops);
    free(cold);
    free(warm);
    free(chase);
    free(slow);
    return rc;
}

int tlb_page(gx_infer *ctx, tlb_meter *m, double walk)
{
    if (!(walk > 0))
        return GX_OK;
    int rc = infer_arena_ensure(ctx, PAGE_BYTES);
    if (rc != GX_OK)
        return rc;
    uint64_t at[PAGE_BYTES / PAGE_STEP];
    size_t nw = 0;
    double cost = NAN;
    if ((rc = page_walks(ctx, m, walk, at, &nw, &cost)) != GX_OK)
        return rc;
    char v[128], how[256];
    /* W: the walks evenly spaced, the first within W of the arena's start */
    uint64_t w = nw >= 2 ? at[1] - at[0] : 0;
    for (size_t k = 1; w && k < nw; k++)
        if (at[k] - at[k - 1] != w)
            w = 0;
    if (!w || at[0] >= w) {
        snprintf(v, sizeof v, "unknown");
        snprintf(how, sizeof how, "%zu walks over %llu MiB in %llu KiB steps, not evenly spaced",
                 nw, (unsigned long long)(PAGE_BYTES >> 20),
                 (unsigned long long)(PAGE_STEP >> 10));
        infer_report_row(ctx, "tlb.walk_bytes", v, how, NAN, 0);
        return GX_OK;
    }
    char a[32], b[32];
    snprintf(v, sizeof v, "%s", infer_fmt_bytes(w, a, sizeof a));
    snprintf(how, sizeof how, "one walk per %s of allocated memory: %zu walks over %llu MiB in "
             "%llu KiB steps, 3 of 3 repetitions, +%.0f cycles each (the window's walk +%.0f)",
             a, nw, (unsigned long long)(PAGE_BYTES >> 20),
             (unsigned long long)(PAGE_STEP >> 10), cost, walk);
    infer_report_row(ctx, "tlb.walk_bytes", v, how, NAN, 0);
    const uint32_t line = infer_line_bytes(ctx);
    uint64_t lo = w / (line / PTE_BYTES), hi = w;
    int same_depth = cost >= (1 - WALK_SAME) * walk; /* no level fewer than the window's */
    if (same_depth && m->granule < hi)
        hi = m->granule;
    if (lo < 4096)
        lo = 4096;
    if (lo >= hi)
        snprintf(v, sizeof v, "%s", infer_fmt_bytes(hi, a, sizeof a));
    else
        snprintf(v, sizeof v, "%s to %s", infer_fmt_bytes(lo, a, sizeof a),
                 infer_fmt_bytes(hi, b, sizeof b));
    snprintf(how, sizeof how, "at least walk bytes / %u PTEs a %u-byte fetch holds; at most %s",
             line / PTE_BYTES, line,
             same_depth ? "the granule: the walk no shorter than the window's, whose granules "
                          "map alone"
                        : "the walk bytes (a walk shorter than the window's)");
    infer_report_row(ctx, "tlb.translation_page", v, how, NAN, 0);
    return GX_OK;
}
