/* commands.h - the gpuxray subcommands (Contract 3 of DESIGN.md). Each
 * returns a process exit code: 0 ok, 1 a check failed or a mismatch, 2 bad
 * usage or bad input, 3 target unavailable. Only the CLI prints and exits. */
#ifndef GPUXRAY_CLI_COMMANDS_H
#define GPUXRAY_CLI_COMMANDS_H

#include <stdio.h>

enum {
    GX_EXIT_OK = 0,
    GX_EXIT_FAIL = 1,
    GX_EXIT_USAGE = 2,
    GX_EXIT_UNAVAILABLE = 3
};

/* Map a library error code to an exit code. */
int gx_exit_code(int err);
/* "gpuxray: <text>" on stderr. */
void gx_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parse a size such as 64MiB, 2M, 4096, 1GiB, 0x1000 into bytes. 0 ok, -1 bad. */
int gx_parse_size(const char *s, unsigned long long *out);
/* Parse a count such as 20M, 1000, 2k (decimal multipliers). 0 ok, -1 bad. */
int gx_parse_count(const char *s, unsigned long long *out);

int gx_cmd_discover(int argc, char **argv);  /* src/cli/cmd_discover.c */
int gx_cmd_compare(int argc, char **argv);   /* src/cli/cmd_compare.c */
int gx_cmd_validate(int argc, char **argv);  /* src/cli/cmd_validate.c */
int gx_cmd_sim(int argc, char **argv);       /* src/cli/cmd_sim.c */
int gx_cmd_trace(int argc, char **argv);     /* src/cli/cmd_trace.c */
int gx_cmd_holdout(int argc, char **argv);   /* src/cli/cmd_holdout.c */
int gx_cmd_genprofile(int argc, char **argv);/* src/cli/cmd_holdout.c */
int gx_cmd_report(int argc, char **argv);    /* src/cli/cmd_report.c */
int gx_cmd_advise_smem(int argc, char **argv); /* src/cli/cmd_advise_smem.c: advise --smem-tile */
int gx_cmd_export(int argc, char **argv);    /* src/cli/cmd_export.c */
int gx_cmd_advise(int argc, char **argv);    /* src/cli/cmd_advise.c */

#endif
