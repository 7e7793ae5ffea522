/* cli_util.c - what every command shares: the exit-code mapping, error
 * printing, option values and strict numbers (include/gpuxray/parse.h).
 *
 * Notes:
 * - Option values: "--opt VALUE" or "--opt=VALUE". The next word is NOT
 *   taken as a value when it looks like an option ("-" followed by a letter
 *   or a second "-", e.g. --quiet or -o): `--trace --quiet` says that
 *   --trace needs a value instead of reading a file named "--quiet". A value
 *   that starts so is given as --opt=VALUE (or ./--name for a file). "-"
 *   alone (standard input/output) and "-5" (a number, rejected by the
 *   number parser with its own message) are values.
 * - Exit codes (Contract 3; docs/cli.md): 0 ok; 1 the work ran and a check
 *   failed (mismatch, incomplete discovery, below the bar) or failed midway
 *   (out of memory, device error); 2 bad usage or bad input, including an
 *   input that cannot be read and an output that cannot be written (the
 *   command did not produce its result because of what it was given); 3 the
 *   target is unavailable. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/parse.h"
#include "gpuxray/profile.h"

int gx_cli_parse_only;

int gx_exit_code(int err)
{
    switch (err) {
    case GX_OK:
        return GX_EXIT_OK;
    case GX_ENODEV:
        return GX_EXIT_UNAVAILABLE;
    case GX_EINVAL:
    case GX_EPARSE:
    case GX_ECONFIG:
    case GX_ERANGE:
    case GX_EIO:
        return GX_EXIT_USAGE;
    default:
        return GX_EXIT_FAIL;
    }
}

void gx_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuxray: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int looks_like_option(const char *s)
{
    return s[0] == '-' && (s[1] == '-' || (s[1] >= 'a' && s[1] <= 'z') ||
                           (s[1] >= 'A' && s[1] <= 'Z'));
}

int gx_cli_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n])
        return 0;
    if (*i + 1 >= argc || looks_like_option(argv[*i + 1])) {
        gx_cli_error("%s needs a value%s", name,
                     *i + 1 < argc ? " (a value starting with '-' is given as OPTION=VALUE)"
                                   : "");
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int gx_cli_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi, unsigned flags,
               uint64_t *out)
{
    gx_msg m;
    if (gx_parse_u64(opt, v, lo, hi, flags, out, &m) == GX_OK)
        return GX_EXIT_OK;
    gx_cli_error("%s", m.text);
    return GX_EXIT_USAGE;
}

int gx_cli_u32(const char *opt, const char *v, uint32_t lo, uint32_t hi, unsigned flags,
               uint32_t *out)
{
    gx_msg m;
    if (gx_parse_u32(opt, v, lo, hi, flags, out, &m) == GX_OK)
        return GX_EXIT_OK;
    gx_cli_error("%s", m.text);
    return GX_EXIT_USAGE;
}

int gx_cli_double(const char *opt, const char *v, double lo, double hi, double *out)
{
    gx_msg m;
    if (gx_parse_double(opt, v, lo, hi, out, &m) == GX_OK)
        return GX_EXIT_OK;
    gx_cli_error("%s", m.text);
    return GX_EXIT_USAGE;
}

int gx_parse_size(const char *s, unsigned long long *out)
{
    uint64_t v;
    if (gx_parse_u64(NULL, s, 0, UINT64_MAX, GX_NUM_SIZE, &v, NULL) != GX_OK)
        return -1;
    *out = v;
    return 0;
}

int gx_parse_count(const char *s, unsigned long long *out)
{
    uint64_t v;
    if (gx_parse_u64(NULL, s, 0, UINT64_MAX, GX_NUM_COUNT, &v, NULL) != GX_OK)
        return -1;
    *out = v;
    return 0;
}

int gx_cli_check_output(const char *cmd, const char *path)
{
    gx_msg m;
    if (gx_out_check(path, &m) == GX_OK)
        return GX_EXIT_OK;
    gx_cli_error("%s: %s", cmd, m.text);
    return GX_EXIT_USAGE;
}

int gx_cli_emit(const char *cmd, const char *path, const char *buf, size_t len, int is_json)
{
    if (is_json) {
        json_error_t err;
        json_t *doc = json_loadb(buf, len, 0, &err);
        if (!doc) {
            gx_cli_error("%s: the output is not valid JSON at line %d, column %d (%s): a "
                         "non-finite number (inf or NaN) from the input's values? nothing "
                         "written",
                         cmd, err.line, err.column, err.text);
            return GX_EXIT_USAGE;
        }
        json_decref(doc);
    }
    gx_msg m;
    int rc = gx_out_write_file(path, buf, len, &m);
    if (rc == GX_OK)
        return GX_EXIT_OK;
    gx_cli_error("%s: %s", cmd, m.text);
    return gx_exit_code(rc);
}

int gx_cli_load_profile(const char *path, gx_profile **out)
{
    gx_msg m;
    *out = NULL;
    int rc = gx_profile_load(path, out, &m);
    if (rc == GX_OK)
        return GX_EXIT_OK;
    gx_cli_error("%s", m.text);
    return gx_exit_code(rc);
}
