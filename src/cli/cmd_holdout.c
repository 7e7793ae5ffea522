/* cmd_holdout.c - `gpuxray gen-profile` (one random hidden profile) and
 * `gpuxray holdout` (discovery on N hidden profiles, exact-recovery rate per
 * field; the "Proof" of issue 3).
 *
 * Notes:
 * - Profile i of a holdout run is gx_generate_profile(seed + i). Each one is
 *   saved to a temporary directory and discovered by a forked child through
 *   the sim target ("sim:FILE"); the child writes the found profile and
 *   exits. A crash, a failure or a timeout of one child is reported as a
 *   miss of every field of that profile, never fatal to the run.
 * - A miss is "flagged" when discovery itself said it was unsure: the field
 *   is absent in the found profile or its confidence is below 0.9.
 * - --only runs those stages and compares what they measure; with "tlb"
 *   the profiles carry hidden translation hierarchies (gen-profile --tlb)
 *   and only the tlb rows the stage measures are compared
 *   (tlb_row_measured).
 * - Exit 0 when every field's exact-recovery rate meets --bar, else 1. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "gpuxray/compare.h"
#include "gpuxray/discover.h"
#include "gpuxray/generate.h"
#include "gpuxray/parse.h"
#include "gpuxray/profile.h"
#include "gpuxray/target.h"

#define LOW_CONFIDENCE 0.9

/* ------------------------------------------------------------ gen-profile */

/* --mode VALUE: 0 parsed into *opts, -1 bad (printed). */
static int parse_mode(const char *cmd, const char *v, gx_generate_opts *opts)
{
    int mode = gx_generate_mode_parse(v);
    if (mode < 0) {
        gx_cli_error("%s: --mode '%s': expected classic or wide", cmd, v);
        return -1;
    }
    if (mode == GX_GEN_WIDE)
        gx_generate_opts_wide(opts);
    else
        gx_generate_opts_default(opts);
    return 0;
}

static void genprofile_usage(FILE *f)
{
    fprintf(f, "usage: gpuxray gen-profile --seed N [--mode classic|wide] [--tlb] [-o OUT.json|-]\n"
               "  a random valid hidden profile (the holdout's generator); N 0..2^64-1;\n"
               "  --mode wide: the shapes real GPUs publish (docs/discovery.md);\n"
               "  --tlb: with a hidden translation hierarchy (a tlb section);\n"
               "  standard output without -o (or with -o -)\n");
}

int gx_cmd_genprofile(int argc, char **argv)
{
    uint64_t seed = 0;
    int have_seed = 0, tlb = 0;
    const char *out = "-";
    gx_generate_opts go;
    gx_generate_opts_default(&go);
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r;
        if ((r = gx_cli_value(argc, argv, &i, "--mode", &v)) != 0) {
            if (r < 0 || parse_mode("gen-profile", v, &go))
                return GX_EXIT_USAGE;
        } else if ((r = gx_cli_value(argc, argv, &i, "--seed", &v)) != 0) {
            if (r < 0 || gx_cli_u64("--seed", v, 0, UINT64_MAX, GX_NUM_PLAIN, &seed))
                return GX_EXIT_USAGE;
            have_seed = 1;
        } else if ((r = gx_cli_value(argc, argv, &i, "-o", &v)) != 0 ||
                   (r = gx_cli_value(argc, argv, &i, "--output", &v)) != 0) {
            if (r < 0)
                return GX_EXIT_USAGE;
            out = v;
        } else if (strcmp(argv[i], "--tlb") == 0) {
            tlb = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            genprofile_usage(stdout);
            return GX_EXIT_OK;
        } else {
            gx_cli_error("gen-profile: unknown argument '%s'", argv[i]);
            genprofile_usage(stderr);
            return GX_EXIT_USAGE;
        }
    }
    if (!have_seed) {
        gx_cli_error("gen-profile: --seed N is required");
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    if (gx_cli_check_output("gen-profile", out))
        return GX_EXIT_USAGE;
    gx_profile *p = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    go.translation = tlb;
    int rc = gx_generate(seed, &go, &p, &m);
    if (rc != GX_OK) {
        gx_cli_error("gen-profile: %s", m.text);
        return GX_EXIT_FAIL;
    }
    rc = gx_profile_save(p, out, &m);
    if (rc != GX_OK)
        gx_cli_error("gen-profile: %s", m.text);
    gx_profile_free(p);
    return gx_exit_code(rc);
}

