/* cmd_discover.c - `gpuxray discover` (Contract 3): choose the target, run
 * the discovery pipeline, print the table (parameter, value, method,
 * confidence, stage costs), write the profile.
 *
 * Notes:
 * - Default target: the first CUDA GPU when one is usable, else the built-in
 *   simulated copy of profiles/seed-ampere-6mb.json (embedded at build time
 *   by cmake/embed.cmake: no file is needed at run time). The choice and the
 *   reason go to stderr.
 * - stdout carries the table, or the JSON profile with --json (the table then
 *   goes to stderr; also with -o -). Progress on stderr only when stderr is
 *   a terminal or with --progress. -o is checked before the target opens and
 *   written by gx_profile_save (outfile.h rules).
 * - Exit: 0 ok, 1 a stage failed or was unsure, 2 bad usage / input,
 *   3 target unavailable. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "gpuxray/discover.h"
#include "gpuxray/parse.h"
#include "gpuxray/profile.h"
#include "gpuxray/report.h"
#include "gpuxray/target.h"

#define SEED_PROFILE "seed-ampere-6mb.json"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuxray discover [--target cuda[:N] | sim:PROFILE] [--only STAGE,...]\n"
            "                        [--seed N] [-o OUT.json|-] [--json] [--progress]\n"
            "                        [--data DIR] [--report DIR]\n"
            "  --target T   cuda[:N] (a CUDA GPU) or sim:PROFILE.json (the model)\n"
            "  --only S,..  run these stages (and their prerequisites) only\n"
            "  --seed N     0..2^64-1 (default 1): randomised choices, recorded in provenance\n"
            "  -o FILE      write the found profile (checked before discovery starts;\n"
            "               '-' = standard output, the table then goes to stderr)\n"
            "  --json       the profile as JSON on stdout, the table on stderr\n"
            "  --progress   progress on stderr (default when stderr is a terminal)\n"
            "  --data DIR    write the stages' raw measurements as JSON files in DIR\n"
            "  --report DIR  the same, plus DIR/profile.json and DIR/report.html (.md, .json)\n"
            "stages: %s (prerequisites run anyway)\n"
            "default target: the first CUDA GPU, else the simulated seed card (%s,\n"
            "built into the binary)\n"
            "exit: 0 every stage succeeded; 1 a stage failed or left a field out as unsure\n"
            "(the profile still holds what was found); 2 bad usage or input, an unwritable\n"
            "-o; 3 target unavailable\n",
            gx_discover_stage_names(), SEED_PROFILE);
}

/* The seed profile's bytes, built into the binary (cmake/embed.cmake). */
extern const char gx_seed_profile_json[];
extern const size_t gx_seed_profile_json_len;

/* Open the built-in seed card: its JSON goes to an anonymous memory file
 * (memfd, nothing on disk to clean up) opened as sim:/proc/self/fd/N. */
