/* tlb_page.c - how much of the arena (the target's allocated memory, on
 * CUDA cuMemAlloc memory) one page-table walk translates: the walks of a
 * pass over the arena with every translation evicted first.
 *
 * Method (public target API only):
 * 1. two untimed seq passes over offsets 0, S, 2S, ... (S = --step, default
 *    64 KiB) up to --bytes: the data lines sit in the L2, the translations
 *    in the TLBs;
 * 2. an xchase over --thrash pages 34 MiB apart (default 16384: 544 GiB) on
 *    the same SM: every TLB level that SM sees is refilled with other pages
 *    (the chain's window is far from the arena; 17 granules apart, pages
 *    fall in consecutive entries of any reach up to 32 MiB, which every
 *    index, modulo or hashed, spreads over all its sets);
 * 3. a timed seq pass (cold translations), then another (warm ones);
 *    steps 2 and 3 --reps times (default 3). An access walked when its cold
 *    pass costs --walk cycles (default 150) more than the warm one at the
 *    same offset in every repetition: a walk repeats at the same offsets,
 *    a data line's L2 miss or move between partitions does not.
 * What the walks say: one walk per W bytes of arena (the distance between
 * walks) = page x the PTEs one walk's fetch returns into a TLB entry; 64
 * KiB steps inside a walked range never walking again means the page is
 * at least W / (PTEs per fetch) (a fetch is at most one L2 line: 16 PTEs of
 * 8 bytes in 128 bytes), and no page size between a 64 KiB step and W exists
 * below it.
 *
 * usage: tlb_page [--target T] [--sm N] [--bytes B] [--step S] [--thrash N] [--walk C]
 *                 [--reps R]
 * Output: one line per walk (offset, cycles cold, warm), then a summary line
 * "walks N of M accesses ...: one per X bytes (median distance D)", X the
 * bytes scanned over the walks. Exit 0 ok, 2
 * bad usage, 3 no target, 1 a primitive failed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/parse.h"
#include "gpuxray/target.h"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fprintf(stderr, "usage: tlb_page [--target T] [--sm N] [--bytes B] [--step S] "
                    "[--thrash N] [--walk C] [--reps R]\n");
    return 2;
}

static int fail(const char *what, const gx_msg *m)
{
    fprintf(stderr, "tlb_page: %s: %s\n", what, m->text);
    return 1;
}

int main(int argc, char **argv)
{
    const char *spec = NULL;
    uint64_t sm = 0, bytes = 64 * MiB, step = 64 * KiB, thrash = 16384, walk = 150, reps = 3;
    for (int i = 1; i < argc; i++) {
        uint64_t *dst = NULL;
        if (!strcmp(argv[i], "--target") && i + 1 < argc) {
            spec = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--sm"))
            dst = &sm;
        else if (!strcmp(argv[i], "--bytes"))
            dst = &bytes;
        else if (!strcmp(argv[i], "--step"))
            dst = &step;
        else if (!strcmp(argv[i], "--thrash"))
            dst = &thrash;
        else if (!strcmp(argv[i], "--walk"))
            dst = &walk;
        else if (!strcmp(argv[i], "--reps"))
            dst = &reps;
        gx_msg pm;
        if (!dst || i + 1 >= argc ||
            gx_parse_u64(argv[i], argv[i + 1], 0, UINT64_MAX, GX_NUM_PLAIN, dst, &pm) != GX_OK)
            return usage();
        i++;
    }
    if (step < 8 || step % 8 || bytes < step || bytes / step > (1u << 20) || !thrash ||
        thrash > GX_XCHASE_MAX_STEPS || sm > UINT32_MAX || !reps || reps > 16)
        return usage();
    gx_target *t;
    gx_msg m;
    if (gx_target_open(spec, 1, &t, &m) != GX_OK) {
        fprintf(stderr, "tlb_page: %s\n", m.text);
        return 3;
    }
    const size_t n = (size_t)(bytes / step);
    gx_seq_op *ops = calloc(n, sizeof *ops);
    double *cold = malloc(n * sizeof *cold), *warm = malloc(n * sizeof *warm);
    double *chase = malloc((size_t)thrash * 2 * sizeof *chase);
    uint64_t *at = malloc(n * sizeof *at), *gap = malloc(n * sizeof *gap);
    int rc = 0;
    if (!ops || !cold || !warm || !chase || !at || !gap) {
        fprintf(stderr, "tlb_page: out of memory\n");
        rc = 1;
    }
    if (!rc && gx_target_arena(t, bytes, &m) != GX_OK)
        rc = fail("arena", &m);
    for (size_t i = 0; !rc && i < n; i++)
        ops[i] = (gx_seq_op){i * step, GX_OP_LOAD, 1};
    for (int pass = 0; !rc && pass < 2; pass++)
        if (gx_target_seq(t, ops, n, (uint32_t)sm, warm, &m) != GX_OK)
            rc = fail("seq (warm-up)", &m);
    gx_xchase_req q = {17 * 2 * MiB, (uint32_t)thrash, 1, 1, (uint32_t)sm, 0, 0, 0};
    unsigned char *slow = calloc(n, 1);
    if (!rc && !slow) {
        fprintf(stderr, "tlb_page: out of memory\n");
        rc = 1;
    }
    for (uint64_t r = 0; !rc && r < reps; r++) {
        if (gx_target_xchase(t, &q, chase, &m) != GX_OK)
            rc = fail("xchase (evicting the translations)", &m);
        else if (gx_target_seq(t, ops, n, (uint32_t)sm, cold, &m) != GX_OK)
            rc = fail("seq (cold translations)", &m);
        else if (gx_target_seq(t, ops, n, (uint32_t)sm, warm, &m) != GX_OK)
            rc = fail("seq (warm translations)", &m);
        for (size_t i = 0; !rc && i < n; i++)
            slow[i] = (unsigned char)(slow[i] + (cold[i] > warm[i] + (double)walk));
    }
    size_t walks = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (slow[i] == reps) {
            printf("walk at %" PRIu64 ": %.0f cycles, %.0f warm (last repetition)\n", i * step,
                   cold[i], warm[i]);
            at[walks++] = i * step;
        }
    if (!rc) {
        for (size_t k = 1; k < walks; k++)
            gap[k - 1] = at[k] - at[k - 1];
        uint64_t med = 0;
        if (walks > 1) {
            qsort(gap, walks - 1, sizeof *gap, cmp_u64);
            med = gap[(walks - 1) / 2];
        }
        printf("walks %zu of %zu accesses %" PRIu64 " bytes apart over %" PRIu64
               " bytes: one per %" PRIu64 " bytes (median distance %" PRIu64 ")\n",
               walks, n, step, bytes, walks ? bytes / walks : 0, med);
    }
    free(ops);
    free(cold);
    free(warm);
    free(chase);
    free(at);
    free(gap);
    free(slow);
    gx_target_close(t);
    return rc;
}