/* ---------------------------------------------------------------- holdout */

/* Option ranges: beyond these a run is a typo, not a plan (200 profiles take
 * about an hour on 2 cores; 0 timeout = none). */
#define HOLDOUT_MAX_COUNT 100000
#define HOLDOUT_MAX_JOBS 256
#define HOLDOUT_MAX_TIMEOUT_S 86400

typedef struct hopts {
    uint64_t count, seed;
    int jobs;
    double bar;
    uint32_t timeout_s;
    const char *keep;
    int progress;
    gx_generate_opts gen; /* the generator's mode and ranges */
    const char *only; /* --only: stages to run (NULL: all) */
} hopts;

typedef struct hres {
    uint64_t seed;
    int status;          /* 0 ok; else why there is no found profile */
    char why[160];
    double seconds;
    gx_compare_result cmp;
    double conf[GX_COMPARE_MAX_ROWS]; /* found confidence per row, NaN absent */
} hres;

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void path_of(char *buf, size_t cap, const char *dir, const char *what, uint64_t seed)
{
    snprintf(buf, cap, "%s/%s-%llu.json", dir, what, (unsigned long long)seed);
}

/* The child: discover the sim target of truth_path, save to found_path. */
static int child_run(const char *truth_path, const char *found_path, uint64_t seed,
                     unsigned timeout_s, const char *only)
{
    if (timeout_s)
        alarm(timeout_s);
    char spec[4300];
    snprintf(spec, sizeof spec, "sim:%s", truth_path);
    gx_target *t = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_target_open(spec, seed, &t, &m);
    if (rc != GX_OK) {
        fprintf(stderr, "target: %s\n", m.text);
        return 3;
    }
    gx_discover_opts o = {.only = only, .seed = seed, .progress = NULL};
    gx_profile *found = NULL;
    gx_report *rep = calloc(1, sizeof *rep);
    rc = gx_discover(t, &o, &found, rep, &m);
    free(rep);
    gx_target_close(t);
    if (!found) {
        fprintf(stderr, "discover: %s\n", m.text);
        return 4;
    }
    if (rc != GX_OK)
        fprintf(stderr, "discover (partial): %s\n", m.text);
    rc = gx_profile_save(found, found_path, &m);
    gx_profile_free(found);
    if (rc != GX_OK) {
        fprintf(stderr, "save: %s\n", m.text);
        return 5;
    }
    return 0;
}

static void last_line(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n) {
            size_t k = n < cap - 1 ? n : cap - 1;
            memcpy(out, line, k);
            out[k] = '\0';
        }
    }
    fclose(f);
}

/* All truth fields as missing (the found profile does not exist). */
static void all_missing(hres *h, const gx_profile *truth)
{
    gx_profile *empty = gx_profile_new();
    if (empty && gx_compare(truth, empty, NULL, &h->cmp, NULL) == GX_OK) {
        for (int i = 0; i < h->cmp.n_rows; i++) {
            h->cmp.rows[i].verdict = GX_VERDICT_MISSING;
            snprintf(h->cmp.rows[i].found, sizeof h->cmp.rows[i].found, "(%.150s)", h->why);
            h->conf[i] = NAN;
        }
        h->cmp.n_match = h->cmp.n_mismatch = 0;
        h->cmp.n_missing = h->cmp.n_rows;
    }
    gx_profile_free(empty);
}

/* 1 when the comma-separated stage list names stage. */
static int only_has(const char *only, const char *stage)
{
    size_t n = strlen(stage);
    for (const char *p = only; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, stage, n) == 0)
            return 1;
        p += len + (e != NULL);
    }
    return 0;
}

