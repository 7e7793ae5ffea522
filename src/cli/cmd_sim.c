/* cmd_sim.c - `gpuxray sim`: run a trace through the model of a profile and
 * print per-level, per-slice and latency statistics (text or --json).
 *
 * Notes:
 * - The profile is loaded and validated first (a bad one exits 2 before any
 *   trace is read), then the trace is STREAMED through the model in batches
 *   (constant memory for any length). A malformed record mid-stream (or an
 *   SM at or above device.sm_count) stops the run: the message names the
 *   line or record, the exit is 2, and no statistics are printed.
 * - Trace addresses are virtual; see include/gpuxray/trace.h (gx_tsim) for
 *   the placement and the timing rules.
 * - stdout carries only the deterministic statistics (golden-testable); the
 *   measured throughput goes to stderr. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/clock.h"
#include "gpuxray/profile.h"
#include "gpuxray/trace.h"

/* Records per reader call: 8192 x 40 B = 320 KiB, within the host's L2
 * next to the model's hot state (measured in docs/performance.md). */
#define SIM_BATCH 8192

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuxray sim --profile P.json --trace FILE|- [options]\n"
            "\n"
            "Runs every access of the trace (text or binary, told apart by itself) through\n"
            "the L2 model of the profile. Trace addresses are VIRTUAL: each page\n"
            "(memory.page_bytes) gets a physical frame from a seeded random placement\n"
            "(sim.frames_seed). An access touching k sectors makes k L2 accesses; its\n"
            "latency is the largest. Total cycles = the sum of the accesses' latencies.\n"
            "With a tlb section in the profile, each warp instruction is first translated\n"
            "(coalescer, TLB levels, page-table walker; MAP and INV records apply) and its\n"
            "translation cycles add to its latency (docs/translation.md).\n"
            "\n"
            "options:\n"
            "  --json              statistics as JSON (stable keys)\n"
            "  --noise             apply the profile's sim.noise (default off)\n"
            "  --no-skew           no per-(SM, slice) latency skew (default on)\n"
            "  --seed N            noise and random-policy seed (default 1)\n"
            "  --frames-seed N     placement seed (default: the profile's sim.frames_seed)\n"
            "  --phys-bytes SIZE   physical memory the frames are drawn from (default 64GiB)\n"
            "  --top K             busiest / idlest slices listed in text output (default 4)\n"
            "  --quiet             no throughput line on stderr\n");
}

typedef struct sim_args {
    const char *profile, *trace;
    int json, quiet, top;
    int noise, no_skew;
    int have_seed, have_frames_seed;
    unsigned long long seed, frames_seed, phys_bytes;
} sim_args;

static int need_value(int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        gx_cli_error("sim: %s needs a value", argv[i]);
        return 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, sim_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int num = 0;
        if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if (!strcmp(o, "--noise")) {
            a->noise = 1;
        } else if (!strcmp(o, "--no-skew")) {
            a->no_skew = 1;
        } else if (!strcmp(o, "--quiet")) {
            a->quiet = 1;
        } else if (!strcmp(o, "--profile") || !strcmp(o, "--trace")) {
            if (need_value(argc, argv, i))
                return GX_EXIT_USAGE;
            *(o[2] == 'p' ? &a->profile : &a->trace) = argv[++i];
        } else if ((num = !strcmp(o, "--seed")) || !strcmp(o, "--frames-seed")) {
            if (need_value(argc, argv, i))
                return GX_EXIT_USAGE;
            unsigned long long *dst = num ? &a->seed : &a->frames_seed;
            if (gx_parse_count(argv[++i], dst)) {
                gx_cli_error("sim: %s '%s': a number expected", o, argv[i]);
                return GX_EXIT_USAGE;
            }
            *(num ? &a->have_seed : &a->have_frames_seed) = 1;
        } else if (!strcmp(o, "--phys-bytes")) {
            if (need_value(argc, argv, i))
                return GX_EXIT_USAGE;
            if (gx_parse_size(argv[++i], &a->phys_bytes) || !a->phys_bytes) {
                gx_cli_error("sim: --phys-bytes '%s': a size expected (e.g. 64GiB)", argv[i]);
                return GX_EXIT_USAGE;
            }
        } else if (!strcmp(o, "--top")) {
            unsigned long long k;
            if (need_value(argc, argv, i))
                return GX_EXIT_USAGE;
            if (gx_parse_count(argv[++i], &k) || k > 64) {
                gx_cli_error("sim: --top '%s': 0..64 expected", argv[i]);
                return GX_EXIT_USAGE;
            }
            a->top = (int)k;
        } else {
            gx_cli_error("sim: unknown argument '%s' (try gpuxray sim --help)", o);
            return GX_EXIT_USAGE;
        }
    }
    if (!a->profile || !a->trace) {
        gx_cli_error("sim: --profile P.json and --trace FILE|- are required");
        return GX_EXIT_USAGE;
    }
    return GX_EXIT_OK;
}

