/* test_export.c - gpuxray export, read back the way the other tools read
 * it: GPGPU-Sim's option files (whitespace-separated "-option value",
 * '#' to end of line a comment; the dl2 string through gpu-cache.cc's own
 * sscanf format) and gem5's command line (argparse "--option=value", sizes
 * with gem5's suffixes) plus "Class.param=value" SimObject parameters.
 * Checks the values against the profile, the IPOLY bank constraint, the
 * capacity kept by the power-of-two set mapping, and that a field the
 * profile lacks is left out with a comment (never invented). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/export.h"
#include "gpuxray/profile.h"
#include "testutil.h"

#define MAX_OPTS 64

typedef struct opt {
    char name[64], value[128];
} opt;

/* GPGPU-Sim's option file: tokens, comments from '#'. */
static int parse_gpgpusim(const char *text, opt *o, int max)
{
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *s2 = NULL, *name = strtok_r(line, " \t", &s2);
        if (!name)
            continue;
        char *value = strtok_r(NULL, " \t", &s2);
        assert_non_null(value);
        assert_null(strtok_r(NULL, " \t", &s2)); /* one value per option */
        assert_true(name[0] == '-' && n < max);
        snprintf(o[n].name, sizeof o[n].name, "%s", name + 1);
        snprintf(o[n].value, sizeof o[n].value, "%s", value);
        n++;
    }
    free(copy);
    return n;
}

static const char *get(const opt *o, int n, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].name, name))
            v = o[i].value; /* later overrides earlier, as in GPGPU-Sim */
    return v;
}

static unsigned uint_opt(const opt *o, int n, const char *name)
{
    const char *v = get(o, n, name);
    if (!v)
        fail_msg("option -%s missing", name);
    char *end = NULL;
    unsigned long x = strtoul(v, &end, 10);
    assert_true(*v && !*end);
    return (unsigned)x;
}

static gx_profile *load(const char *rel)
{
    gx_profile *p = NULL;
    gx_msg msg;
    if (gx_profile_load(gx_test_path(rel), &p, &msg) != GX_OK)
        fail_msg("%s: %s", rel, msg.text);
    return p;
}

static char *export_text(const gx_profile *p, gx_export_kind k, const gx_export_opts *o)
{
    char *t = NULL;
    gx_msg msg;
    if (gx_export(p, k, o, &t, &msg) != GX_OK)
        fail_msg("export: %s", msg.text);
    return t;
}

typedef struct dl2 {
    char ct, rp, wp, ap, wap, sif, mshr;
    unsigned nset, line, assoc, mshr_n, merge, mq, fifo, port;
} dl2;

static void parse_dl2(const char *v, dl2 *d)
{
    /* gpu-cache.cc: cache_config::init's format */
    int k = sscanf(v, "%c:%u:%u:%u,%c:%c:%c:%c:%c,%c:%u:%u,%u:%u,%u", &d->ct, &d->nset, &d->line,
                   &d->assoc, &d->rp, &d->wp, &d->ap, &d->wap, &d->sif, &d->mshr, &d->mshr_n,
                   &d->merge, &d->mq, &d->fifo, &d->port);
    assert_int_equal(k, 15);
    assert_true(d->ct == 'S' || d->ct == 'N');
    assert_true(d->rp == 'L' || d->rp == 'F');
    assert_true(d->sif == 'L' || d->sif == 'P' || d->sif == 'X');
    assert_int_equal(d->nset & (d->nset - 1), 0); /* the set index masks with nset - 1 */
    if (d->ct == 'S')
        assert_int_equal(d->line, 128); /* 4 x 32 B sectors */
}

