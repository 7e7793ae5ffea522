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

/* Open "sim:PATH" with a seed; fails the test with the target's message. */
struct gx_target;
struct gx_target *gx_test_open_sim(const char *profile_path, uint64_t seed);
/* Discover PATH through the sim target (stages `only`, NULL = all); fails the
 * test when discovery returns an error. Caller frees the profile. */
struct gx_profile;
struct gx_report;
struct gx_profile *gx_test_discover(const char *profile_path, const char *only, uint64_t seed,
                                    struct gx_report *rep);

#endif
