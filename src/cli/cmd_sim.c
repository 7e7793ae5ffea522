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
 *   nothing written. Latencies past the histogram's range are reported.
 * - --threads N and --shard I/N (gpuxray/tsimpar.h): split_run() sets the
 *   split up, write_partial() writes a shard's partial statistics for
 *   `gpuxray merge` (cmd_merge.c), which prints through gx_cli_sim_output
 *   exactly what this command prints. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/clock.h"
#include "gpuxray/parse.h"
#include "gpuxray/profile.h"
#include "gpuxray/trace.h"
#include "gpuxray/tsimpar.h"

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
            "  --quiet             no throughput line on stderr\n"
            "  --threads N         N threads in all (1..%d, default 1): the one that reads\n"
            "                      the trace and places frames, N-1 that run the L2's slice\n"
            "                      groups (with 2, the reading thread also takes the share\n"
            "                      that keeps both busy, as the run goes); statistics\n"
            "                      identical to one thread's. A run the model cannot split\n"
            "                      (noise, translation, far_stream_extra) runs one thread,\n"
            "                      with a note on stderr\n"
            "  --shard I/N         run only shard I of N (0 <= I < N) of the trace's slice\n"
            "                      groups and write PARTIAL statistics (JSON) for\n"
            "                      `gpuxray merge`, which prints what one run prints; each\n"
            "                      shard still reads the whole trace (docs/cli.md has a GNU\n"
            "                      parallel and a Slurm example). A run the model cannot\n"
            "                      split is refused for N > 1 (exit 2)\n",
            GX_TSIM_MAX_THREADS);
}

typedef struct sim_args {
    const char *profile, *trace;
    int json, quiet, top;
    int noise, no_skew;
    int have_seed, have_frames_seed;
    uint64_t seed, frames_seed, phys_bytes;
    const char *out; /* -o: the statistics go there instead of stdout */
    uint32_t threads, shard, shards; /* --threads, --shard I/N (0/0: not given) */
} sim_args;

static int parse_shard(const char *v, sim_args *a); /* below */

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
        } else if ((r = gx_cli_value(argc, argv, &i, "--threads", &v)) != 0) {
            bad = r < 0 ||
                  gx_cli_u32("--threads", v, 1, GX_TSIM_MAX_THREADS, GX_NUM_PLAIN, &a->threads);
        } else if ((r = gx_cli_value(argc, argv, &i, "--shard", &v)) != 0) {
            bad = r < 0 || parse_shard(v, a);
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
                      double *t_read, uint64_t *digest, gx_msg *msg)
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
        if (digest) /* a shard: the trace's identity for the merge */
            gx_tsim_digest(digest, buf, k);
        gx_tsim_run(sim, buf, k);
        *n += k;
    }
    free(buf);
    gx_trace_reader_close(rd);
    return rc;
}

/* Pages sharing frames make every hit rate wrong: refuse such a run. */
static int check_frames(const char *cmd, const gx_tsim *sim, uint64_t pb)
{
    uint64_t pages, frames;
    gx_tsim_page_usage(sim, &pages, &frames);
    if (pages <= frames)
        return GX_EXIT_OK;
    gx_cli_error("%s: the trace touches %llu pages of %llu bytes but the physical memory "
                 "(--phys-bytes) holds only %llu frames: pages would share frames and the "
                 "statistics would be wrong; give --phys-bytes %llu or more",
                 cmd, (unsigned long long)pages, (unsigned long long)pb,
                 (unsigned long long)frames,
                 pages > UINT64_MAX / pb ? (unsigned long long)UINT64_MAX
                                         : (unsigned long long)(pages * pb));
    return GX_EXIT_USAGE;
}

/* Latencies past the histogram's last bin make percentiles lower bounds:
 * say so (stderr; and in the text report). */
static void note_histogram(const char *cmd, const gx_tsim *sim, FILE *text)
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
    fprintf(stderr, "gpuxray %s: warning: %s\n", cmd, line);
    if (text)
        fprintf(text, "note     %s\n", line);
}

/* Render the statistics in memory, check them, then write them (stdout or
 * -o FILE) through gx_out: a failed check writes nothing. */
static int write_stats(const char *cmd, const gx_tsim *sim, int json, int top,
                       const char *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        gx_cli_error("%s: out of memory", cmd);
        return GX_EXIT_FAIL;
    }
    int rc = json ? gx_tsim_write_json(sim, mem) : gx_tsim_write_text(sim, mem, top);
    note_histogram(cmd, sim, json ? NULL : mem);
    int ex = GX_EXIT_OK;
    if (fclose(mem) != 0 || rc != 0 || !buf) {
        gx_cli_error("%s: out of memory formatting the statistics", cmd);
        ex = GX_EXIT_FAIL;
    }
    if (!ex)
        ex = gx_cli_emit(cmd, out ? out : "-", buf, len, json);
    free(buf);
    return ex;
}

