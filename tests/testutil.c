/* testutil.c - see testutil.h. */
#include "testutil.h"

#include "gpuxray/discover.h"
#include "gpuxray/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GX_SOURCE_DIR
#define GX_SOURCE_DIR "."
#endif
#ifndef GX_BINARY_DIR
#define GX_BINARY_DIR "."
#endif

const char *gx_test_path(const char *rel)
{
    static char buf[8][4096];
    static int k;
    char *b = buf[k++ & 7];
    snprintf(b, 4096, "%s/%s", GX_SOURCE_DIR, rel);
    return b;
}

const char *gx_test_tmp(const char *name)
{
    static char buf[8][4096];
    static int k;
    char *b = buf[k++ & 7];
    snprintf(b, 4096, "%s/tmp-%ld-%s", GX_BINARY_DIR, (long)getpid(), name);
    return b;
}

int gx_test_sanitizer(void)
{
    const char *s = getenv("GX_TEST_SCALE");
    return s && strcmp(s, "sanitizer") == 0;
}

char *gx_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (n + 4096 > cap) {
            cap *= 2;
            char *nb = realloc(b, cap);
            if (!nb) {
                free(b);
                fclose(f);
                return NULL;
            }
            b = nb;
        }
        size_t r = fread(b + n, 1, 4096, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    b[n] = '\0';
    if (len)
        *len = n;
    return b;
}

gx_target *gx_test_open_sim(const char *profile_path, uint64_t seed)
{
    gx_msg msg;
    gx_target *t = NULL;
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", profile_path);
    if (gx_target_open(spec, seed, &t, &msg) != GX_OK)
        fail_msg("cannot open %s: %s", spec, msg.text);
    return t;
}

gx_profile *gx_test_discover(const char *profile_path, const char *only, uint64_t seed,
                             gx_report *rep)
{
    gx_msg msg;
    gx_target *t = gx_test_open_sim(profile_path, seed);
    gx_discover_opts opts = {.only = only, .seed = seed, .progress = NULL};
    gx_profile *found = NULL;
    int rc = gx_discover(t, &opts, &found, rep, &msg);
    gx_target_close(t);
    if (rc != GX_OK)
        fail_msg("discover %s: %s", profile_path, msg.text);
    return found;
}