/* The tlb rows the tlb stage measures. Not among them: level 0's hit
 * latency (it adds to every access: a chase sees it inside the L2 hit),
 * the page table, walker and coalescer (a chase sees their sum, the walk),
 * the policy and outstanding misses (one thread's chase has one miss in
 * flight). */
static int tlb_row_measured(const char *field)
{
    static const char *const leaf[] = {".entries", ".ways", ".entry_bytes", ".sharing", ".index",
                                       ".miss_cycles", ".hit_latency_cycles"};
    if (!strcmp(field, "tlb.sms_per_tpc") || !strcmp(field, "tlb.sms_per_gpc"))
        return 1;
    if (strncmp(field, "tlb.levels[", 11) != 0)
        return 0;
    const char *dot = strchr(field + 11, '.');
    if (!dot)
        return 0;
    if (!strcmp(dot, ".hit_latency_cycles"))
        return strncmp(field, "tlb.levels[0]", 13) != 0;
    for (size_t i = 0; i < sizeof leaf / sizeof leaf[0]; i++)
        if (!strcmp(dot, leaf[i]))
            return 1;
    return 0;
}

/* With --only: keep the rows of what the stages run measure (tlb: the
 * measured tlb rows; any other stage: every row outside tlb). */
static void keep_rows(hres *h, const char *only)
{
    if (!only)
        return;
    int tlb = only_has(only, "tlb"), other = 0;
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!(len == 3 && strncmp(p, "tlb", 3) == 0))
            other = 1;
        p += len + (e != NULL);
    }
    int k = 0;
    h->cmp.n_match = h->cmp.n_mismatch = h->cmp.n_missing = 0;
    for (int i = 0; i < h->cmp.n_rows; i++) {
        const char *f = h->cmp.rows[i].field;
        int is_tlb = strncmp(f, "tlb", 3) == 0 && (f[3] == '.' || f[3] == '\0');
        if (!(is_tlb ? tlb && tlb_row_measured(f) : other))
            continue;
        h->cmp.rows[k] = h->cmp.rows[i];
        h->conf[k] = h->conf[i];
        gx_verdict v = h->cmp.rows[k].verdict;
        h->cmp.n_match += v == GX_VERDICT_MATCH;
        h->cmp.n_mismatch += v == GX_VERDICT_MISMATCH;
        h->cmp.n_missing += v == GX_VERDICT_MISSING;
        k++;
    }
    h->cmp.n_rows = k;
}

static void finish(hres *h, const char *dir, int wstatus, const char *only)
{
    char tp[4200], fp[4200], lp[4200];
    path_of(tp, sizeof tp, dir, "truth", h->seed);
    path_of(fp, sizeof fp, dir, "found", h->seed);
    snprintf(lp, sizeof lp, "%s/log-%llu.txt", dir, (unsigned long long)h->seed);
    gx_profile *truth = NULL, *found = NULL;
    gx_msg m;
    if (gx_profile_load(tp, &truth, &m) != GX_OK) {
        h->status = -1;
        snprintf(h->why, sizeof h->why, "truth unreadable: %.120s", m.text);
        return;
    }
    char tail[256];
    last_line(lp, tail, sizeof tail);
    if (WIFSIGNALED(wstatus)) {
        h->status = 128 + WTERMSIG(wstatus);
        snprintf(h->why, sizeof h->why, "%s (signal %d)",
                 WTERMSIG(wstatus) == SIGALRM ? "timeout" : "crash", WTERMSIG(wstatus));
    } else if (WEXITSTATUS(wstatus) != 0) {
        h->status = WEXITSTATUS(wstatus);
        snprintf(h->why, sizeof h->why, "discovery failed (exit %d): %.100s", h->status, tail);
    } else if (gx_profile_load(fp, &found, &m) != GX_OK) {
        h->status = -2;
        snprintf(h->why, sizeof h->why, "found profile invalid: %.120s", m.text);
    }
    if (h->status != 0) {
        all_missing(h, truth);
    } else {
        gx_msg_clear(&m);
        if (gx_compare(truth, found, NULL, &h->cmp, &m) != GX_OK) {
            h->status = -3;
            snprintf(h->why, sizeof h->why, "compare failed: %.120s", m.text);
            all_missing(h, truth);
        } else {
            for (int i = 0; i < h->cmp.n_rows; i++)
                h->conf[i] = gx_profile_confidence(found, h->cmp.rows[i].field);
        }
    }
    gx_profile_free(truth);
    gx_profile_free(found);
    keep_rows(h, only);
}

