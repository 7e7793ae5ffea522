/* cmd_report.c - `gpuxray report P.json [--data DIR] [-o report.html]`:
 * the report of a profile as one self-contained HTML page plus report.md
 * and report.json beside it (src/report). With --data, the raw
 * measurements `gpuxray discover --data DIR` wrote; without, the profile's
 * own numbers and its model.
 *
 * Notes: exit 0 ok, 2 bad usage / unreadable input. The model curve runs
 * the profile as a simulated target; a profile it cannot run still gets a
 * report (the page says why the model line is missing). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/profile.h"
#include "gpuxray/report.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuxray report PROFILE.json [--data DIR] [-o report.html] [--no-model]\n"
               "  writes report.html (self-contained: inline SVG, no script, no network),\n"
               "  report.md and report.json (the same name with .md / .json)\n");
}

int gx_cmd_report(int argc, char **argv)
{
    const char *prof = NULL, *data_dir = NULL, *out = "report.html";
    int model = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        } else if (!strcmp(a, "--data") && has) {
            data_dir = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has) {
            out = argv[++i];
        } else if (!strcmp(a, "--no-model")) {
            model = 0;
        } else if (a[0] == '-' || prof) {
            gx_cli_error("report: unknown or incomplete option '%s'", a);
            usage(stderr);
            return GX_EXIT_USAGE;
        } else {
            prof = a;
        }
    }
    if (!prof) {
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
    int rc;
    void *data = NULL;
    if (data_dir && (rc = gx_report_data_load(data_dir, &data, &msg)) != GX_OK) {
        gx_cli_error("%s", msg.text);
        gx_profile_free(p);
        return gx_exit_code(rc);
    }
    gx_report_opts o = {.profile_path = prof, .data = data, .model = model, .seed = 1};
    rc = gx_report_write(p, &o, out, &msg);
    gx_report_data_release(data);
    gx_profile_free(p);
    if (rc != GX_OK) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    if (strcmp(out, "-") != 0)
        fprintf(stderr, "gpuxray: report written to %s (and its .md, .json)\n", out);
    return GX_EXIT_OK;
}
