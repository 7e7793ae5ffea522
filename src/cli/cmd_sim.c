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
 * - stdout (or -o FILE) carries only the deterministic statistics
 *   (golden-testable); the measured throughput goes to stderr. The
 *   statistics are rendered in memory first: JSON that does not parse back
 *   (a non-finite number) is refused, and a trace whose pages outnumber the
 *   physical frames (pages would share frames) is refused, exit 2, with
 *   nothing written. Latencies past the histogram's range are reported. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/clock.h"
#include "gpuxray/parse.h"
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
            "  --top K             busiest / idlest slices listed in text output (0..64,\n"
            "                      default 4)\n"
            "  -o FILE             the statistics to FILE instead of stdout ('-' = stdout)\n"
            "  --quiet             no throughput line on stderr\n");
}

typedef struct sim_args {
    const char *profile, *trace;
    int json, quiet, top;
    int noise, no_skew;
    int have_seed, have_frames_seed;
    uint64_t seed, frames_seed, phys_bytes;
    const char *out; /* -o: the statistics go there instead of stdout */
} sim_args;

/* Bounds of --top: the text report lists at most this many slices each way. */
#define SIM_MAX_TOP 64

static int parse_args(int argc, char **argv, sim_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = NULL;
        int r, bad = 0;
        if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if (!strcmp(o, "--noise")) {
            a->noise = 1;
        } else if (!strcmp(o, "--no-skew")) {
            a->no_skew = 1;
        } else if (!strcmp(o, "--quiet")) {
            a->quiet = 1;
        } else if ((r = gx_cli_value(argc, argv, &i, "--profile", &v)) != 0) {
            bad = r < 0 || !(a->profile = v);
        } else if ((r = gx_cli_value(argc, argv, &i, "--trace", &v)) != 0) {
            bad = r < 0 || !(a->trace = v);
        } else if ((r = gx_cli_value(argc, argv, &i, "-o", &v)) != 0 ||
                   (r = gx_cli_value(argc, argv, &i, "--output", &v)) != 0) {
            bad = r < 0 || !(a->out = v);
        } else if ((r = gx_cli_value(argc, argv, &i, "--seed", &v)) != 0) {
            bad = r < 0 || gx_cli_u64("--seed", v, 0, UINT64_MAX, GX_NUM_PLAIN, &a->seed);
            a->have_seed = 1;
        } else if ((r = gx_cli_value(argc, argv, &i, "--frames-seed", &v)) != 0) {
            bad = r < 0 ||
                  gx_cli_u64("--frames-seed", v, 0, UINT64_MAX, GX_NUM_PLAIN, &a->frames_seed);
            a->have_frames_seed = 1;
        } else if ((r = gx_cli_value(argc, argv, &i, "--phys-bytes", &v)) != 0) {
            bad = r < 0 || gx_cli_u64("--phys-bytes", v, 1, UINT64_MAX, GX_NUM_SIZE,
                                      &a->phys_bytes);
        } else if ((r = gx_cli_value(argc, argv, &i, "--top", &v)) != 0) {
            uint32_t k = 0;
            bad = r < 0 || gx_cli_u32("--top", v, 0, SIM_MAX_TOP, GX_NUM_PLAIN, &k);
            a->top = (int)k;
        } else {
            gx_cli_error("sim: unknown argument '%s' (try gpuxray sim --help)", o);
            return GX_EXIT_USAGE;
        }
        if (bad)
            return GX_EXIT_USAGE;
    }
    if (!a->profile || !a->trace) {
        gx_cli_error("sim: --profile P.json and --trace FILE|- are required");
        return GX_EXIT_USAGE;
    }
    return GX_EXIT_OK;
}

