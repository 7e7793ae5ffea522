/* cuda_hashprobe.c - raw data for the H200 slice-hash study: the L2-hit
 * latency fingerprint of every 256-byte granule of many 2 MiB pages, from
 * SMs of both near-L2 partitions, in one large allocation (arena A) and in a
 * second, fresh allocation (arena B, allocated while A is still held).
 *
 *   cuda_hashprobe [--target T] [--a-mib N] [--b-mib N] [--reps R] -o DIR
 *
 * Writes DIR/a.u8, DIR/b.u8 (uint8 matrices [page][granule][sm], value =
 * median cycles of R timed reloads after one untimed load, minus 200,
 * clamped to 0..255) and DIR/meta.txt (SM ids, page lists, timings).
 *
 * Notes: a granule is measured at its first 8 bytes (its even 128-byte
 * line); earlier data showed lines 2k and 2k+1 share a slice. The SMs are
 * 16 of each near-partition group found by `cuda_probe cross` on the H200
 * (other GPUs: the first 32 SMs spread evenly). Page order is outer, SM
 * inner, so slow drift shows as a per-(page, SM) offset that analysis can
 * remove; arena A's page 0 is measured again at the end (drift check).
 * Exit codes: 0 ok, 1 failure, 2 bad usage, 3 no usable device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/clock.h"
#include "gpuxray/error.h"
#include "gpuxray/stats.h"
#include "gpuxray/target.h"

#define LINE_BYTES 128ULL
#define GRAN_BYTES 256ULL
#define PAGE_BYTES (2ULL << 20)
#define NGRAN (PAGE_BYTES / GRAN_BYTES)
#define NSM 32

/* near-partition groups of the H200 (data/nvidia-h200/cross.csv) */
static const uint32_t group_a[] = {0,  1,  8,  9,  10, 11, 12, 13, 16, 17, 24, 25, 26, 27,
                                   28, 29, 32, 33, 40, 41, 42, 43, 44, 45, 48, 49, 56, 57,
                                   58, 59, 60, 61, 70, 71, 72, 73, 74, 75, 84, 85, 86, 87,
                                   88, 89, 98, 99, 100, 101, 102, 103, 112, 113, 114, 115,
                                   116, 117, 120, 121, 124, 125, 126, 127, 128, 129, 130, 131};
static const uint32_t group_b[] = {2,  3,  4,  5,  6,  7,  14, 15, 18, 19, 20, 21, 22, 23,
                                   30, 31, 34, 35, 36, 37, 38, 39, 46, 47, 50, 51, 52, 53,
                                   54, 55, 62, 63, 64, 65, 66, 67, 68, 69, 76, 77, 78, 79,
                                   80, 81, 82, 83, 90, 91, 92, 93, 94, 95, 96, 97, 104, 105,
                                   106, 107, 108, 109, 110, 111, 118, 119, 122, 123};

static const uint64_t pages_a[] = {0,   1,   2,   3,   4,   5,   6,   7,    8,    9,    10,   11,
                                   12,  13,  14,  15,  16,  17,  18,  19,   20,   21,   22,   23,
                                   24,  25,  26,  27,  28,  29,  30,  31,   63,   64,   65,   127,
                                   128, 255, 256, 257, 511, 512, 1023, 1024, 2047, 0};