static int open_builtin(uint64_t seed, const char *why, gx_target **t)
{
    gx_msg msg;
    int fd = memfd_create(SEED_PROFILE, MFD_CLOEXEC);
    size_t off = 0;
    while (fd >= 0 && off < gx_seed_profile_json_len) {
        ssize_t w = write(fd, gx_seed_profile_json + off, gx_seed_profile_json_len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (fd < 0 || off < gx_seed_profile_json_len) {
        gx_cli_error("no usable CUDA device (%s) and the built-in %s cannot be opened: %s", why,
                     SEED_PROFILE, strerror(errno));
        if (fd >= 0)
            close(fd);
        return GX_EXIT_UNAVAILABLE;
    }
    char spec[64];
    snprintf(spec, sizeof spec, "sim:/proc/self/fd/%d", fd);
    fprintf(stderr, "gpuxray: target sim:%s (built in): the simulated seed card, because %s\n",
            SEED_PROFILE, why);
    int rc = gx_target_open(spec, seed, t, &msg);
    close(fd);
    if (rc != GX_OK) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    return GX_EXIT_OK;
}

static int open_default(uint64_t seed, gx_target **t, int *builtin)
{
    gx_msg msg;
    int rc = gx_target_open("cuda:0", seed, t, &msg);
    if (rc == GX_OK) {
        fprintf(stderr, "gpuxray: target cuda:0 (%s): a usable CUDA GPU was found\n",
                gx_target_get_info(*t)->name);
        return GX_EXIT_OK;
    }
    char why[GX_MSG_MAX];
    snprintf(why, sizeof why, "%s", msg.text);
    *builtin = 1;
    return open_builtin(seed, why, t);
}

/* Every name in a comma-separated --only list must be a stage (checked before
 * the target is opened, so a typo costs nothing). */
static int check_only(const char *only)
{
    const char *names = gx_discover_stage_names();
    const char *p = only;
    do {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int ok = 0;
        for (const char *q = names; *q;) {
            const char *qe = strchr(q, ',');
            size_t ql = qe ? (size_t)(qe - q) : strlen(q);
            ok |= ql == len && len > 0 && strncmp(q, p, len) == 0;
            q += ql + (qe ? 1 : 0);
        }
        if (!ok) {
            gx_cli_error("unknown stage '%.*s' in --only (stages: %s)", (int)len, p, names);
            return -1;
        }
        p = e ? e + 1 : p + len;
    } while (*p);
    return 0;
}

/* --data / --report DIR: the raw measurements, and with --report the
 * profile and the report pages built from them. */
static int write_report_dir(const gx_report *rep, const gx_profile *found, const char *dir,
                            int with_report)
{
    gx_msg msg;
    int rc = gx_report_data_save(rep, dir, &msg);
    if (rc == GX_OK && with_report) {
        char prof[PATH_MAX], html[PATH_MAX];
        snprintf(prof, sizeof prof, "%s/profile.json", dir);
        snprintf(html, sizeof html, "%s/report.html", dir);
        void *data = NULL;
        rc = gx_profile_save(found, prof, &msg);
        if (rc == GX_OK)
            rc = gx_report_data_load(dir, &data, &msg);
        if (rc == GX_OK) {
            gx_report_opts o = {.profile_path = prof, .data = data, .model = 1, .seed = 1};
            rc = gx_report_write(found, &o, html, &msg);
        }
        gx_report_data_release(data);
    }
    if (rc != GX_OK) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    fprintf(stderr, "gpuxray: %s written to %s\n",
            with_report ? "raw data, profile.json and report.html" : "raw data", dir);
    return GX_EXIT_OK;
}

/* 1 when a row of the parameter put it in the profile (a later method of
 * the stage may establish what an earlier one left out). */
static int row_written(const gx_report *rep, const char *parameter)
{
    for (int i = 0; i < rep->n_rows; i++)
        if (rep->rows[i].in_profile && !strcmp(rep->rows[i].parameter, parameter))
            return 1;
    return 0;
}

/* 1 when row i is a left-out measurement (not a note: confidence NaN) */
static int row_left_out(const gx_report *rep, int i)
{
    return !rep->rows[i].in_profile && !isnan(rep->rows[i].confidence);
}

/* 1 when a row before i leaves the same parameter out (it is named once) */
static int named_before(const gx_report *rep, int i)
{
    for (int j = 0; j < i; j++)
        if (row_left_out(rep, j) && !strcmp(rep->rows[j].parameter, rep->rows[i].parameter))
            return 1;
    return 0;
}

/* Contract 3: a field the stages measured but left out of the profile as
 * unsure makes discovery incomplete (exit 1); the profile keeps the rest. */
static int report_left_out(const gx_report *rep)
{
    int n = 0;
    for (int i = 0; i < rep->n_rows; i++)
        if (row_left_out(rep, i) && !row_written(rep, rep->rows[i].parameter) &&
            !named_before(rep, i)) {
            if (!n++)
                fprintf(stderr, "gpuxray: discovery incomplete: left out of the profile as unsure:");
            fprintf(stderr, " %s", rep->rows[i].parameter);
        }
    if (n)
        fputc('\n', stderr);
    return n;
}

typedef struct discover_args {
    const char *target, *only, *out_path, *data_dir;
    uint64_t seed;
    int json, progress, with_report;
} discover_args;

/* 0 parsed, 1 help printed, else an exit code (error printed). */
static int parse_args(int argc, char **argv, discover_args *d)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if ((r = gx_cli_value(argc, argv, &i, "--target", &v)) != 0) {
            if (r < 0)
                return GX_EXIT_USAGE;
            d->target = v;
        } else if ((r = gx_cli_value(argc, argv, &i, "--only", &v)) != 0) {
            if (r < 0)
                return GX_EXIT_USAGE;
            d->only = v;
        } else if ((r = gx_cli_value(argc, argv, &i, "--seed", &v)) != 0) {
            if (r < 0 || gx_cli_u64("--seed", v, 0, UINT64_MAX, GX_NUM_PLAIN, &d->seed))
                return GX_EXIT_USAGE;
        } else if ((r = gx_cli_value(argc, argv, &i, "-o", &v)) != 0 ||
                   (r = gx_cli_value(argc, argv, &i, "--output", &v)) != 0) {
            if (r < 0)
                return GX_EXIT_USAGE;
            d->out_path = v;
        } else if ((r = gx_cli_value(argc, argv, &i, "--data", &v)) != 0 ||
                   (r = gx_cli_value(argc, argv, &i, "--report", &v)) != 0) {
            if (r < 0)
                return GX_EXIT_USAGE;
            d->with_report = !strncmp(a, "--report", 8);
            d->data_dir = v;
        } else if (!strcmp(a, "--json")) {
            d->json = 1;
        } else if (!strcmp(a, "--progress")) {
            d->progress = 1;
        } else {
            gx_cli_error("discover: unknown option or argument '%s'", a);
            usage(stderr);
            return GX_EXIT_USAGE;
        }
    }
    if (d->only && check_only(d->only) != 0)
        return GX_EXIT_USAGE;
    return 0;
}