/* run_stream's loop over column batches. */
static int run_stream_cols(gx_tsim *sim, gx_trace_reader *rd, uint64_t *n, double *t_read,
                           gx_msg *msg)
{
    gx_trace_cols c;
    if (gx_trace_cols_init(&c, SIM_BATCH) != GX_OK)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    c.merge_bytes = gx_tsim_merge_bytes(sim);
    int rc;
    for (;;) {
        double t = gx_monotonic_seconds();
        rc = gx_trace_reader_next_cols(rd, &c, msg);
        *t_read += gx_monotonic_seconds() - t;
        if (rc || !c.n)
            break;
        gx_tsim_run_cols(sim, &c);
        *n += c.records;
    }
    gx_trace_cols_free(&c);
    return rc;
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
    if (gx_tsim_takes_cols(sim)) { /* translation off: columns (docs/performance.md) */
        rc = run_stream_cols(sim, rd, n, t_read, msg);
        gx_trace_reader_close(rd);
        return rc;
    }
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

/* Pages sharing frames make every hit rate wrong: refuse such a run. */
static int check_frames(const gx_tsim *sim, const gx_profile *p)
{
    uint64_t pages, frames;
    gx_tsim_page_usage(sim, &pages, &frames);
    if (pages <= frames)
        return GX_EXIT_OK;
    uint64_t pb = p->memory.page_bytes;
    gx_cli_error("sim: the trace touches %llu pages of %llu bytes but the physical memory "
                 "(--phys-bytes) holds only %llu frames: pages would share frames and the "
                 "statistics would be wrong; give --phys-bytes %llu or more",
                 (unsigned long long)pages, (unsigned long long)pb,
                 (unsigned long long)frames,
                 pages > UINT64_MAX / pb ? (unsigned long long)UINT64_MAX
                                         : (unsigned long long)(pages * pb));
    return GX_EXIT_USAGE;
}

/* Latencies past the histogram's last bin make percentiles lower bounds:
 * say so (stderr; and in the text report). */
static void note_histogram(const gx_tsim *sim, FILE *text)
{
    gx_tsim_stats st;
    gx_tsim_get_stats(sim, &st);
    uint64_t over = st.lat_hist ? st.lat_hist[GX_TSIM_LAT_BINS - 1] : 0;
    if (!over || !(st.max_cycles >= GX_TSIM_LAT_BINS - 1))
        return;
    char line[320];
    snprintf(line, sizeof line,
             "%llu of %llu accesses (%.2f%%) took %d cycles or more, past the latency "
             "histogram's range: percentiles of %d are lower bounds (max %.1f cycles is exact)",
             (unsigned long long)over, (unsigned long long)st.accesses,
             st.accesses ? 100.0 * (double)over / (double)st.accesses : 0.0,
             GX_TSIM_LAT_BINS - 1, GX_TSIM_LAT_BINS - 1, st.max_cycles);
    fprintf(stderr, "gpuxray sim: warning: %s\n", line);
    if (text)
        fprintf(text, "note     %s\n", line);
}

/* Render the statistics in memory, check them, then write them (stdout or
 * -o FILE) through gx_out: a failed check writes nothing. */
static int write_stats(const gx_tsim *sim, const sim_args *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        gx_cli_error("sim: out of memory");
        return GX_EXIT_FAIL;
    }
    int rc = a->json ? gx_tsim_write_json(sim, mem) : gx_tsim_write_text(sim, mem, a->top);
    note_histogram(sim, a->json ? NULL : mem);
    int ex = GX_EXIT_OK;
    if (fclose(mem) != 0 || rc != 0 || !buf) {
        gx_cli_error("sim: out of memory formatting the statistics");
        ex = GX_EXIT_FAIL;
    }
    if (!ex)
        ex = gx_cli_emit("sim", a->out ? a->out : "-", buf, len, a->json);
    free(buf);
    return ex;
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
    if (ex || gx_cli_parse_only)
        return ex;
    if (a.out && gx_cli_check_output("sim", a.out))
        return GX_EXIT_USAGE;
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
        ex = check_frames(sim, p);
        if (!ex)
            ex = write_stats(sim, &a);
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
