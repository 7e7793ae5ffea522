/* cmd_merge.c - `gpuxray merge PART.json ...`: add up the partial
 * statistics of every shard of one `gpuxray sim --shard I/N` run and print
 * exactly what `gpuxray sim` prints for the whole trace (text, or --json).
 *
 * Notes: the merge itself is library work (gx_tsim_merge, tsimpar.h); this
 * file reads the files and prints through cmd_sim.c's gx_cli_sim_output.
 * Bad inputs (unreadable, malformed, of different runs, a shard missing or
 * given twice) exit 2 with a message naming the file and the problem. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/parse.h"
#include "gpuxray/tsimpar.h"

/* A partial's size at most: the split-access list of a huge trace stays far
 * below it; anything bigger is not a partial. */
#define MERGE_MAX_FILE_BYTES (1ULL << 32)
/* The text report lists at most this many slices each way (as sim --top). */
#define MERGE_MAX_TOP 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuxray merge PART.json ... [--json] [-o OUT|-] [--top K]\n"
            "\n"
            "Adds up the partial statistics that `gpuxray sim --shard I/N` wrote for every\n"
            "shard I = 0..N-1 of one run (the same profile, trace and options) and prints\n"
            "exactly what `gpuxray sim` prints for the whole trace in one process. Partials\n"
            "of different runs, a shard missing or given twice, or a malformed file are\n"
            "refused (exit 2). docs/cli.md shows a GNU parallel and a Slurm job array run.\n"
            "\n"
            "options:\n"
            "  --json      the statistics as JSON (as sim --json)\n"
            "  --top K     busiest / idlest slices listed in text output (0..64, default 4)\n"
            "  -o FILE     the statistics to FILE instead of stdout ('-' = stdout)\n");
}

/* The whole file at path into *buf (NUL-terminated). */
static int read_all(const char *path, char **buf)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        gx_cli_error("merge: %s: cannot read: %s", path, strerror(errno));
        return GX_EXIT_USAGE;
    }
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (len + 1 == cap) {
            char *nb = cap < MERGE_MAX_FILE_BYTES ? realloc(b, cap * 2) : NULL;
            if (!nb)
                free(b); /* too large, or out of memory */
            b = nb;
            cap *= 2;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!b || err) {
        free(b);
        gx_cli_error("merge: %s: %s", path, err ? "read error" : "too large for a partial");
        return GX_EXIT_USAGE;
    }
    b[len] = 0;
    *buf = b;
    return GX_EXIT_OK;
}

typedef struct merge_args {
    const char **parts;
    uint32_t n;
    int json, top;
    const char *out;
} merge_args;

static int parse_args(int argc, char **argv, merge_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = NULL;
        int r, bad = 0;
        if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if ((r = gx_cli_value(argc, argv, &i, "-o", &v)) != 0 ||
                   (r = gx_cli_value(argc, argv, &i, "--output", &v)) != 0) {
            bad = r < 0 || !(a->out = v);
        } else if ((r = gx_cli_value(argc, argv, &i, "--top", &v)) != 0) {
            uint32_t k = 0;
            bad = r < 0 || gx_cli_u32("--top", v, 0, MERGE_MAX_TOP, GX_NUM_PLAIN, &k);
            a->top = (int)k;
        } else if (o[0] == '-' && o[1]) {
            gx_cli_error("merge: unknown option '%s' (try gpuxray merge --help)", o);
            return GX_EXIT_USAGE;
        } else {
            a->parts[a->n++] = o;
        }
        if (bad)
            return GX_EXIT_USAGE;
    }
    if (!a->n) {
        gx_cli_error("merge: the partial statistics of every shard are required "
                     "(gpuxray merge PART.json ...)");
        return GX_EXIT_USAGE;
    }
    return GX_EXIT_OK;
}

static int merge_files(const merge_args *a)
{
    char **texts = calloc(a->n, sizeof *texts);
    if (!texts) {
        gx_cli_error("merge: out of memory");
        return GX_EXIT_FAIL;
    }
    int ex = GX_EXIT_OK;
    for (uint32_t i = 0; i < a->n && !ex; i++)
        ex = read_all(a->parts[i], &texts[i]);
    gx_tsim *sim = NULL;
    if (!ex) {
        gx_msg msg;
        gx_msg_clear(&msg);
        int rc = gx_tsim_merge((const char *const *)texts, a->parts, a->n, &sim, &msg);
        if (rc) {
            gx_cli_error("merge: %s", msg.text);
            ex = rc == GX_ENOMEM ? GX_EXIT_FAIL : GX_EXIT_USAGE;
        }
    }
    if (!ex)
        ex = gx_cli_sim_output("merge", sim, gx_tsim_page_bytes(sim), a->json, a->top, a->out);
    gx_tsim_free(sim);
    for (uint32_t i = 0; i < a->n; i++)
        free(texts[i]);
    free(texts);
    return ex;
}

int gx_cmd_merge(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        }
    merge_args a;
    memset(&a, 0, sizeof a);
    a.top = 4;
    a.parts = calloc((size_t)(argc > 0 ? argc : 1), sizeof *a.parts);
    if (!a.parts) {
        gx_cli_error("merge: out of memory");
        return GX_EXIT_FAIL;
    }
    int ex = parse_args(argc, argv, &a);
    if (!ex && !gx_cli_parse_only && a.out && gx_cli_check_output("merge", a.out))
        ex = GX_EXIT_USAGE;
    if (!ex && !gx_cli_parse_only)
        ex = merge_files(&a);
    free(a.parts);
    return ex;
}