int gx_cmd_discover(int argc, char **argv)
{
    discover_args d = {NULL, NULL, NULL, NULL, 1, 0, isatty(2), 0};
    int pr = parse_args(argc, argv, &d);
    if (pr)
        return pr == 1 ? GX_EXIT_OK : pr;
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    const char *target = d.target, *only = d.only, *out_path = d.out_path;
    uint64_t seed = d.seed;
    int json = d.json, progress = d.progress;
    /* "-o -": the profile goes to standard output, the table to stderr */
    int to_stdout = out_path && !strcmp(out_path, "-");
    if (to_stdout) {
        json = 1;
        out_path = NULL;
    }
    if (out_path && gx_cli_check_output("discover", out_path))
        return GX_EXIT_USAGE;
    gx_msg msg;
    gx_target *t = NULL;
    int builtin = 0;
    if (target) {
        int rc = gx_target_open(target, seed, &t, &msg);
        if (rc != GX_OK) {
            gx_cli_error("%s", msg.text);
            return gx_exit_code(rc);
        }
    } else {
        int ec = open_default(seed, &t, &builtin);
        if (ec != GX_EXIT_OK)
            return ec;
    }
    gx_discover_opts opts = {
        .only = only, .seed = seed, .progress = progress ? gx_progress_print : NULL,
        .progress_user = stderr, .record = d.data_dir != NULL};
    gx_profile *found = NULL;
    gx_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        gx_target_close(t);
        gx_cli_error("out of memory");
        return GX_EXIT_FAIL;
    }
    int rc = gx_discover(t, &opts, &found, rep, &msg);
    gx_target_close(t);
    if (!found) { /* bad --only or out of memory: nothing ran */
        gx_cli_error("%s", msg.text);
        free(rep);
        return gx_exit_code(rc);
    }
    if (builtin) /* not the memfd's name, which means nothing after the run */
        snprintf(found->provenance.target, sizeof found->provenance.target, "sim:%s (built in)",
                 SEED_PROFILE);
    gx_report_print(rep, json ? stderr : stdout);
    int ec = rc == GX_OK ? GX_EXIT_OK : GX_EXIT_FAIL;
    if (rc != GX_OK)
        gx_cli_error("discovery incomplete: %s", msg.text);
    else if (report_left_out(rep))
        ec = GX_EXIT_FAIL;
    if (json) {
        char *text = gx_profile_to_json(found);
        if (!text) {
            gx_cli_error("out of memory serialising the profile");
            ec = GX_EXIT_FAIL;
        } else if ((rc = gx_out_write_file("-", text, strlen(text), &msg)) != GX_OK) {
            gx_cli_error("discover: %s", msg.text);
            ec = gx_exit_code(rc);
        }
        free(text);
    }
    if (out_path) {
        int src = gx_profile_save(found, out_path, &msg);
        if (src != GX_OK) {
            gx_cli_error("%s", msg.text);
            ec = gx_exit_code(src);
        } else {
            fprintf(stderr, "gpuxray: profile written to %s\n", out_path);
        }
    }
    if (d.data_dir) {
        int dec = write_report_dir(rep, found, d.data_dir, d.with_report);
        ec = ec == GX_EXIT_OK ? dec : ec;
    }
    gx_report_free_data(rep);
    gx_profile_free(found);
    free(rep);
    return ec;
}
