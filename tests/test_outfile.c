/* test_outfile.c - the output-file rules (include/gpuxray/outfile.h): atomic
 * replacement that keeps permissions, symlinks written through, dangling
 * links and directories refused, FIFOs and devices written straight (never
 * replaced), nothing left behind on failure, errors with their reason.
 * Everything happens in a fresh temporary directory; no real /dev node is
 * touched (the full-device case uses a private node made with mknod, root
 * only). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpuxray/outfile.h"
#include "testutil.h"

static char dir[4096];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", gx_test_tmp("outfile-XXXXXX"));
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[8192];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) != 0)
                rmdir(p);
        }
    if (d)
        closedir(d);
    return rmdir(dir);
}

static const char *in_dir(const char *name)
{
    static char b[4][8192];
    static int k;
    char *p = b[k++ & 3];
    snprintf(p, 8192, "%s/%s", dir, name);
    return p;
}

/* Entries in the directory (a temporary file left behind shows up here). */
static int entries(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void assert_content(const char *path, const char *text)
{
    size_t n = 0;
    char *s = gx_test_slurp(path, &n);
    assert_non_null(s);
    assert_string_equal(s, text);
    free(s);
}

static void test_new_and_replace_keep_mode(void **state)
{
    (void)state;
    gx_msg m;
    const char *p = in_dir("a.json");
    assert_int_equal(gx_out_check(p, &m), GX_OK);
    assert_int_equal(entries(), 0); /* the check creates nothing */
    assert_int_equal(gx_out_write_file(p, "one\n", 4, &m), GX_OK);
    assert_content(p, "one\n");
    assert_int_equal(chmod(p, 0640), 0);
    struct stat a, b;
    assert_int_equal(stat(p, &a), 0);
    assert_int_equal(gx_out_write_file(p, "two\n", 4, &m), GX_OK);
    assert_content(p, "two\n");
    assert_int_equal(stat(p, &b), 0);
    assert_int_equal(b.st_mode & 07777, 0640);
    assert_true(a.st_ino != b.st_ino); /* replaced by rename, not rewritten in place */
    assert_int_equal(entries(), 1);
}

static void test_abort_leaves_nothing(void **state)
{
    (void)state;
    gx_msg m;
    const char *p = in_dir("b.json");
    put(p, "old\n");
    gx_out o;
    assert_int_equal(gx_out_open(&o, p, &m), GX_OK);
    fputs("half", o.f);
    assert_int_equal(entries(), 2); /* the temporary file exists meanwhile */
    gx_out_abort(&o);
    assert_content(p, "old\n");
    assert_int_equal(entries(), 1);
}

static void test_symlinks(void **state)
{
    (void)state;
    gx_msg m;
    const char *t = in_dir("target.json"), *l = in_dir("link.json");
    put(t, "old\n");
    assert_int_equal(symlink("target.json", l), 0);
    assert_int_equal(gx_out_write_file(l, "new\n", 4, &m), GX_OK);
    struct stat st;
    assert_int_equal(lstat(l, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* the link stays a link */
    assert_content(t, "new\n");
    /* dangling: refused, nothing created */
    const char *d = in_dir("dangling.json");
    assert_int_equal(symlink("nowhere.json", d), 0);
    assert_int_equal(gx_out_check(d, &m), GX_EIO);
    assert_non_null(strstr(m.text, "dangling"));
    assert_int_equal(gx_out_write_file(d, "x", 1, &m), GX_EIO);
    assert_int_equal(access(in_dir("nowhere.json"), F_OK), -1);
    assert_int_equal(entries(), 3);
}

static void test_refusals(void **state)
{
    (void)state;
    gx_msg m;
    assert_int_equal(gx_out_check(dir, &m), GX_EIO);
    assert_non_null(strstr(m.text, strerror(EISDIR)));
    assert_int_equal(gx_out_write_file(dir, "x", 1, &m), GX_EIO);
    const char *p = in_dir("no/such/x.json");
    assert_int_equal(gx_out_check(p, &m), GX_EIO);
    assert_non_null(strstr(m.text, "x.json"));
    assert_non_null(strstr(m.text, strerror(ENOENT)));
    assert_int_equal(gx_out_check("", &m), GX_EINVAL);
    assert_int_equal(gx_out_check("-", &m), GX_OK);
    assert_int_equal(entries(), 0);
}

static void test_fifo_written_straight(void **state)
{
    (void)state;
    gx_msg m;
    const char *p = in_dir("fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    int rd = open(p, O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open succeeds */
    assert_true(rd >= 0);
    assert_int_equal(gx_out_check(p, &m), GX_OK);
    assert_int_equal(gx_out_write_file(p, "through\n", 8, &m), GX_OK);
    char buf[16] = {0};
    assert_int_equal(read(rd, buf, sizeof buf - 1), 8);
    assert_string_equal(buf, "through\n");
    close(rd);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode)); /* still a FIFO: never replaced */
    assert_int_equal(entries(), 1);
}

static void test_full_device_says_why(void **state)
{
    (void)state;
    const char *p = in_dir("full");
    if (geteuid() != 0 || mknod(p, S_IFCHR | 0600, makedev(1, 7)) != 0)
        skip(); /* a private copy of the "full" device needs root */
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_out_write_file(p, "x\n", 2, &m), GX_EIO);
    assert_non_null(strstr(m.text, strerror(ENOSPC)));
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(entries(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_and_replace_keep_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_written_straight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_device_says_why, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
