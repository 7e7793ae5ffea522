/* test_report.c - the report module: base64 and PNG encodings against
 * published values, the raw data recorded by discovery (recording changes
 * nothing the stages find; every series the report draws is there and
 * round-trips through files), and the report files (self-contained page
 * under its budget, Markdown table, JSON document with the model curve). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuxray/discover.h"
#include "gpuxray/profile.h"
#include "gpuxray/report.h"
#include "gpuxray/target.h"
#include "report/rbuf.h"
#include "testutil.h"

static void test_base64(void **state)
{
    (void)state;
    /* RFC 4648 section 10 test vectors */
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        gx_rbuf b;
        rb_init(&b);
        rb_base64(&b, (const uint8_t *)in[i], strlen(in[i]));
        rb_puts(&b, "");
        assert_string_equal(b.s ? b.s : "", out[i]);
        rb_free(&b);
    }
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_png(void **state)
{
    (void)state;
    uint8_t rgb[2 * 3 * 3];
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(i * 37);
    gx_rbuf b;
    rb_init(&b);
    assert_int_equal(png_encode(rgb, 2, 3, &b), 0);
    const uint8_t *p = (const uint8_t *)b.s;
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    assert_memory_equal(p, sig, 8);
    assert_int_equal(be32(p + 8), 13);
    assert_memory_equal(p + 12, "IHDR", 4);
    assert_int_equal(be32(p + 16), 2);
    assert_int_equal(be32(p + 20), 3);
    /* the IEND chunk is constant: length 0, "IEND", CRC 0xAE426082 (PNG spec) */
    assert_memory_equal(p + b.len - 12, "\0\0\0\0IEND\xae\x42\x60\x82", 12);
    /* IDAT: zlib header 78 01, one stored final block of 3 rows x 7 bytes */
    const uint8_t *idat = p + 8 + 25;
    assert_memory_equal(idat + 4, "IDAT", 4);
    assert_int_equal(idat[8], 0x78);
    assert_int_equal(idat[10], 1);
    assert_int_equal(idat[11] | idat[12] << 8, 21);
    assert_int_equal((idat[11] ^ idat[13]) & 0xff, 0xff);
    assert_int_equal(png_encode(rgb, 0, 3, &b), -1);
    rb_free(&b);
}

static char *profile_text(gx_profile *p)
{
    p->provenance.created[0] = 0; /* differs between runs by design */
    p->provenance.seconds = 0;
    return gx_profile_to_json(p);
}

static void test_recording_changes_nothing(void **state)
{
    (void)state;
    gx_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    gx_profile *pa = gx_test_discover(gx_test_path("profiles/seed-ampere-6mb.json"), NULL, 3, a);
    gx_target *t = gx_test_open_sim(gx_test_path("profiles/seed-ampere-6mb.json"), 3);
    gx_discover_opts o = {.only = NULL, .seed = 3, .record = 1};
    gx_profile *pb = NULL;
    gx_msg msg;
    assert_int_equal(gx_discover(t, &o, &pb, b, &msg), GX_OK);
    gx_target_close(t);
    assert_null(a->data);
    assert_non_null(b->data);
    char *ja = profile_text(pa), *jb = profile_text(pb);
    assert_string_equal(ja, jb);
    /* the series the page draws */
    json_t *d = b->data;
    assert_true(json_array_size(json_object_get(json_object_get(d, "curve"), "points")) >= 5);
    assert_true(json_array_size(json_object_get(json_object_get(d, "curve"), "plateaus")) >= 2);
    assert_int_equal(json_array_size(json_object_get(json_object_get(d, "sm_slice"), "cycles")),
                     pb->l2.slices);
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(d, "slice_classes"), "classes")),
        pb->memory.page_bytes / pb->l2.line_bytes);
    json_t *trials = json_object_get(json_object_get(d, "ways"), "trials");
    assert_true(json_array_size(trials) >= 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(trials, 0), "ways")),
                     pb->l2.ways);
    assert_true(json_array_size(json_object_get(json_object_get(d, "policy"), "candidates")) >= 5);
    /* round trip through files */
    const char *dir = gx_test_tmp("report_data");
    mkdir(dir, 0777);
    assert_int_equal(gx_report_data_save(b, dir, &msg), GX_OK);
    void *back = NULL;
    assert_int_equal(gx_report_data_load(dir, &back, &msg), GX_OK);
    const char *keys[] = {"curve", "sm_slice", "slice_classes", "ways", "policy", "stages", "rows"};
    for (int i = 0; i < 7; i++)
        assert_non_null(json_object_get(back, keys[i]));
    assert_true(json_equal(json_object_get(json_object_get(back, "curve"), "points"),
                           json_object_get(json_object_get(d, "curve"), "points")));
    /* the report from those files */
    const char *prof = gx_test_tmp("report_profile.json");
    assert_int_equal(gx_profile_save(pb, prof, &msg), GX_OK);
    char html[600];
    snprintf(html, sizeof html, "%s/report.html", dir);
    gx_report_opts ro = {.profile_path = prof, .data = back, .model = 1, .seed = 1};
    assert_int_equal(gx_report_write(pb, &ro, html, &msg), GX_OK);
    size_t n = 0;
    char *page = gx_test_slurp(html, &n);
    assert_non_null(page);
    assert_true(n < 1000000);
    assert_null(strstr(page, "<script"));
    assert_non_null(strstr(page, "Content-Security-Policy"));
    assert_true(strstr(page, "<svg") && strstr(page, "data:image/png;base64,"));
    /* no reference to anything outside the page but the SVG namespace */
    for (const char *s = strstr(page, "http"); s; s = strstr(s + 1, "http"))
        assert_true(!strncmp(s, "http://www.w3.org/2000/svg", 26) ||
                    !strncmp(s, "http-equiv", 10));
    char path[640];
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = gx_test_slurp(path, &n);
    assert_non_null(md);
    assert_non_null(strstr(md, "| l2.ways | 16 |"));
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_t *doc = json_load_file(path, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "gpuxray-report");
    json_t *model = json_object_get(doc, "model");
    assert_true(json_is_true(json_object_get(model, "ran")));
    assert_int_equal(json_array_size(json_object_get(model, "curve")),
                     json_array_size(json_object_get(json_object_get(d, "curve"), "points")));
    json_decref(doc);
    free(page);
    free(md);
    gx_report_data_release(back);
    free(ja);
    free(jb);
    gx_report_free_data(b);
    gx_profile_free(pa);
    gx_profile_free(pb);
    free(a);
    free(b);
}

static void test_report_without_data(void **state)
{
    (void)state;
    gx_msg msg;
    gx_profile *p = NULL;
    const char *path = gx_test_path("profiles/seed-ampere-6mb.json");
    assert_int_equal(gx_profile_load(path, &p, &msg), GX_OK);
    const char *html = gx_test_tmp("report_nodata.html");
    gx_report_opts o = {.profile_path = path, .data = NULL, .model = !gx_test_sanitizer(), .seed = 1};
    assert_int_equal(gx_report_write(p, &o, html, &msg), GX_OK);
    size_t n = 0;
    char *page = gx_test_slurp(html, &n);
    assert_non_null(page);
    /* sections without data say what records them; the page picture comes
     * from the profile's own hash */
    assert_non_null(strstr(page, "gpuxray discover --report DIR"));
    assert_non_null(strstr(page, "the profile&#39;s slice hash"));
    free(page);
    void *data = NULL;
    assert_int_equal(gx_report_data_load(gx_test_path("profiles"), &data, &msg), GX_EINVAL);
    assert_null(data);
    gx_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_recording_changes_nothing),
        cmocka_unit_test(test_report_without_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