/* The trace streamed through the model in batches: memory stays the
 * reader's buffer plus one batch whatever the trace's length. */
static int run_stream(gx_tsim *sim, const char *path, uint32_t sm_limit, uint64_t *n,
                      double *t_read, gx_msg *msg)
{
    gx_trace_reader *rd = NULL;
    int rc = gx_trace_reader_open(path, sm_limit, &rd, msg);
    if (rc)
        return rc;
    gx_trace_rec *buf = malloc(SIM_BATCH * sizeof *buf);
    if (!buf) {
        gx_trace_reader_close(rd);
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    }
    for (;;) {
        size_t k;
        double t = gx_monotonic_seconds();
        rc = gx_trace_reader_next(rd, buf, SIM_BATCH, &k, msg);
        *t_read += gx_monotonic_seconds() - t;
        if (rc || !k)
            break;
        gx_tsim_run(sim, buf, k);
        *n += k;
    }
    free(buf);
    gx_trace_reader_close(rd);
    return rc;
}

int gx_cmd_sim(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        }
    sim_args a;
    memset(&a, 0, sizeof a);
    a.top = 4;
    int ex = parse_args(argc, argv, &a);
    if (ex)
        return ex;
    gx_msg msg;
    gx_msg_clear(&msg);
    gx_profile *p = NULL;
    int rc = gx_profile_load(a.profile, &p, &msg);
    if (rc) {
        gx_cli_error("sim: %s", msg.text);
        return GX_EXIT_USAGE;
    }
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    cfg.noise = a.noise;
    cfg.skew = !a.no_skew;
    if (a.have_seed)
        cfg.seed = a.seed;
    if (a.have_frames_seed)
        cfg.frames_seed = a.frames_seed;
    if (a.phys_bytes)
        cfg.phys_bytes = a.phys_bytes;
    gx_tsim *sim = NULL;
    rc = gx_tsim_new(p, &cfg, &sim, &msg);
    if (rc) {
        gx_cli_error("sim: %s: %s", a.profile, msg.text);
        gx_profile_free(p);
        return GX_EXIT_USAGE;
    }
    double t0 = gx_monotonic_seconds(), t_read = 0;
    uint64_t n = 0;
    rc = run_stream(sim, a.trace, p->device.sm_count, &n, &t_read, &msg);
    gx_tsim_flush(sim);
    double t1 = gx_monotonic_seconds();
    if (rc) {
        /* a malformed record mid-stream: nothing printed as if complete */
        gx_cli_error("sim: %s", msg.text);
        ex = rc == GX_ENOMEM ? GX_EXIT_FAIL : GX_EXIT_USAGE;
    } else {
        rc = a.json ? gx_tsim_write_json(sim, stdout) : gx_tsim_write_text(sim, stdout, a.top);
        if (fflush(stdout) || rc) {
            gx_cli_error("sim: write error on standard output");
            ex = GX_EXIT_FAIL;
        }
        if (!a.quiet)
            fprintf(stderr,
                    "gpuxray sim: %llu records in %.3f s (reading %.3f s) = %.1f M accesses/s\n",
                    (unsigned long long)n, t1 - t0, t_read,
                    t1 > t0 ? (double)n / (t1 - t0) / 1e6 : 0.0);
    }
    gx_tsim_free(sim);
    gx_profile_free(p);
    return ex;
}