typedef struct slot {
    pid_t pid;
    size_t idx;
    double t0;
} slot;

static int run_all(const hopts *o, const char *dir, hres *res)
{
    slot *slots = calloc((size_t)o->jobs, sizeof *slots);
    if (!slots)
        return -1;
    size_t next = 0, done = 0, n = (size_t)o->count;
    int running = 0;
    while (done < n) {
        while (running < o->jobs && next < n) {
            hres *h = &res[next];
            h->seed = o->seed + next;
            char tp[4200], fp[4200], lp[4200];
            path_of(tp, sizeof tp, dir, "truth", h->seed);
            path_of(fp, sizeof fp, dir, "found", h->seed);
            snprintf(lp, sizeof lp, "%s/log-%llu.txt", dir, (unsigned long long)h->seed);
            gx_profile *truth = NULL;
            gx_msg m;
            gx_msg_clear(&m);
            gx_generate_opts go = o->gen;
            go.translation = only_has(o->only, "tlb");
            if (gx_generate(h->seed, &go, &truth, &m) != GX_OK ||
                gx_profile_save(truth, tp, &m) != GX_OK) {
                gx_profile_free(truth);
                gx_cli_error("holdout: seed %llu: %s", (unsigned long long)h->seed, m.text);
                free(slots);
                return -1;
            }
            gx_profile_free(truth);
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                gx_cli_error("holdout: fork: %s", strerror(errno));
                free(slots);
                return -1;
            }
            if (pid == 0) {
                FILE *lf = freopen(lp, "w", stderr);
                (void)lf;
                if (!freopen("/dev/null", "w", stdout))
                    _exit(6);
                _exit(child_run(tp, fp, h->seed, o->timeout_s, o->only));
            }
            for (int s = 0; s < o->jobs; s++)
                if (slots[s].pid == 0) {
                    slots[s] = (slot){pid, next, now_s()};
                    break;
                }
            running++;
            next++;
        }
        int ws = 0;
        pid_t pid = waitpid(-1, &ws, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int s = 0; s < o->jobs; s++) {
            if (slots[s].pid != pid)
                continue;
            hres *h = &res[slots[s].idx];
            h->seconds = now_s() - slots[s].t0;
            finish(h, dir, ws, o->only);
            slots[s].pid = 0;
            running--;
            done++;
            if (o->progress)
                fprintf(stderr, "holdout: %zu/%zu seed %llu: %d/%d fields exact%s%s (%.1f s)\n",
                        done, n, (unsigned long long)h->seed, h->cmp.n_match, h->cmp.n_rows,
                        h->status ? ", " : "", h->status ? h->why : "", h->seconds);
        }
    }
    free(slots);
    return 0;
}

#define MAX_FIELDS 32

/* Discovery said it was unsure: the field is absent, or its confidence < 0.9. */
static int is_flagged(const gx_compare_row *w, double conf)
{
    return w->verdict == GX_VERDICT_MISSING || (!isnan(conf) && conf < LOW_CONFIDENCE);
}

