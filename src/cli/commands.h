/* commands.h - the gpuxray subcommands and what they share (cli_util.c).
 * Each command returns a process exit code: 0 ok, 1 a check failed, a
 * mismatch or incomplete work, 2 bad usage or bad input (an unreadable input
 * or an unwritable output included), 3 target unavailable (docs/cli.md).
 * Only the CLI prints and exits.
 *
 * Every command parses ALL its arguments before doing any work, and returns
 * GX_EXIT_OK right after parsing when gx_cli_parse_only is set (the
 * command-line fuzzer, fuzz/fuzz_cli.c, runs the parsers alone that way). */
#ifndef GPUXRAY_CLI_COMMANDS_H
#define GPUXRAY_CLI_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

#include "gpuxray/outfile.h"

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
/* Nonzero: commands return right after parsing their arguments. */
extern int gx_cli_parse_only;
/* The value of option name at argv[*i] ("--name VALUE" or "--name=VALUE"):
 * 1 and *val set (i advanced past the value), 0 when argv[*i] is another
 * option, -1 when the value is missing (error printed). */
int gx_cli_value(int argc, char **argv, int *i, const char *name, const char **val);
/* Strict numbers (gpuxray/parse.h): GX_EXIT_OK, or the error printed and
 * GX_EXIT_USAGE. */
int gx_cli_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi, unsigned flags,
               uint64_t *out);
int gx_cli_u32(const char *opt, const char *v, uint32_t lo, uint32_t hi, unsigned flags,
               uint32_t *out);
int gx_cli_double(const char *opt, const char *v, double lo, double hi, double *out);
/* gx_out_check before the work starts: GX_EXIT_OK or the error printed
 * ("CMD: PATH: cannot write: REASON") and GX_EXIT_USAGE. */
int gx_cli_check_output(const char *cmd, const char *path);
/* Write a finished output (buf, len) to path ("-" = stdout) through gx_out.
 * is_json: the text must parse as JSON first (JSON has no inf or NaN: a
 * writer that printed one is refused, nothing written). GX_EXIT_OK, or the
 * error printed ("CMD: ...") and its exit code. */
int gx_cli_emit(const char *cmd, const char *path, const char *buf, size_t len, int is_json);
/* Load and validate a profile for a command: GX_EXIT_OK with *out set, or
 * the loader's message printed ("gpuxray: ...") and its exit code (2 for a
 * file that cannot be read or a profile that is malformed or inconsistent). */
struct gx_profile;
int gx_cli_load_profile(const char *path, struct gx_profile **out);
/* The whole command line (main() calls it). */
int gx_cli_main(int argc, char **argv);

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
int gx_cmd_merge(int argc, char **argv);     /* src/cli/cmd_merge.c */

/* cmd_sim.c: a run's statistics as `gpuxray sim` prints them (text, or JSON
 * with json; top: slices listed each way; out: -o or NULL = stdout), after
 * refusing pages that shared frames; cmd names the command in messages. */
struct gx_tsim;
int gx_cli_sim_output(const char *cmd, const struct gx_tsim *sim, uint64_t page_bytes, int json,
                      int top, const char *out);

#endif
