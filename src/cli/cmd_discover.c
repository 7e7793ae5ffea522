/* cmd_discover.c - `gpuxray discover` (Contract 3): choose the target, run
 * the discovery pipeline, print the table (parameter, value, method,
 * confidence, stage costs), write the profile.
 *
 * Notes:
 * - Default target: the first CUDA GPU when one is usable, else the built-in
 *   simulated copy of profiles/seed-ampere-6mb.json, found through the
 *   compile-time source directory, then relative to the executable
 *   (../../profiles, ../share/gpuxray/profiles). The choice and the reason
 *   go to stderr.
 * - stdout carries the table, or the JSON profile with --json (the table then
 *   goes to stderr). Progress on stderr only when stderr is a terminal or
 *   with --progress. -o writes atomically (gx_profile_save).
 * - Exit: 0 ok, 1 a stage failed or was unsure, 2 bad usage / input,
 *   3 target unavailable. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "gpuxray/discover.h"
#include "gpuxray/profile.h"
#include "gpuxray/report.h"
#include "gpuxray/target.h"

#define SEED_PROFILE "seed-ampere-6mb.json"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuxray discover [--target cuda[:N] | sim:PROFILE] [--only STAGE,...]\n"
            "                        [--seed N] [-o OUT.json] [--json] [--progress]\n"
            "                        [--data DIR] [--report DIR]\n"
            "  --data DIR    write the stages' raw measurements as JSON files in DIR\n"
            "  --report DIR  the same, plus DIR/profile.json and DIR/report.html (.md, .json)\n"
            "stages: %s (prerequisites run anyway)\n"
            "default target: the first CUDA GPU, else the simulated seed card (%s)\n",
            gx_discover_stage_names(), SEED_PROFILE);
}

static int file_exists(const char *p)
{
    return access(p, R_OK) == 0;
}

/* Path of the built-in seed profile, or NULL. */
static const char *seed_profile_path(char *buf, size_t len)
{
#ifdef GX_SOURCE_DIR
    snprintf(buf, len, "%s/profiles/%s", GX_SOURCE_DIR, SEED_PROFILE);
    if (file_exists(buf))
        return buf;
#endif
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            const char *rel[] = {"../../profiles", "../profiles", "../share/gpuxray/profiles"};
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                snprintf(buf, len, "%s/%s/%s", exe, rel[i], SEED_PROFILE);
                if (file_exists(buf))
                    return buf;
            }
        }
    }
    return NULL;
}

static int open_default(uint64_t seed, gx_target **t)
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
    char path[PATH_MAX + 64], spec[PATH_MAX + 80];
    if (!seed_profile_path(path, sizeof path)) {
        gx_cli_error("no usable CUDA device (%s) and the built-in %s was not found", why,
                     SEED_PROFILE);
        return GX_EXIT_UNAVAILABLE;
    }
    snprintf(spec, sizeof spec, "sim:%s", path);
    fprintf(stderr, "gpuxray: target %s: the simulated seed card, because %s\n", spec, why);
    rc = gx_target_open(spec, seed, t, &msg);
    if (rc != GX_OK) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    return GX_EXIT_OK;
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

int gx_cmd_discover(int argc, char **argv)
{
    const char *target = NULL, *only = NULL, *out_path = NULL, *data_dir = NULL;
    int with_report = 0;
    unsigned long long seed = 1;
    int json = 0, progress = isatty(2);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        } else if (!strcmp(a, "--target") && has_val) {
            target = argv[++i];
        } else if (!strcmp(a, "--only") && has_val) {
            only = argv[++i];
        } else if (!strcmp(a, "--seed") && has_val) {
            char *end = NULL;
            seed = strtoull(argv[++i], &end, 0);
            if (!*argv[i] || *end) {
                gx_cli_error("bad --seed '%s' (need an integer)", argv[i]);
                return GX_EXIT_USAGE;
            }
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_val) {
            out_path = argv[++i];
        } else if ((!strcmp(a, "--data") || !strcmp(a, "--report")) && has_val) {
            with_report = !strcmp(a, "--report");
            data_dir = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else {
            gx_cli_error("discover: unknown or incomplete option '%s'", a);
            usage(stderr);
            return GX_EXIT_USAGE;
        }
    }
    if (only && check_only(only) != 0)
        return GX_EXIT_USAGE;
    gx_msg msg;
    gx_target *t = NULL;
    if (target) {
        int rc = gx_target_open(target, seed, &t, &msg);
        if (rc != GX_OK) {
            gx_cli_error("%s", msg.text);
            return gx_exit_code(rc);
        }
    } else {
        int ec = open_default(seed, &t);
        if (ec != GX_EXIT_OK)
            return ec;
    }
    gx_discover_opts opts = {
        .only = only, .seed = seed, .progress = progress, .record = data_dir != NULL};
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
    gx_report_print(rep, json ? stderr : stdout);
    int ec = rc == GX_OK ? GX_EXIT_OK : GX_EXIT_FAIL;
    if (rc != GX_OK)
        gx_cli_error("discovery incomplete: %s", msg.text);
    if (json) {
        char *text = gx_profile_to_json(found);
        if (text) {
            fputs(text, stdout);
            fputc('\n', stdout);
            free(text);
        } else {
            gx_cli_error("out of memory serialising the profile");
            ec = GX_EXIT_FAIL;
        }
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
    if (data_dir) {
        int dec = write_report_dir(rep, found, data_dir, with_report);
        ec = ec == GX_EXIT_OK ? dec : ec;
    }
    gx_report_free_data(rep);
    gx_profile_free(found);
    free(rep);
    return ec;
}
