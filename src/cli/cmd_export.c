/* cmd_export.c - `gpuxray export accel-sim|gem5 P.json [-o FILE]
 * [--core-mhz F] [--l1-latency C]`: the profile as configuration lines of
 * another simulator (src/report/export_*.c), on stdout or in FILE.
 *
 * Notes: exit 0 ok, 2 bad usage or an unreadable profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/export.h"
#include "gpuxray/outfile.h"
#include "gpuxray/profile.h"
#include "gpuxray/outfile.h"
#include "gpuxray/report.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuxray export accel-sim|gem5 PROFILE.json [-o FILE]\n"
               "                      [--core-mhz MHZ] [--l1-latency CYCLES]   (accel-sim)\n"
               "  accel-sim: gpgpusim.config lines (-gpgpu_cache:dl2, -gpgpu_n_mem, ...)\n"
               "  gem5:      apu_se.py / GPUTLBOptions.py options and walker parameters\n");
}

static int parse_nonneg(const char *opt, const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (!*s || *end || !(v >= 0) || v > 1e9) {
        gx_cli_error("export: bad %s '%s' (need a number >= 0)", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int gx_cmd_export(int argc, char **argv)
{
    const char *kind_s = NULL, *prof = NULL, *out = "-";
    gx_export_opts o = {0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has) {
            out = argv[++i];
        } else if (!strcmp(a, "--core-mhz") && has) {
            if (parse_nonneg(a, argv[++i], &o.core_mhz) != 0)
                return GX_EXIT_USAGE;
        } else if (!strcmp(a, "--l1-latency") && has) {
            if (parse_nonneg(a, argv[++i], &o.l1_latency_cycles) != 0)
                return GX_EXIT_USAGE;
        } else if (a[0] == '-' || (kind_s && prof)) {
            gx_cli_error("export: unknown or incomplete option '%s'", a);
            usage(stderr);
            return GX_EXIT_USAGE;
        } else if (!kind_s) {
            kind_s = a;
        } else {
            prof = a;
        }
    }
    gx_export_kind kind;
    if (!kind_s || !prof || gx_export_kind_parse(kind_s, &kind) != 0) {
        if (kind_s && prof)
            gx_cli_error("export: unknown simulator '%s' (accel-sim or gem5)", kind_s);
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    gx_msg msg;
    gx_profile *p = NULL;
    int ec = gx_cli_load_profile(prof, &p);
    if (ec != GX_EXIT_OK)
        return ec;
    char *text = NULL;
    int rc = gx_export(p, kind, &o, &text, &msg);
    gx_profile_free(p);
    if (rc == GX_OK)
        rc = gx_out_write_file(out, text, strlen(text), &msg);
    free(text);
    if (rc != GX_OK) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    return GX_EXIT_OK;
}