static void test_accelsim_seed(void **state)
{
    (void)state;
    gx_profile *p = load("profiles/seed-ampere-6mb.json");
    gx_export_opts o = {.core_mhz = 0, .l1_latency_cycles = 33};
    char *t = export_text(p, GX_EXPORT_ACCELSIM, &o);
    opt op[MAX_OPTS];
    int n = parse_gpgpusim(t, op, MAX_OPTS);
    unsigned n_mem = uint_opt(op, n, "gpgpu_n_mem"), subs = uint_opt(op, n, "gpgpu_n_sub_partition_per_mchannel");
    assert_int_equal(n_mem * subs, p->l2.slices);
    unsigned idx = uint_opt(op, n, "gpgpu_memory_partition_indexing");
    assert_int_equal(idx, 2);
    unsigned banks = n_mem * subs; /* n_mem is a power of two here */
    assert_true(banks == 16 || banks == 32 || banks == 64);
    dl2 d;
    parse_dl2(get(op, n, "gpgpu_cache:dl2"), &d);
    assert_int_equal(d.line, p->l2.line_bytes);
    assert_int_equal(d.ct, 'S');
    /* 48 sets x 16 ways is not indexable: same capacity per bank */
    assert_int_equal((uint64_t)d.nset * d.assoc, (uint64_t)p->l2.sets_per_slice * p->l2.ways);
    assert_int_equal((uint64_t)banks * d.nset * d.assoc * d.line, p->l2.capacity_bytes);
    assert_int_equal(uint_opt(op, n, "gpgpu_l2_rop_latency"), (unsigned)(p->l2.hit_cycles - 33));
    assert_int_equal(uint_opt(op, n, "dram_latency"),
                     (unsigned)(p->memory.dram_latency_cycles - p->l2.hit_cycles));
    assert_non_null(strstr(t, "is not a power of two"));
    /* every option line follows a comment line naming its source (or
     * another option of the same comment) */
    char prev = '#';
    for (size_t i = 0; t[i]; i++)
        if (i == 0 || t[i - 1] == '\n') {
            if (t[i] == '-')
                assert_true(prev == '#' || prev == '-');
            prev = t[i];
        }
    free(t);
    /* core clock rescaling: twice the clock, twice the cycles */
    o.core_mhz = 2.0 * p->device.sm_clock_mhz;
    t = export_text(p, GX_EXPORT_ACCELSIM, &o);
    n = parse_gpgpusim(t, op, MAX_OPTS);
    assert_int_equal(uint_opt(op, n, "dram_latency"),
                     (unsigned)(2 * (p->memory.dram_latency_cycles - p->l2.hit_cycles)));
    free(t);
    /* no L1 latency: the rop line is left out, with its formula */
    o.core_mhz = 0;
    o.l1_latency_cycles = 0;
    t = export_text(p, GX_EXPORT_ACCELSIM, &o);
    n = parse_gpgpusim(t, op, MAX_OPTS);
    assert_null(get(op, n, "gpgpu_l2_rop_latency"));
    assert_non_null(strstr(t, "# -gpgpu_l2_rop_latency: left out"));
    free(t);
    gx_profile_free(p);
}

static void test_accelsim_banks(void **state)
{
    (void)state;
    gx_profile *p = load("profiles/seed-ampere-6mb.json");
    static const struct {
        uint32_t slices;
        unsigned idx;
    } cases[] = {{16, 2}, {32, 2}, {128, 1}, {80, 0}, {24, 0}, {8, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p->l2.slices = cases[i].slices;
        char *t = export_text(p, GX_EXPORT_ACCELSIM, NULL);
        opt op[MAX_OPTS];
        int n = parse_gpgpusim(t, op, MAX_OPTS);
        unsigned n_mem = uint_opt(op, n, "gpgpu_n_mem");
        unsigned subs = uint_opt(op, n, "gpgpu_n_sub_partition_per_mchannel");
        assert_int_equal(n_mem * subs, cases[i].slices);
        assert_int_equal(uint_opt(op, n, "gpgpu_memory_partition_indexing"), cases[i].idx);
        free(t);
    }
    gx_profile_free(p);
}

static void test_accelsim_measured_h200(void **state)
{
    (void)state;
    gx_profile *p = load("profiles/nvidia-h200.json");
    char *t = export_text(p, GX_EXPORT_ACCELSIM, NULL);
    opt op[MAX_OPTS];
    int n = parse_gpgpusim(t, op, MAX_OPTS);
    /* no slice count measured: nothing built from it is invented */
    assert_null(get(op, n, "gpgpu_n_mem"));
    assert_null(get(op, n, "gpgpu_cache:dl2"));
    assert_non_null(strstr(t, "left out, the profile has no l2.slices"));
    /* near-far: the near hit, and what flattening loses */
    assert_int_equal(uint_opt(op, n, "dram_latency"),
                     (unsigned)(p->memory.dram_latency_cycles - p->l2.near_hit_cycles));
    assert_non_null(strstr(t, "Flattening a near-far L2"));
    free(t);
    gx_profile_free(p);
}

/* gem5: argparse options and SimObject parameters. */
static uint64_t g5_size(const char *v)
{
    char *end = NULL;
    uint64_t x = strtoull(v, &end, 10);
    static const struct {
        const char *suf;
        uint64_t mul;
    } u[] = {{"B", 1}, {"kB", 1000}, {"KiB", 1024}, {"MB", 1000000}, {"MiB", 1 << 20},
             {"GB", 1000000000}, {"GiB", 1 << 30}, {"", 1}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (!strcmp(end, u[i].suf))
            return x * u[i].mul;
    fail_msg("bad gem5 size '%s'", v);
    return 0;
}

static int parse_gem5(const char *text, opt *o, int max)
{
    static const char *known[] = {
        "num-tccs", "tcc-size", "tcc-assoc", "cacheline_size", "TCC_latency",
        "L1TLBentries", "L1TLBassoc", "L1AccessLatency", "L1MissLatency", "L1MaxOutstandingReqs",
        "L2TLBentries", "L2TLBassoc", "L2AccessLatency", "L2MissLatency", "L2MaxOutstandingReqs",
        "L3TLBentries", "L3TLBassoc", "L3AccessLatency", "L3MissLatency", "L3MaxOutstandingReqs",
        "VegaPagetableWalker.enable_pwc", "VegaPagetableWalker.page_walk_cache_entries",
        "VegaPagetableWalker.neighbour_pwc_entries", "VegaPagetableWalker.pwc_fetch_bytes",
        "VegaTLBCoalescer.default_pgSize"};
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0])
            continue;
        const char *body = !strncmp(line, "--", 2) ? line + 2 : line;
        char *eq = strchr(body, '=');
        assert_non_null(eq);
        *eq = 0;
        int ok = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok |= !strcmp(body, known[i]);
        if (!ok)
            fail_msg("unknown gem5 option '%s'", body);
        assert_true((body == line + 2) == (strchr(body, '.') == NULL)); /* options vs params */
        assert_true(n < max);
        snprintf(o[n].name, sizeof o[n].name, "%s", body);
        snprintf(o[n].value, sizeof o[n].value, "%s", eq + 1);
        n++;
    }
    free(copy);
    return n;
}

