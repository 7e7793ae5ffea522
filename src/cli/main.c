/* main.c - the gpuxray command: dispatch to subcommands (commands.h) and
 * the help topics. main() itself only installs the temporary-file cleanup
 * on signals (outfile.h) and calls gx_cli_main, which the command-line
 * fuzzer calls directly. */
#include <stdio.h>
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
            "                   [-o OUT.json|-] [--json] [--progress]\n"
            "  gpuxray compare TRUTH.json FOUND.json [--json]\n"
            "  gpuxray validate PROFILE.json ...\n"
            "  gpuxray sim --profile P.json --trace FILE|- [--json] [-o OUT|-] [options]\n"
            "              [--threads N] [--shard I/N]\n"
            "  gpuxray merge PART.json ... [--json] [-o OUT|-]   add up the shards of a sim\n"
            "  gpuxray trace gen stream|stride|random|tile [options] -o FILE|-\n"
            "  gpuxray trace convert IN [--text|--binary] -o FILE|-\n"
            "  gpuxray gen-profile --seed N [--mode M] [-o F] a random valid hidden profile\n"
            "  gpuxray holdout [--count N] [--seed N] ...     discovery on N hidden profiles\n"
            "  gpuxray report P.json [--data DIR] [-o report.html]   HTML + .md + .json report\n"
            "  gpuxray advise --profile P.json --smem-tile HxW,elem=B[,read=row|col|both][,pad=N] [--json]\n"
            "                                     shared-memory tile: bank conflicts, padding\n"
            "  gpuxray export accel-sim|gem5 P.json [-o FILE]        another simulator's config\n"
            "  gpuxray advise --profile P.json (--array ... --pattern ... | --trace FILE)\n"
            "  gpuxray advise persist --bytes N [--profile P.json]  access-policy window\n"
            "  gpuxray help [COMMAND | exit-codes | output | numbers]\n"
            "\n"
            "exit codes: 0 ok, 1 a check failed, a mismatch or incomplete work, 2 bad usage or\n"
            "bad input (an unreadable input or an unwritable output too), 3 target unavailable\n"
            "(gpuxray help exit-codes). `gpuxray COMMAND --help` describes one command.\n",
            GX_VERSION);
}

static void help_exit_codes(void)
{
    printf("exit codes (every command):\n"
           "  0  ok: the command did its work and every check passed\n"
           "  1  the work ran and a check failed: compare found a mismatch or a missing\n"
           "     field, discovery left a stage failed or unsure, holdout is below the bar;\n"
           "     also a run that failed midway (out of memory, a device error)\n"
           "  2  bad usage or bad input: an unknown option, a bad number, a malformed\n"
           "     profile or trace, an input that cannot be read, an output that cannot be\n"
           "     written (checked before the work starts; a write error such as a full\n"
           "     disk during the work too)\n"
           "  3  the target is unavailable (no usable CUDA device, sim profile not found)\n"
           "  130, 143  interrupted by SIGINT / SIGTERM (temporary files removed)\n");
}

static void help_output(void)
{
    printf("output files (-o PATH, every command):\n"
           "  -            standard output\n"
           "  a new or existing regular file: written to a temporary file in the same\n"
           "               directory, then renamed over it: never half-written; an existing\n"
           "               file keeps its permissions; one you may not write is refused\n"
           "  a symbolic link: written through to the file it points to (the link stays);\n"
           "               a dangling link is refused\n"
           "  a device, FIFO or terminal (e.g. /dev/null): written straight, never replaced\n"
           "  a directory: refused\n"
           "The destination is checked before the work starts; a write error names its\n"
           "reason (e.g. No space left on device). SIGINT / SIGTERM remove the temporary\n"
           "file.\n");
}

static void help_numbers(void)
{
    printf("numbers (every option):\n"
           "  integers: decimal, or hexadecimal with 0x; no sign, no blanks; a value out of\n"
           "            the option's range is an error (never clamped or wrapped)\n"
           "  sizes:    an integer with an optional suffix K, M, G, T (x1024^n; KiB, MiB,\n"
           "            GiB, TiB and KB, MB, GB, TB mean the same): 64MiB, 4k, 0x1000\n"
           "  counts:   an integer with an optional suffix k, M, G, T (x1000^n): 20M\n"
           "  fractions and other reals: decimal (0.5, 1e-3); no inf, nan or hex floats\n"
           "option values: --opt VALUE or --opt=VALUE; a value starting with '-' and a\n"
           "letter (one that looks like an option) must be given as --opt=VALUE\n");
}

typedef struct cmd_entry {
    const char *name;
    int (*fn)(int, char **);
} cmd_entry;

static const cmd_entry cmds[] = {
    {"discover", gx_cmd_discover}, {"compare", gx_cmd_compare},
    {"validate", gx_cmd_validate}, {"sim", gx_cmd_sim},
    {"trace", gx_cmd_trace},       {"holdout", gx_cmd_holdout},
    {"gen-profile", gx_cmd_genprofile},
    {"report", gx_cmd_report},     {"export", gx_cmd_export},
    {"advise", gx_cmd_advise}, /* --smem-tile goes on to cmd_advise_smem.c */
    {"merge", gx_cmd_merge},
};

static const cmd_entry *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(name, cmds[i].name))
            return &cmds[i];
    return NULL;
}

/* gpuxray help [TOPIC] */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        usage(stdout);
        return GX_EXIT_OK;
    }
    if (argc > 3) {
        gx_cli_error("help: one topic at a time (try gpuxray help)");
        return GX_EXIT_USAGE;
    }
    const char *topic = argv[2];
    if (!strcmp(topic, "exit-codes")) {
        help_exit_codes();
        return GX_EXIT_OK;
    }
    if (!strcmp(topic, "output")) {
        help_output();
        return GX_EXIT_OK;
    }
    if (!strcmp(topic, "numbers")) {
        help_numbers();
        return GX_EXIT_OK;
    }
    const cmd_entry *c = find_cmd(topic);
    if (!c) {
        gx_cli_error("help: no topic '%s' (commands, exit-codes, output, numbers)", topic);
        return GX_EXIT_USAGE;
    }
    char name[32], opt[] = "--help";
    snprintf(name, sizeof name, "%s", c->name);
    char *av[] = {name, opt, NULL};
    return c->fn(2, av);
}

int gx_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help"))
        return help(argc, argv);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("gpuxray %s\n", GX_VERSION);
        return GX_EXIT_OK;
    }
    const cmd_entry *c = find_cmd(cmd);
    if (c)
        return c->fn(argc - 1, argv + 1);
    gx_cli_error("unknown command '%s' (try gpuxray help)", cmd);
    return GX_EXIT_USAGE;
}
