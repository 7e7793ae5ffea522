/* testutil.c - see testutil.h. */
#include "testutil.h"

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