int gx_cli_sim_output(const char *cmd, const gx_tsim *sim, uint64_t page_bytes, int json,
                      int top, const char *out)
{
    int ex = check_frames(cmd, sim, page_bytes);
    return ex ? ex : write_stats(cmd, sim, json, top, out);
}

/* ---- --threads and --shard (gpuxray/tsimpar.h) ---- */

static int parse_shard(const char *v, sim_args *a)
{
    const char *slash = strchr(v, '/');
    char first[32];
    if (!slash || (size_t)(slash - v) >= sizeof first) {
        gx_cli_error("sim: --shard '%s': I/N expected (shard I of N, 0 <= I < N)", v);
        return GX_EXIT_USAGE;
    }
    memcpy(first, v, (size_t)(slash - v));
    first[slash - v] = 0;
    if (gx_cli_u32("--shard (N)", slash + 1, 1, GX_TSIM_MAX_SHARDS, GX_NUM_PLAIN, &a->shards) ||
        gx_cli_u32("--shard (I)", first, 0, a->shards - 1, GX_NUM_PLAIN, &a->shard))
        return GX_EXIT_USAGE;
    return GX_EXIT_OK;
}

/* FNV-1a of the profile's bytes: the merge's check that every shard ran the
 * same profile. */
#define PROFILE_DIGEST_INIT 0xcbf29ce484222325ULL
#define PROFILE_DIGEST_MUL 0x100000001b3ULL

static uint64_t profile_digest(const char *path)
{
    uint64_t h = PROFILE_DIGEST_INIT;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int c;
    while ((c = getc(f)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)c) * PROFILE_DIGEST_MUL;
    fclose(f);
    return h;
}

/* Split the run as asked, or say why it cannot be: a shard of N > 1 is
 * refused (exit 2), threads fall back to one with a note. */
static int split_run(gx_tsim *sim, const gx_profile *p, const sim_args *a)
{
    uint32_t shards = a->shards ? a->shards : 1;
    if (a->threads <= 1 && shards <= 1)
        return GX_EXIT_OK;
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    cfg.noise = a->noise; /* what the blocker looks at */
    const char *why = gx_tsim_par_blocker(p, &cfg);
    if (why && shards > 1) {
        gx_cli_error("sim: --shard %u/%u: this run cannot be split into shards: %s; run it "
                     "whole (--shard 0/1, or without --shard)",
                     a->shard, shards, why);
        return GX_EXIT_USAGE;
    }
    if (why) {
        fprintf(stderr, "gpuxray sim: note: --threads %u runs on one thread: %s\n", a->threads,
                why);
        return GX_EXIT_OK;
    }
    gx_msg msg;
    gx_msg_clear(&msg);
    int rc = gx_tsim_par_start(sim, p, a->threads, a->shard, shards, &msg);
    if (rc) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    if (a->threads > 1 && gx_tsim_par_threads(sim) < a->threads - 1)
        fprintf(stderr, "gpuxray sim: note: --threads %u: %u worker thread%s (one per slice "
                        "group of this shard at most)\n",
                a->threads, gx_tsim_par_threads(sim), gx_tsim_par_threads(sim) == 1 ? "" : "s");
    return GX_EXIT_OK;
}

/* A shard's partial statistics (always JSON) to -o or stdout. */
static int write_partial(const gx_tsim *sim, const sim_args *a, uint64_t digest, uint64_t n)
{
    gx_tsim_ident id = {profile_digest(a->profile), digest, n, a->shard, a->shards};
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        gx_cli_error("sim: out of memory");
        return GX_EXIT_FAIL;
    }
    gx_msg msg;
    gx_msg_clear(&msg);
    int rc = gx_tsim_write_partial(sim, &id, mem, &msg);
    int ex = GX_EXIT_OK;
    if (fclose(mem) != 0 || rc != 0 || !buf) {
        gx_cli_error("sim: %s", rc ? msg.text : "out of memory formatting the statistics");
        ex = GX_EXIT_FAIL;
    }
    if (!ex)
        ex = gx_cli_emit("sim", a->out ? a->out : "-", buf, len, 1);
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
    a.threads = 1;
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
    ex = split_run(sim, p, &a);
    if (ex) {
        gx_tsim_free(sim);
        gx_profile_free(p);
        return ex;
    }
    double t0 = gx_monotonic_seconds(), t_read = 0;
    uint64_t n = 0, digest = 0;
    rc = run_stream(sim, a.trace, p->device.sm_count, &n, &t_read, a.shards ? &digest : NULL,
                    &msg);
    gx_tsim_flush(sim);
    if (!rc)
        rc = gx_tsim_par_finish(sim, &msg);
    double t1 = gx_monotonic_seconds();
    if (rc) {
        /* a malformed record mid-stream: nothing printed as if complete */
        gx_cli_error("sim: %s", msg.text);
        ex = rc == GX_ENOMEM ? GX_EXIT_FAIL : GX_EXIT_USAGE;
    } else {
        ex = a.shards ? write_partial(sim, &a, digest, n)
                      : gx_cli_sim_output("sim", sim, p->memory.page_bytes, a.json, a.top, a.out);
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