static const uint64_t pages_b[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static int fail(const char *what, int rc, const gx_msg *m)
{
    fprintf(stderr, "cuda_hashprobe: %s: %s\n", what, m->text);
    return rc == GX_ENODEV ? 3 : 1;
}

static void pick_sms(const gx_target_info *in, uint32_t *sms)
{
    size_t na = sizeof group_a / sizeof group_a[0], nb = sizeof group_b / sizeof group_b[0];
    int h200 = in->sm_count == 132;
    for (uint32_t i = 0; i < NSM / 2; i++) {
        if (h200) {
            sms[i] = group_a[i * na / (NSM / 2)];
            sms[NSM / 2 + i] = group_b[i * nb / (NSM / 2)];
        } else {
            sms[i] = (uint32_t)((uint64_t)i * in->sm_count / NSM);
            sms[NSM / 2 + i] = (uint32_t)((uint64_t)(i + NSM / 2) * in->sm_count / NSM);
        }
    }
}

/* Warm the SM clock: a few passes over 4096 lines from SM 0. */
static int warm_up(gx_target *t, gx_msg *m)
{
    enum { N = 4096 };
    static gx_seq_op ops[N];
    static double cyc[N];
    for (int r = 0; r < 20; r++) {
        for (uint64_t i = 0; i < N; i++)
            ops[i] = (gx_seq_op){.offset = i * LINE_BYTES, .kind = GX_OP_LOAD, .timed = 1};
        int rc = gx_target_seq(t, ops, N, 0, cyc, m);
        if (rc != GX_OK)
            return rc;
    }
    return GX_OK;
}

/* Fingerprint the pages of the current arena into out[page][granule][sm]. */
static int measure(gx_target *t, const uint64_t *pages, size_t np, const uint32_t *sms,
                   uint32_t reps, unsigned char *out, FILE *meta, const char *tag, gx_msg *m)
{
    size_t nops = NGRAN * (1 + reps);
    gx_seq_op *ops = malloc(nops * sizeof *ops);
    double *cyc = malloc(NGRAN * reps * sizeof *cyc);
    if (!ops || !cyc) {
        free(ops);
        free(cyc);
        return gx_fail(m, GX_ENOMEM, "no memory");
    }
    int rc = GX_OK;
    for (size_t p = 0; p < np && rc == GX_OK; p++) {
        size_t n = 0;
        for (uint64_t g = 0; g < NGRAN; g++) {
            uint64_t off = pages[p] * PAGE_BYTES + g * GRAN_BYTES;
            ops[n++] = (gx_seq_op){.offset = off, .kind = GX_OP_LOAD, .timed = 0};
            for (uint32_t r = 0; r < reps; r++)
                ops[n++] = (gx_seq_op){.offset = off, .kind = GX_OP_LOAD, .timed = 1};
        }
        double t0 = gx_monotonic_seconds();
        for (uint32_t s = 0; s < NSM && rc == GX_OK; s++) {
            rc = gx_target_seq(t, ops, n, sms[s], cyc, m);
            for (uint64_t g = 0; rc == GX_OK && g < NGRAN; g++) {
                double v = gx_median(cyc + g * reps, reps) - 200.0;
                v = v < 0 ? 0 : v > 255 ? 255 : v + 0.5;
                out[(p * NGRAN + g) * NSM + s] = (unsigned char)v;
            }
        }
        fprintf(meta, "timing %s page_index %zu page %llu seconds %.3f\n", tag, p,
                (unsigned long long)pages[p], gx_monotonic_seconds() - t0);
    }
    free(ops);
    free(cyc);
    return rc;
}

static int write_file(const char *dir, const char *name, const unsigned char *v, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(v, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *spec = "cuda", *dir = NULL;
    uint64_t a_mib = 4096, b_mib = 64;
    uint32_t reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--target") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "--a-mib") && i + 1 < argc)
            a_mib = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--b-mib") && i + 1 < argc)
            b_mib = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: cuda_hashprobe [--target T] [--a-mib N] [--b-mib N] "
                            "[--reps R] -o DIR\n");
            return 2;
        }
    }
    size_t npa = sizeof pages_a / sizeof pages_a[0], npb = sizeof pages_b / sizeof pages_b[0];
    if (!dir || reps < 1 || reps > 15 || a_mib * (1ULL << 20) <= 2047 * PAGE_BYTES ||
        b_mib * (1ULL << 20) <= 15 * PAGE_BYTES) {
        fprintf(stderr, "cuda_hashprobe: need -o DIR, reps 1..15, --a-mib > 4094, --b-mib > 30\n");
        return 2;
    }
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open(spec, 1, &t, &m);
    if (rc != GX_OK)
        return fail("open", rc, &m);
    const gx_target_info *in = gx_target_get_info(t);
    uint32_t sms[NSM];
    pick_sms(in, sms);
    char mp[1024];
    snprintf(mp, sizeof mp, "%s/meta.txt", dir);
    FILE *meta = fopen(mp, "w");
    unsigned char *a = malloc(npa * NGRAN * NSM), *b = malloc(npb * NGRAN * NSM);
    if (!meta || !a || !b) {
        fprintf(stderr, "cuda_hashprobe: cannot write %s or no memory\n", mp);
        return 1;
    }
    fprintf(meta, "device %s sm_count %u clock_mhz %u\nreps %u granule_bytes %llu layout "
                  "[page][granule][sm] value=median_cycles-200\nsms",
            in->name, in->sm_count, in->sm_clock_mhz, reps, GRAN_BYTES);
    for (uint32_t s = 0; s < NSM; s++)
        fprintf(meta, " %u", sms[s]);
    fprintf(meta, "\npages_a");
    for (size_t p = 0; p < npa; p++)
        fprintf(meta, " %llu", (unsigned long long)pages_a[p]);
    fprintf(meta, "\npages_b");
    for (size_t p = 0; p < npb; p++)
        fprintf(meta, " %llu", (unsigned long long)pages_b[p]);
    fprintf(meta, "\narena_a_mib %llu arena_b_mib %llu\n", (unsigned long long)a_mib,
            (unsigned long long)b_mib);
    double t0 = gx_monotonic_seconds();
    if ((rc = gx_target_arena(t, a_mib << 20, &m)) != GX_OK)
        return fail("arena A", rc, &m);
    if ((rc = warm_up(t, &m)) != GX_OK)
        return fail("warm-up", rc, &m);
    if ((rc = measure(t, pages_a, npa, sms, reps, a, meta, "a", &m)) != GX_OK)
        return fail("arena A", rc, &m);
    if ((rc = gx_target_arena(t, b_mib << 20, &m)) != GX_OK)
        return fail("arena B", rc, &m);
    if ((rc = measure(t, pages_b, npb, sms, reps, b, meta, "b", &m)) != GX_OK)
        return fail("arena B", rc, &m);
    fprintf(meta, "total_seconds %.2f\n", gx_monotonic_seconds() - t0);
    fclose(meta);
    if (write_file(dir, "a.u8", a, npa * NGRAN * NSM) || write_file(dir, "b.u8", b, npb * NGRAN * NSM)) {
        fprintf(stderr, "cuda_hashprobe: cannot write the data files\n");
        return 1;
    }
    fprintf(stderr, "cuda_hashprobe: done in %.1f s\n", gx_monotonic_seconds() - t0);
    free(a);
    free(b);
    gx_target_close(t);
    return 0;
}