static int report(const hopts *o, const hres *res)
{
    char names[MAX_FIELDS][48];
    unsigned total[MAX_FIELDS] = {0}, exact[MAX_FIELDS] = {0}, flagged[MAX_FIELDS] = {0};
    int nf = 0;
    size_t n = (size_t)o->count;
    for (size_t i = 0; i < n; i++) {
        for (int r = 0; r < res[i].cmp.n_rows; r++) {
            const gx_compare_row *w = &res[i].cmp.rows[r];
            int k = 0;
            while (k < nf && strcmp(names[k], w->field) != 0)
                k++;
            if (k == nf) {
                if (nf == MAX_FIELDS)
                    continue;
                snprintf(names[nf++], sizeof names[0], "%s", w->field);
            }
            total[k]++;
            if (w->verdict == GX_VERDICT_MATCH)
                exact[k]++;
            else if (is_flagged(w, res[i].conf[r]))
                flagged[k]++;
        }
    }
    printf("holdout: %zu hidden profiles (seeds %llu..%llu, %s generator), bar %.3g\n\n", n,
           (unsigned long long)o->seed, (unsigned long long)(o->seed + n - 1),
           o->gen.mode == GX_GEN_WIDE ? "wide" : "classic", o->bar);
    printf("%-28s %8s %8s %8s %9s\n", "field", "profiles", "exact", "rate", "flagged");
    int pass = 1;
    for (int k = 0; k < nf; k++) {
        double rate = total[k] ? (double)exact[k] / total[k] : 1.0;
        if (rate < o->bar)
            pass = 0;
        printf("%-28s %8u %8u %8.3f %9u%s\n", names[k], total[k], exact[k], rate, flagged[k],
               rate < o->bar ? "  < bar" : "");
    }
    int failures = 0;
    double secs = 0;
    for (size_t i = 0; i < n; i++) {
        failures += res[i].status != 0;
        secs += res[i].seconds;
    }
    printf("\nprofiles whose discovery failed: %d; mean %.1f s per profile\n", failures,
           n ? secs / (double)n : 0.0);
    int header = 0;
    for (size_t i = 0; i < n; i++) {
        for (int r = 0; r < res[i].cmp.n_rows; r++) {
            const gx_compare_row *w = &res[i].cmp.rows[r];
            if (w->verdict == GX_VERDICT_MATCH)
                continue;
            if (!header) {
                printf("\nmisses:\n%-8s %-28s %-26s %-26s %-9s %s\n", "seed", "field", "truth",
                       "found", "verdict", "flagged");
                header = 1;
            }
            int fl = is_flagged(w, res[i].conf[r]);
            char conf[32] = "";
            if (!isnan(res[i].conf[r]))
                snprintf(conf, sizeof conf, " (conf %.3g)", res[i].conf[r]);
            printf("%-8llu %-28s %-26s %-26s %-9s %s%s\n", (unsigned long long)res[i].seed,
                   w->field, w->truth, w->found, gx_verdict_name(w->verdict), fl ? "yes" : "NO",
                   conf);
        }
    }
    printf("\nresult: %s\n", pass ? "every field meets the bar" : "below the bar");
    return pass ? GX_EXIT_OK : GX_EXIT_FAIL;
}

/* 0 parsed, 1 help asked, -1 error (printed). */
static int parse_hopts(int argc, char **argv, hopts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int r, bad = 0;
        if ((r = gx_cli_value(argc, argv, &i, "--count", &v)) != 0)
            bad = r < 0 || gx_cli_u64("--count", v, 1, HOLDOUT_MAX_COUNT, GX_NUM_COUNT, &o->count);
        else if ((r = gx_cli_value(argc, argv, &i, "--seed", &v)) != 0)
            bad = r < 0 || gx_cli_u64("--seed", v, 0, UINT64_MAX, GX_NUM_PLAIN, &o->seed);
        else if ((r = gx_cli_value(argc, argv, &i, "--jobs", &v)) != 0) {
            uint32_t j = 1;
            bad = r < 0 || gx_cli_u32("--jobs", v, 1, HOLDOUT_MAX_JOBS, GX_NUM_PLAIN, &j);
            o->jobs = (int)j;
        }
        else if ((r = gx_cli_value(argc, argv, &i, "--bar", &v)) != 0)
            bad = r < 0 || gx_cli_double("--bar", v, 0, 1, &o->bar);
        else if ((r = gx_cli_value(argc, argv, &i, "--timeout", &v)) != 0)
            bad = r < 0 || gx_cli_u32("--timeout", v, 0, HOLDOUT_MAX_TIMEOUT_S, GX_NUM_PLAIN,
                                      &o->timeout_s);
        else if ((r = gx_cli_value(argc, argv, &i, "--keep", &v)) != 0)
            bad = r < 0 || !(o->keep = v);
        else if ((r = gx_cli_value(argc, argv, &i, "--mode", &v)) != 0)
            bad = r < 0 || parse_mode("holdout", v, &o->gen);
        else if ((r = gx_cli_value(argc, argv, &i, "--only", &v)) != 0)
            bad = r < 0 || !(o->only = v);
        else if (strcmp(a, "--progress") == 0)
            o->progress = 1;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        else {
            gx_cli_error("holdout: unknown argument '%s'", a);
            return -1;
        }
        if (bad)
            return -1;
    }
    for (const char *q = o->only; q && *q;) { /* every name a stage */
        const char *e = strchr(q, ',');
        size_t len = e ? (size_t)(e - q) : strlen(q);
        char name[32];
        if (len == 0 || len >= sizeof name) {
            gx_cli_error("holdout: --only: empty or overlong stage name in '%s'", o->only);
            return -1;
        }
        memcpy(name, q, len);
        name[len] = '\0';
        if (!only_has(gx_discover_stage_names(), name)) {
            gx_cli_error("holdout: --only: unknown stage '%s' (stages: %s)", name,
                         gx_discover_stage_names());
            return -1;
        }
        q += len + (e != NULL);
    }
    if (o->only && !*o->only) {
        gx_cli_error("holdout: --only names no stage");
        return -1;
    }
    if (o->seed > UINT64_MAX - (o->count - 1)) {
        gx_cli_error("holdout: --seed %llu with --count %llu passes 2^64-1 (seeds S..S+N-1)",
                     (unsigned long long)o->seed, (unsigned long long)o->count);
        return -1;
    }
    return 0;
}

