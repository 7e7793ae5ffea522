/* cmd_trace.c - `gpuxray trace gen|convert`: synthetic traces and format
 * conversion (formats in include/gpuxray/trace.h).
 *
 * Notes: output goes through gx_out (outfile.h): checked before the work,
 * a temporary file renamed over a regular -o FILE (nothing half-written),
 * devices and FIFOs written straight. Format: --text or --binary; otherwise
 * binary for a file and text for `-o -` (standard output). Numbers: the
 * strict parser (parse.h); every option is parsed before any work. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/parse.h"
#include "gpuxray/trace.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuxray trace gen stream|stride|random|tile|pages [options] -o FILE\n"
            "       gpuxray trace convert IN [--text|--binary] -o FILE\n"
            "\n"
            "gen options (sizes take 64MiB, 4k, 0x1000; counts take 20M, 2k):\n"
            "  --footprint SIZE   bytes covered by stream/stride/random (default 64MiB)\n"
            "  --count N          accesses (default: one pass over the footprint for stream\n"
            "                     (footprint/size) and stride (footprint/stride), one pass\n"
            "                     over the matrix for tile, 1M for random)\n"
            "  --size BYTES       bytes per access, 1..%d (default 32: one sector)\n"
            "  --stride BYTES     stride pattern step (default 128)\n"
            "  --base ADDR        first virtual address (default 0)\n"
            "  --sms N            SMs the accesses are spread over (default 1)\n"
            "  --sm-assign roundrobin|block|random   (default roundrobin: access i on SM i%%N;\n"
            "                     block: N contiguous chunks; random: uniform, seeded)\n"
            "  --rows R --cols C --elem BYTES --tile T   tile: an R x C row-major matrix of\n"
            "                     ELEM-byte elements visited T x T block by block\n"
            "                     (default 1024 x 1024 x 4 B, T = 32)\n"
            "  pages: --count N pages of --page-size SIZE (default 4KiB) from --base, MAP\n"
            "                     records for the mapped pages, then one access per mapped\n"
            "                     page in --order sequential|strided|random (default\n"
            "                     sequential; strided steps --stride S pages, default 16);\n"
            "                     --unmapped-every K leaves every K-th page unmapped\n"
            "  --write-ratio F    fraction of writes (default 0)\n"
            "  --atomic-ratio F   fraction of atomics (default 0)\n"
            "  --seed S           seed (default 1); the same seed reproduces the trace\n"
            "  --text | --binary | --binary-v1   output format (default: binary version 2\n"
            "                     to a file, text to -o -; version 1 is the old GXTRACE1)\n"
            "  -o FILE            output file, '-' for standard output (checked before the\n"
            "                     work starts; gpuxray help output)\n"
            "\n"
            "convert: reads IN ('-' = standard input), validates every record and writes\n"
            "it in the format --text / --binary / --binary-v1 names (default as for gen).\n"
            "\n"
            "convert reads text, binary (version 1 or 2) and Accel-Sim traces, streaming.\n"
            "Text format: one record a line, 'SM OP ADDRESS [SIZE] [KEY=VALUE ...]': OP in\n"
            "R W A (global), SR SW (shared), MAP, INV; ADDRESS hexadecimal (0x optional);\n"
            "SIZE decimal bytes (default %d); keys cycle= warp= lane= bytes= page=; '#'\n"
            "starts a comment. Binary version 2: \"%s\", delta-encoded records, an end\n"
            "marker (docs/trace-format.md).\n",
            GX_TRACE_MAX_SIZE, GX_TRACE_DEFAULT_SIZE, GX_TRACE_MAGIC2);
}

typedef struct out_opts {
    const char *path;
    int fmt; /* -1 unset */
} out_opts;

/* Common output options; 1 = consumed, 0 = not this, <0 = error (printed). */
static int out_option(int argc, char **argv, int *i, out_opts *o)
{
    const char *v = NULL;
    int r;
    if (!strcmp(argv[*i], "--text")) {
        o->fmt = GX_TRACE_TEXT;
        return 1;
    }
    if (!strcmp(argv[*i], "--binary")) {
        o->fmt = GX_TRACE_BINARY;
        return 1;
    }
    if (!strcmp(argv[*i], "--binary-v1")) {
        o->fmt = GX_TRACE_BINARY1;
        return 1;
    }
    if ((r = gx_cli_value(argc, argv, i, "-o", &v)) != 0 ||
        (r = gx_cli_value(argc, argv, i, "--output", &v)) != 0) {
        o->path = v;
        return r;
    }
    return 0;
}

static gx_trace_format out_format(const out_opts *o)
{
    if (o->fmt >= 0)
        return (gx_trace_format)o->fmt;
    return strcmp(o->path, "-") ? GX_TRACE_BINARY : GX_TRACE_TEXT;
}

