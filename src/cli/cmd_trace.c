/* cmd_trace.c - `gpuxray trace gen|convert`: synthetic traces and format
 * conversion (formats in include/gpuxray/trace.h).
 *
 * Notes: output goes to a temporary file renamed over -o FILE (nothing
 * half-written). Format: --text or --binary; otherwise binary for a file and
 * text for `-o -` (standard output). */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
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
            "  -o FILE            output file, '-' for standard output\n"
            "\n"
            "convert reads text, binary (version 1 or 2) and Accel-Sim traces, streaming.\n"
            "Text format: one record a line, 'SM OP ADDRESS [SIZE] [KEY=VALUE ...]': OP in\n"
            "R W A (global), SR SW (shared), MAP, INV; ADDRESS hexadecimal (0x optional);\n"
            "SIZE decimal bytes (default %d); keys cycle= warp= lane= bytes= page=; '#'\n"
            "starts a comment. Binary version 2: \"%s\", delta-encoded records, an end\n"
            "marker (docs/trace-format.md).\n",
            GX_TRACE_MAX_SIZE, GX_TRACE_DEFAULT_SIZE, GX_TRACE_MAGIC2);
}

/* Option value: "--opt VALUE" or "--opt=VALUE". Returns NULL if not this option. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n))
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int bad_value(const char *opt, const char *v, const char *what)
{
    gx_cli_error("%s '%s': %s expected", opt, v, what);
    return GX_EXIT_USAGE;
}

static int parse_u64(const char *opt, const char *v, int size, uint64_t *out)
{
    unsigned long long x;
    if ((size ? gx_parse_size(v, &x) : gx_parse_count(v, &x)) != 0)
        return bad_value(opt, v, size ? "a size (e.g. 64MiB, 4096)" : "a count (e.g. 20M)");
    *out = x;
    return 0;
}

static int parse_u32(const char *opt, const char *v, int size, uint32_t *out)
{
    uint64_t x;
    if (parse_u64(opt, v, size, &x))
        return GX_EXIT_USAGE;
    if (x > UINT32_MAX)
        return bad_value(opt, v, "a value below 2^32");
    *out = (uint32_t)x;
    return 0;
}

static int parse_ratio(const char *opt, const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= 0 && x <= 1))
        return bad_value(opt, v, "a fraction in [0, 1]");
    *out = x;
    return 0;
}

typedef struct out_opts {
    const char *path;
    int fmt; /* -1 unset */
} out_opts;

/* Common output options; 1 = consumed, 0 = not this, <0 = error (exit 2). */
static int out_option(int argc, char **argv, int *i, out_opts *o)
{
    int missing = 0;
    const char *v;
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
    if ((v = opt_value(argc, argv, i, "-o", &missing)) ||
        (!missing && (v = opt_value(argc, argv, i, "--output", &missing)))) {
        o->path = v;
        return 1;
    }
    if (missing) {
        gx_cli_error("%s needs a value", argv[*i]);
        return -1;
    }
    return 0;
}

static gx_trace_format out_format(const out_opts *o)
{
    if (o->fmt >= 0)
        return (gx_trace_format)o->fmt;
    return strcmp(o->path, "-") ? GX_TRACE_BINARY : GX_TRACE_TEXT;
}

/* One gen option at argv[*i]; 0 ok, else exit code. */
static int gen_option(int argc, char **argv, int *i, gx_gen_cfg *c)
{
    const char *a = argv[*i];
    int missing = 0;
    const char *v;
#define OPT(name) ((v = opt_value(argc, argv, i, name, &missing)) != NULL)
    if (OPT("--footprint"))
        return parse_u64(a, v, 1, &c->footprint_bytes);
    if (OPT("--count"))
        return parse_u64(a, v, 0, &c->count) ? GX_EXIT_USAGE
               : c->count ? 0 : bad_value(a, v, "a count > 0");
    if (OPT("--size"))
        return parse_u32(a, v, 1, &c->size_bytes);
    if (OPT("--stride")) { /* bytes for stride, pages for pages */
        int rc = parse_u64(a, v, 1, &c->stride_bytes);
        c->page_stride = c->stride_bytes;
        return rc;
    }
    if (OPT("--page-size"))
        return parse_u64(a, v, 1, &c->page_bytes);
    if (OPT("--unmapped-every"))
        return parse_u64(a, v, 0, &c->unmapped_every);
    if (OPT("--order"))
        return gx_page_order_parse(v, &c->page_order)
                   ? bad_value(a, v, "sequential, strided or random")
                   : 0;
    if (OPT("--base"))
        return parse_u64(a, v, 1, &c->base);
    if (OPT("--sms"))
        return parse_u32(a, v, 0, &c->sms);
    if (OPT("--seed"))
        return parse_u64(a, v, 0, &c->seed);
    if (OPT("--rows"))
        return parse_u64(a, v, 0, &c->rows);
    if (OPT("--cols"))
        return parse_u64(a, v, 0, &c->cols);
    if (OPT("--elem"))
        return parse_u32(a, v, 1, &c->elem_bytes);
    if (OPT("--tile"))
        return parse_u32(a, v, 0, &c->tile);
    if (OPT("--write-ratio"))
        return parse_ratio(a, v, &c->write_ratio);
    if (OPT("--atomic-ratio"))
        return parse_ratio(a, v, &c->atomic_ratio);
    if (OPT("--sm-assign"))
        return gx_sm_assign_parse(v, &c->sm_assign)
                   ? bad_value(a, v, "roundrobin, block or random")
                   : 0;
#undef OPT
    if (missing)
        gx_cli_error("%s needs a value", a);
    else
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
