/* fuzz_cli.c - libFuzzer harness: the command-line parsing of every command.
 * The input is split at NUL bytes into words; the first byte picks the
 * command (discover, compare, validate, sim, trace gen, trace convert, report,
 * export, advise, advise persist,
 * holdout, gen-profile, help, merge), the words follow it. gx_cli_parse_only makes
 * every command return right after parsing, so nothing is opened, run or
 * written: what is fuzzed is option matching, values, numbers, ranges and
 * the error paths. Run with -close_fd_mask=3 (scripts/fuzz.sh): the
 * commands' messages would flood the log. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cli/commands.h"

#define MAX_WORDS 64 /* more options than any command takes */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const cmds[][2] = {
    {"discover", NULL}, {"compare", NULL},      {"validate", NULL},
    {"sim", NULL},      {"trace", "gen"},       {"trace", "convert"},
    {"holdout", NULL},  {"gen-profile", NULL},  {"help", NULL},
    {"report", NULL},   {"export", NULL},       {"advise", NULL},
    {"advise", "persist"}, {"merge", NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const size_t n_cmds = sizeof cmds / sizeof cmds[0];
    const char *const *c = cmds[data[0] % n_cmds];
    char *buf = malloc(size);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    char *argv[MAX_WORDS + 4];
    int argc = 0;
    char prog[] = "gpuxray";
    argv[argc++] = prog;
    argv[argc++] = (char *)c[0];
    if (c[1])
        argv[argc++] = (char *)c[1];
    for (size_t i = 0; i < size - 1 && argc < MAX_WORDS + 3;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    gx_cli_parse_only = 1;
    (void)gx_cli_main(argc, argv);
    free(buf);
    return 0;
}