/* One gen option at argv[*i]; 0 ok, else exit code (error printed). */
static int gen_option(int argc, char **argv, int *i, gx_gen_cfg *c)
{
    const char *a = argv[*i];
    const char *v = NULL;
    int r = 0;
#define OPT(name) ((r = gx_cli_value(argc, argv, i, name, &v)) != 0)
#define U64(lo, fl, dst) (r < 0 ? GX_EXIT_USAGE : gx_cli_u64(a, v, lo, UINT64_MAX, fl, dst))
#define U32(lo, hi, fl, dst) (r < 0 ? GX_EXIT_USAGE : gx_cli_u32(a, v, lo, hi, fl, dst))
#define RATIO(dst) (r < 0 ? GX_EXIT_USAGE : gx_cli_double(a, v, 0, 1, dst))
    if (OPT("--footprint"))
        return U64(1, GX_NUM_SIZE, &c->footprint_bytes);
    if (OPT("--count"))
        return U64(1, GX_NUM_COUNT, &c->count);
    if (OPT("--size"))
        return U32(1, GX_TRACE_MAX_SIZE, GX_NUM_SIZE, &c->size_bytes);
    if (OPT("--stride")) { /* bytes for stride, pages for pages */
        int rc = U64(1, GX_NUM_SIZE, &c->stride_bytes);
        c->page_stride = c->stride_bytes;
        return rc;
    }
    if (OPT("--page-size"))
        return U64(1, GX_NUM_SIZE, &c->page_bytes);
    if (OPT("--unmapped-every"))
        return U64(0, GX_NUM_COUNT, &c->unmapped_every);
    if (OPT("--order")) {
        if (r < 0)
            return GX_EXIT_USAGE;
        if (gx_page_order_parse(v, &c->page_order) == 0)
            return GX_EXIT_OK;
        gx_cli_error("--order: %s is not sequential, strided or random", v);
        return GX_EXIT_USAGE;
    }
    if (OPT("--base"))
        return U64(0, GX_NUM_SIZE, &c->base);
    if (OPT("--sms"))
        return U32(1, UINT32_MAX, GX_NUM_COUNT, &c->sms);
    if (OPT("--seed"))
        return U64(0, GX_NUM_PLAIN, &c->seed);
    if (OPT("--rows"))
        return U64(1, GX_NUM_COUNT, &c->rows);
    if (OPT("--cols"))
        return U64(1, GX_NUM_COUNT, &c->cols);
    if (OPT("--elem"))
        return U32(1, GX_TRACE_MAX_SIZE, GX_NUM_SIZE, &c->elem_bytes);
    if (OPT("--tile"))
        return U32(1, UINT32_MAX, GX_NUM_COUNT, &c->tile);
    if (OPT("--write-ratio"))
        return RATIO(&c->write_ratio);
    if (OPT("--atomic-ratio"))
        return RATIO(&c->atomic_ratio);
    if (OPT("--sm-assign")) {
        if (r < 0)
            return GX_EXIT_USAGE;
        if (gx_sm_assign_parse(v, &c->sm_assign) == 0)
            return GX_EXIT_OK;
        gx_cli_error("--sm-assign: %s is not roundrobin, block or random", v);
        return GX_EXIT_USAGE;
    }
#undef OPT
#undef U64
#undef U32
#undef RATIO
    gx_cli_error("trace gen: unknown option '%s' (try gpuxray trace --help)", a);
    return GX_EXIT_USAGE;
}

static int cmd_gen(int argc, char **argv)
{
    if (argc < 2) {
        gx_cli_error("trace gen: a pattern is required (stream, stride, random, tile or pages)");
        return GX_EXIT_USAGE;
    }
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    if (gx_gen_pattern_parse(argv[1], &c.pattern)) {
        gx_cli_error("trace gen: unknown pattern '%s' (stream, stride, random, tile or pages)", argv[1]);
        return GX_EXIT_USAGE;
    }
    out_opts o = {NULL, -1};
    for (int i = 2; i < argc; i++) {
        int r = out_option(argc, argv, &i, &o);
        if (r < 0)
            return GX_EXIT_USAGE;
        if (r)
            continue;
        int rc = gen_option(argc, argv, &i, &c);
        if (rc)
            return rc;
    }
    if (!o.path) {
        gx_cli_error("trace gen: -o FILE is required ('-' for standard output)");
        return GX_EXIT_USAGE;
    }
    gx_msg msg;
    gx_msg_clear(&msg);
    if (gx_gen_check(&c, &msg) != GX_OK) {
        gx_cli_error("trace gen: %s", msg.text);
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    if (gx_cli_check_output("trace gen", o.path))
        return GX_EXIT_USAGE;
    int rc = gx_gen_save(&c, o.path, out_format(&o), &msg);
    if (rc) {
        gx_cli_error("trace gen: %s", msg.text);
        return gx_exit_code(rc);
    }
    return GX_EXIT_OK;
}

static int cmd_convert(int argc, char **argv)
{
    out_opts o = {NULL, -1};
    const char *in = NULL;
    for (int i = 1; i < argc; i++) {
        int r = out_option(argc, argv, &i, &o);
        if (r < 0)
            return GX_EXIT_USAGE;
        if (r)
            continue;
        if (in || (argv[i][0] == '-' && argv[i][1])) {
            gx_cli_error("trace convert: unexpected argument '%s'", argv[i]);
            return GX_EXIT_USAGE;
        }
        in = argv[i];
    }
    if (!in || !o.path) {
        gx_cli_error("trace convert: IN and -o FILE are required");
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    if (gx_cli_check_output("trace convert", o.path))
        return GX_EXIT_USAGE;
    gx_msg msg;
    gx_msg_clear(&msg);
    int rc = gx_trace_convert(in, o.path, out_format(&o), &msg);
    if (rc) {
        gx_cli_error("trace convert: %s", msg.text);
        return gx_exit_code(rc);
    }
    return GX_EXIT_OK;
}

int gx_cmd_trace(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        usage(stdout);
        return GX_EXIT_OK;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        }
    if (!strcmp(sub, "gen"))
        return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(sub, "convert"))
        return cmd_convert(argc - 1, argv + 1);
    gx_cli_error("trace: unknown subcommand '%s' (gen or convert)", sub);
    return GX_EXIT_USAGE;
}