int gx_cmd_holdout(int argc, char **argv)
{
    hopts o = {200, 1, 2, 0.98, 600, NULL, 0, {0}, NULL};
    gx_generate_opts_default(&o.gen);
    o.progress = isatty(2);
    int pr = parse_hopts(argc, argv, &o);
    if (pr == 0 && gx_cli_parse_only)
        return GX_EXIT_OK;
    if (pr != 0) {
        FILE *f = pr > 0 ? stdout : stderr;
        fprintf(f, "usage: gpuxray holdout [--count N] [--seed S] [--jobs J] [--bar R]\n"
                   "                       [--timeout SEC] [--keep DIR] [--progress]\n"
                   "                       [--mode classic|wide] [--only STAGE,...]\n"
                   "  discovery on N generated hidden profiles (seeds S..S+N-1) through the\n"
                   "  sim target; exact-recovery rate per field; exit 1 below the bar "
                   "(default 0.98)\n"
                   "  --only: run these stages (and their prerequisites) and compare what\n"
                   "  they measure; with tlb the profiles get hidden translation hierarchies\n");
        return pr > 0 ? GX_EXIT_OK : GX_EXIT_USAGE;
    }
    char dir[4096];
    if (o.keep) {
        if (mkdir(o.keep, 0755) != 0 && errno != EEXIST) {
            gx_cli_error("holdout: cannot create %s: %s", o.keep, strerror(errno));
            return GX_EXIT_USAGE;
        }
        snprintf(dir, sizeof dir, "%s", o.keep);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/gpuxray-holdout-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            gx_cli_error("holdout: cannot create a temporary directory: %s", strerror(errno));
            return GX_EXIT_FAIL;
        }
    }
    hres *res = calloc((size_t)o.count, sizeof *res);
    if (!res) {
        gx_cli_error("holdout: out of memory");
        return GX_EXIT_FAIL;
    }
    int rc = run_all(&o, dir, res) == 0 ? report(&o, res) : GX_EXIT_FAIL;
    if (!o.keep) {
        for (size_t i = 0; i < (size_t)o.count; i++) {
            char p[4200];
            const char *what[] = {"truth", "found"};
            for (int w = 0; w < 2; w++) {
                path_of(p, sizeof p, dir, what[w], o.seed + i);
                unlink(p);
            }
            snprintf(p, sizeof p, "%s/log-%llu.txt", dir, (unsigned long long)(o.seed + i));
            unlink(p);
        }
        rmdir(dir);
    } else {
        printf("files kept in %s\n", dir);
    }
    free(res);
    return rc;
}
