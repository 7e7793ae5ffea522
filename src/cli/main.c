/* main.c - the gpuxray command: dispatch to subcommands (commands.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/error.h"

#ifndef GX_VERSION
#define GX_VERSION "0.0.0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "gpuxray %s - how a GPU's memory hierarchy is really built, from timing alone\n"
            "\n"
            "usage:\n"
            "  gpuxray discover [--target cuda[:N] | sim:PROFILE] [--only STAGE,...] [--seed N]\n"
            "                   [-o OUT.json] [--json] [--progress]\n"
            "  gpuxray compare TRUTH.json FOUND.json [--json]\n"
            "  gpuxray validate PROFILE.json ...\n"
            "  gpuxray sim --profile P.json --trace FILE|- [--json] [--noise] [--seed N]\n"
            "  gpuxray trace gen stream|stride|random|tile [options] -o FILE\n"
            "  gpuxray gen-profile --seed N [-o OUT.json]     a random valid hidden profile\n"
            "  gpuxray holdout [--count N] [--seed N]         discovery on N hidden profiles\n"
            "  gpuxray report P.json [--data DIR] [-o report.html]   HTML + .md + .json report\n"
            "  gpuxray advise --profile P.json --smem-tile HxW,elem=B[,read=row|col|both][,pad=N] [--json]\n"
            "                                     shared-memory tile: bank conflicts, padding\n"
            "  gpuxray export accel-sim|gem5 P.json [-o FILE]        another simulator's config\n"
            "  gpuxray advise --profile P.json (--array ... --pattern ... | --trace FILE)\n"
            "  gpuxray advise persist --bytes N [--profile P.json]  access-policy window\n"
            "\n"
            "exit codes: 0 ok, 1 check failed or mismatch, 2 bad usage or input, 3 target unavailable\n",
            GX_VERSION);
}

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

static int parse_scaled(const char *s, unsigned long long *out, int binary)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s)
        return -1;
    unsigned long long mul = 1;
    const unsigned long long k = binary ? 1024ULL : 1000ULL;
    if (*end) {
        char c = *end;
        if (c == 'k' || c == 'K')
            mul = k;
        else if (c == 'm' || c == 'M')
            mul = k * k;
        else if (c == 'g' || c == 'G')
            mul = k * k * k;
        else
            return -1;
        end++;
        if (binary) { /* accept K, KB, KiB, k ... */
            if (*end == 'i')
                end++;
            if (*end == 'B' || *end == 'b')
                end++;
        }
        if (*end)
            return -1;
    }
    if (mul > 1 && v > ~0ULL / mul)
        return -1;
    *out = v * mul;
    return 0;
}

int gx_parse_size(const char *s, unsigned long long *out)
{
    return parse_scaled(s, out, 1);
}

int gx_parse_count(const char *s, unsigned long long *out)
{
    return parse_scaled(s, out, 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return GX_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("gpuxray %s\n", GX_VERSION);
        return GX_EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"discover", gx_cmd_discover}, {"compare", gx_cmd_compare},
        {"validate", gx_cmd_validate}, {"sim", gx_cmd_sim},
        {"trace", gx_cmd_trace},       {"holdout", gx_cmd_holdout},
        {"gen-profile", gx_cmd_genprofile},
        {"report", gx_cmd_report},     {"export", gx_cmd_export},
        {"advise", gx_cmd_advise}, /* --smem-tile goes on to cmd_advise_smem.c */
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    gx_cli_error("unknown command '%s' (try gpuxray --help)", cmd);
    return GX_EXIT_USAGE;
}
