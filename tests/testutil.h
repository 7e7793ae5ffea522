/* testutil.h - shared test helpers: cmocka's required includes, paths to
 * files in the source tree, and the test scale (sanitizer runs do less). */
#ifndef GPUXRAY_TESTUTIL_H
#define GPUXRAY_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Absolute path of a file relative to the source tree (static buffer, one of 8 rotating). */
const char *gx_test_path(const char *rel);
/* A fresh temporary file path under the build tree (static buffer, rotating). */
const char *gx_test_tmp(const char *name);
/* 1 when running under sanitizers (GX_TEST_SCALE=sanitizer): do less work. */
int gx_test_sanitizer(void);
/* Read a whole file (malloc'd, NUL-terminated) or NULL. */
char *gx_test_slurp(const char *path, size_t *len);

#endif
