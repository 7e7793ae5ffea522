/* smem_holdout.c - the shared-memory part of the holdout proof: hidden
 * shared memories of N generated profiles (gen-profile's draw), each
 * discovered through its sim target by the `smem` stage alone; prints the
 * exact-recovery rate of every smem field and exits 1 when one is below
 * the bar (default 0.98).
 *
 * usage: smem_holdout [--count N] [--seed S] [--bar B] [--dir TMPDIR]
 *
 * Notes: profile i is gx_generate_profile(seed + i), saved under TMPDIR
 * (default /tmp) and removed afterwards; discovery runs with the same
 * seed. A failed discovery counts as a miss of every field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/discover.h"
#include "gpuxray/generate.h"
#include "gpuxray/smem.h"
#include "gpuxray/target.h"

typedef struct tally {
    unsigned total[GX_SMEM_FIELDS], exact[GX_SMEM_FIELDS];
    const char *names[GX_SMEM_FIELDS];
} tally;

/* Discover one hidden profile; misses printed. Returns 0 or -1 (setup failed). */
static int one(uint64_t seed, const char *dir, tally *t)
{
    char path[4096], spec[4200];
    snprintf(path, sizeof path, "%s/smem-holdout-%ld-%llu.json", dir, (long)getpid(),
             (unsigned long long)seed);
    gx_msg m;
    gx_profile *truth = NULL, *found = NULL;
    if (gx_generate(seed, NULL, &truth, &m) != GX_OK || gx_profile_save(truth, path, &m) != GX_OK) {
        fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, m.text);
        gx_profile_free(truth);
        return -1;
    }
    snprintf(spec, sizeof spec, "sim:%s", path);
    gx_target *tg = NULL;
    int rc = gx_target_open(spec, seed, &tg, &m);
    remove(path);
    if (rc != GX_OK) {
        fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, m.text);
        gx_profile_free(truth);
        return -1;
    }
    gx_discover_opts o = {.only = "smem", .seed = seed, .progress = NULL};
    rc = gx_discover(tg, &o, &found, NULL, &m);
    gx_target_close(tg);
    gx_smem_cfg tc, fc;
    gx_smem_cfg_from_profile(truth, &tc, NULL);
    if (!found || gx_smem_cfg_from_profile(found, &fc, NULL) != GX_OK)
        gx_smem_cfg_clear(&fc);
    gx_smem_field_cmp cmp[GX_SMEM_FIELDS];
    gx_smem_cfg_compare(&tc, &fc, cmp);
    for (int i = 0; i < GX_SMEM_FIELDS; i++) {
        t->names[i] = cmp[i].field;
        if (cmp[i].verdict < 0)
            continue;
        t->total[i]++;
        t->exact[i] += cmp[i].verdict == 0;
        if (cmp[i].verdict != 0)
            printf("miss: seed %llu %s truth %s found %s%s%s\n", (unsigned long long)seed,
                   cmp[i].field, cmp[i].truth, cmp[i].found, rc != GX_OK ? " - " : "",
                   rc != GX_OK ? m.text : "");
    }
    gx_profile_free(truth);
    gx_profile_free(found);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long count = 200, seed = 1;
    double bar = 0.98;
    const char *dir = "/tmp";
    int bad = argc % 2 == 0;
    for (int i = 1; i + 1 < argc && !bad; i += 2) {
        const char *v = argv[i + 1];
        char *end = NULL;
        if (strcmp(argv[i], "--count") == 0)
            count = strtoull(v, &end, 0);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(v, &end, 0);
        else if (strcmp(argv[i], "--bar") == 0)
            bar = strtod(v, &end);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = v;
        else
            bad = 1;
        /* whole numbers only; no negative wrapped to 2^64; a bar in 0..1 */
        bad |= (end && (*end || end == v)) || *v == '-' || !(bar >= 0 && bar <= 1);
    }
    if (bad || count == 0) {
        fprintf(stderr, "usage: smem_holdout [--count N] [--seed S] [--bar B] [--dir D]\n");
        return 2;
    }
    tally t;
    memset(&t, 0, sizeof t);
    for (unsigned long long i = 0; i < count; i++)
        if (one(seed + i, dir, &t) != 0)
            return 2;
    printf("smem holdout: %llu hidden profiles (seeds %llu..%llu), bar %.3g\n", count, seed,
           seed + count - 1, bar);
    int pass = 1;
    for (int i = 0; i < GX_SMEM_FIELDS; i++) {
        double rate = t.total[i] ? (double)t.exact[i] / t.total[i] : 1.0;
        pass &= rate >= bar;
        printf("%-22s %5u %5u %7.3f%s\n", t.names[i], t.total[i], t.exact[i], rate,
               rate < bar ? "  < bar" : "");
    }
    printf("result: %s\n", pass ? "every field meets the bar" : "below the bar");
    return pass ? 0 : 1;
}