static void test_gem5(void **state)
{
    (void)state;
    gx_profile *p = load("profiles/seed-ampere-6mb.json");
    char *t = export_text(p, GX_EXPORT_GEM5, NULL);
    opt op[MAX_OPTS];
    int n = parse_gem5(t, op, MAX_OPTS);
    assert_int_equal(uint_opt(op, n, "num-tccs"), p->l2.slices);
    assert_int_equal(g5_size(get(op, n, "tcc-size")), p->l2.capacity_bytes);
    assert_int_equal(uint_opt(op, n, "tcc-assoc"), p->l2.ways);
    assert_int_equal(uint_opt(op, n, "cacheline_size"), p->l2.line_bytes);
    assert_int_equal(uint_opt(op, n, "TCC_latency"), (unsigned)p->l2.hit_cycles);
    assert_null(get(op, n, "L1TLBentries")); /* no tlb section: left out */
    assert_non_null(strstr(t, "the profile has no tlb section"));
    free(t);
    /* a tlb section: two levels, a PWC, a neighbour PWC */
    gx_tlb_cfg *tl = &p->tlb;
    memset(tl, 0, sizeof *tl);
    tl->present = 1;
    tl->default_page_bytes = 2u << 20;
    tl->n_levels = 2;
    tl->levels[0] = (gx_tlb_level_cfg){.name = "L1", .entries = 16, .ways = 16, .entry_bytes = 2u << 20,
                                       .hit_latency_cycles = 20, .miss_cycles = NAN};
    tl->levels[1] = (gx_tlb_level_cfg){.name = "L2", .entries = 2048, .ways = 16, .entry_bytes = 2u << 20,
                                       .hit_latency_cycles = 120, .miss_cycles = 480,
                                       .outstanding_misses = 64};
    tl->walker.fetch_bytes = 64;
    tl->walker.pwc = (gx_small_cache_cfg){.present = 1, .entries = 32, .ways = 32};
    tl->walker.neighbour_pwc = (gx_small_cache_cfg){.present = 1, .entries = 64, .ways = 64};
    t = export_text(p, GX_EXPORT_GEM5, NULL);
    n = parse_gem5(t, op, MAX_OPTS);
    assert_int_equal(uint_opt(op, n, "L1TLBentries"), 16);
    assert_int_equal(uint_opt(op, n, "L1AccessLatency"), 20);
    assert_null(get(op, n, "L1MissLatency"));
    assert_int_equal(uint_opt(op, n, "L2TLBentries"), 2048);
    assert_int_equal(uint_opt(op, n, "L2TLBassoc"), 16);
    assert_int_equal(uint_opt(op, n, "L2MissLatency"), 480);
    assert_int_equal(uint_opt(op, n, "L2MaxOutstandingReqs"), 64);
    assert_null(get(op, n, "L3TLBentries"));
    assert_string_equal(get(op, n, "VegaPagetableWalker.enable_pwc"), "True");
    assert_int_equal(uint_opt(op, n, "VegaPagetableWalker.page_walk_cache_entries"), 32);
    assert_int_equal(uint_opt(op, n, "VegaPagetableWalker.neighbour_pwc_entries"), 64);
    assert_int_equal(uint_opt(op, n, "VegaPagetableWalker.pwc_fetch_bytes"), 64);
    assert_int_equal(uint_opt(op, n, "VegaTLBCoalescer.default_pgSize"), 2u << 20);
    free(t);
    gx_profile_free(p);
}

static void test_kind_parse(void **state)
{
    (void)state;
    gx_export_kind k;
    assert_int_equal(gx_export_kind_parse("accel-sim", &k), 0);
    assert_int_equal(k, GX_EXPORT_ACCELSIM);
    assert_int_equal(gx_export_kind_parse("gem5", &k), 0);
    assert_int_equal(k, GX_EXPORT_GEM5);
    assert_int_equal(gx_export_kind_parse("ramulator", &k), -1);
    gx_export_opts bad = {.core_mhz = -1};
    char *t = NULL;
    gx_msg msg;
    gx_profile *p = load("profiles/seed-ampere-6mb.json");
    assert_int_equal(gx_export(p, GX_EXPORT_ACCELSIM, &bad, &t, &msg), GX_EINVAL);
    gx_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accelsim_seed),  cmocka_unit_test(test_accelsim_banks),
        cmocka_unit_test(test_accelsim_measured_h200), cmocka_unit_test(test_gem5),
        cmocka_unit_test(test_kind_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
