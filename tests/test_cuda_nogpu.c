/* test_cuda_nogpu.c - the cuda target where no GPU (or no driver) is usable:
 * opening fails with GX_ENODEV and "no usable CUDA device: <reason>", for a
 * missing driver library, a library without the driver's entry points, and
 * whatever this machine has. On a GPU machine the default open may succeed;
 * then the info it reports is checked instead. */
#include <stdlib.h>
#include <string.h>

#include "gpuxray/error.h"
#include "gpuxray/target.h"
#include "target/cuda/cuda_driver.h"
#include "testutil.h"

#define PREFIX "no usable CUDA device: "

static void open_with_lib(const char *lib, int *rc, gx_msg *m)
{
    gx_target *t = NULL;
    setenv("GX_CUDA_LIB", lib, 1);
    *rc = gx_target_open("cuda:0", 1, &t, m);
    unsetenv("GX_CUDA_LIB");
    assert_null(t);
}

static void test_missing_driver_library(void **state)
{
    (void)state;
    gx_msg m = {{0}};
    int rc = 0;
    open_with_lib("/nonexistent/libcuda.so.1", &rc, &m);
    assert_int_equal(rc, GX_ENODEV);
    assert_memory_equal(m.text, PREFIX, strlen(PREFIX));
    /* names the library it tried, unless the build has no kernels at all */
    assert_true(strstr(m.text, "/nonexistent/libcuda.so.1") ||
                strstr(m.text, "built without CUDA kernels (nvcc not found)"));
}

static void test_library_without_driver_symbols(void **state)
{
    (void)state;
    gx_msg m = {{0}};
    int rc = 0;
    open_with_lib("libm.so.6", &rc, &m);
    assert_int_equal(rc, GX_ENODEV);
    assert_memory_equal(m.text, PREFIX, strlen(PREFIX));
    assert_true(strstr(m.text, "lacks cuInit") ||
                strstr(m.text, "built without CUDA kernels (nvcc not found)"));
}

static void test_default_open(void **state)
{
    (void)state;
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open("cuda", 1, &t, &m);
    if (rc == GX_OK) { /* a GPU machine */
        const gx_target_info *in = gx_target_get_info(t);
        assert_string_equal(in->kind, "cuda");
        assert_true(in->sm_count > 0);
        assert_true(in->page_bytes >= 4096 && (in->page_bytes & (in->page_bytes - 1)) == 0);
        assert_true(in->max_arena_bytes >= in->page_bytes);
        gx_target_close(t);
        return;
    }
    assert_int_equal(rc, GX_ENODEV);
    assert_null(t);
    assert_memory_equal(m.text, PREFIX, strlen(PREFIX));
    assert_true(strlen(m.text) > strlen(PREFIX) + 5);
}

static void test_bad_device_index(void **state)
{
    (void)state;
    gx_msg m = {{0}};
    gx_target *t = NULL;
    int rc = gx_target_open("cuda:999", 1, &t, &m);
    assert_int_equal(rc, GX_ENODEV);
    assert_null(t);
    assert_memory_equal(m.text, PREFIX, strlen(PREFIX));
}

static void test_strerror_without_driver(void **state)
{
    (void)state;
    gx_cu_api api;
    memset(&api, 0, sizeof api);
    char buf[64];
    assert_string_equal(gx_cu_strerror(&api, 700, buf, sizeof buf), "CUDA error 700");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_driver_library),
        cmocka_unit_test(test_library_without_driver_symbols),
        cmocka_unit_test(test_default_open),
        cmocka_unit_test(test_bad_device_index),
        cmocka_unit_test(test_strerror_without_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
