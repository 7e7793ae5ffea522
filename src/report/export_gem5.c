/* export_gem5.c - a profile as options of gem5's GPU model: the TCC (L2)
 * options of configs/example/apu_se.py (GPU_VIPER: --num-tccs, --tcc-size,
 * --tcc-assoc, --TCC_latency; --cacheline_size), the TLB options of
 * configs/common/GPUTLBOptions.py (--L<n>TLBentries, --L<n>TLBassoc,
 * --L<n>AccessLatency, --L<n>MissLatency, --L<n>MaxOutstandingReqs) and the
 * page-walker / coalescer SimObject parameters that have no command-line
 * option (page_walk_cache_entries, neighbour_pwc_entries, pwc_fetch_bytes,
 * enable_pwc of the Vega page-table walker; the coalescer's default page
 * size), written "Class.param=value" to set from a config script.
 *
 * Notes:
 * - One option a line, "#" comment lines between: `grep -v '^#' FILE`
 *   gives the options to append to the apu_se.py command line.
 * - --tcc-size is the aggregate size over all TCCs (its help text); the
 *   TCC count is the slice count.
 * - --TCC_latency is the TCC's own access latency in gem5, not the
 *   load-to-use latency measured here: exported as measured, marked.
 * - The translation part comes from the profile's tlb section; without it
 *   the lines are left out. GPUTLBOptions has three levels: deeper levels
 *   of a profile are named in a comment. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpuxray/export.h"
#include "rbuf.h"

#define G5_TLB_LEVELS 3 /* GPUTLBOptions.py: L1, L2, L3 */

int rp_export_gem5(const gx_profile *p, const gx_export_opts *o, gx_rbuf *b);

/* gem5 size string: the largest binary unit that divides it. */
static void g5_size(uint64_t v, char *buf, size_t len)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB"};
    int i = 0;
    while (i < 3 && v && v % 1024 == 0) {
        v /= 1024;
        i++;
    }
    snprintf(buf, len, "%llu%s", (unsigned long long)v, u[i]);
}

static void l2_lines(const gx_profile *p, gx_rbuf *b)
{
    char sz[32];
    rb_puts(b, "# L2 (TCC) options of configs/example/apu_se.py (GPU_VIPER)\n");
    if (p->l2.slices) {
        rb_printf(b, "# l2.slices: one TCC per slice\n--num-tccs=%u\n", p->l2.slices);
    } else {
        rb_puts(b, "# --num-tccs: left out, the profile has no l2.slices\n");
    }
    if (p->l2.capacity_bytes) {
        g5_size(p->l2.capacity_bytes, sz, sizeof sz);
        rb_printf(b, "# l2.capacity_bytes (aggregate over the TCCs)\n--tcc-size=%s\n", sz);
    } else {
        rb_puts(b, "# --tcc-size: left out, the profile has no l2.capacity_bytes\n");
    }
    if (p->l2.ways)
        rb_printf(b, "# l2.ways\n--tcc-assoc=%u\n", p->l2.ways);
    else
        rb_puts(b, "# --tcc-assoc: left out, the profile has no l2.ways\n");
    if (p->l2.line_bytes)
        rb_printf(b, "# l2.line_bytes (gem5 uses one line size system-wide)\n--cacheline_size=%u\n",
                  p->l2.line_bytes);
    else
        rb_puts(b, "# --cacheline_size: left out, the profile has no l2.line_bytes\n");
    double hit = isfinite(p->l2.hit_cycles) ? p->l2.hit_cycles : p->l2.near_hit_cycles;
    if (isfinite(hit))
        rb_printf(b, "# %s, load-to-use in SM cycles; gem5's TCC_latency is the TCC's own access "
                     "latency: lower it by the GPU's L1 and network path to compare like with like\n"
                     "--TCC_latency=%.0f\n",
                  isfinite(p->l2.hit_cycles) ? "l2.latency_cycles.hit" : "l2.latency_cycles.near_hit",
                  hit);
    else
        rb_puts(b, "# --TCC_latency: left out, the profile has no L2 hit latency\n");
    if (p->l2.topology == GX_TOPO_NEAR_FAR)
        rb_printf(b, "# near-far L2 flattened: gem5's TCCs are uniform; far hits (%.0f cycles) and "
                     "near copies are lost\n",
                  p->l2.far_hit_cycles);
    if (isfinite(p->memory.dram_latency_cycles))
        rb_printf(b, "# memory.dram_latency_cycles %.0f: gem5 times DRAM with its memory controller "
                     "model (--mem-type), no latency option\n",
                  p->memory.dram_latency_cycles);
}

static void level_lines(const gx_tlb_cfg *t, gx_rbuf *b)
{
    for (int i = 0; i < t->n_levels && i < G5_TLB_LEVELS; i++) {
        const gx_tlb_level_cfg *l = &t->levels[i];
        int n = i + 1;
        rb_printf(b, "# tlb.levels[%d] (%s)%s\n", i, l->name[0] ? l->name : "?",
                  l->entry_bytes ? "" : "; entry reach not in the profile");
        if (l->entries)
            rb_printf(b, "--L%dTLBentries=%u\n", n, l->entries);
        else
            rb_printf(b, "# --L%dTLBentries: left out, no entries\n", n);
        if (l->ways)
            rb_printf(b, "--L%dTLBassoc=%u\n", n, l->ways);
        else
            rb_printf(b, "# --L%dTLBassoc: left out, no ways\n", n);
        if (isfinite(l->hit_latency_cycles))
            rb_printf(b, "--L%dAccessLatency=%.0f\n", n, l->hit_latency_cycles);
        else
            rb_printf(b, "# --L%dAccessLatency: left out, no hit latency\n", n);
        if (i == t->n_levels - 1 && isfinite(l->miss_cycles))
            rb_printf(b, "# last level: its miss cost is the walk\n--L%dMissLatency=%.0f\n", n,
                      l->miss_cycles);
        if (l->outstanding_misses)
            rb_printf(b, "--L%dMaxOutstandingReqs=%u\n", n, l->outstanding_misses);
    }
    if (t->n_levels > G5_TLB_LEVELS)
        rb_printf(b, "# tlb.levels[%d..%d]: GPUTLBOptions.py has three levels; left out\n",
                  G5_TLB_LEVELS, t->n_levels - 1);
}

static void walker_lines(const gx_tlb_cfg *t, gx_rbuf *b)
{
    rb_puts(b, "# page-table walker and coalescer: SimObject parameters (no apu_se.py option); "
               "set them in the config script\n");
    const gx_small_cache_cfg *pwc = &t->walker.pwc, *npwc = &t->walker.neighbour_pwc;
    rb_printf(b, "# tlb.walker.pwc%s\nVegaPagetableWalker.enable_pwc=%s\n",
              pwc->present ? "" : " is null: no page-walk cache", pwc->present ? "True" : "False");
    if (pwc->present && pwc->entries)
        rb_printf(b, "# tlb.walker.pwc.entries (fully associative in gem5%s)\n"
                     "VegaPagetableWalker.page_walk_cache_entries=%u\n",
                  pwc->ways && pwc->ways != pwc->entries ? "; the profile's ways are lost" : "",
                  pwc->entries);
    if (npwc->present && npwc->entries)
        rb_printf(b, "# tlb.walker.neighbour_pwc.entries\nVegaPagetableWalker.neighbour_pwc_entries=%u\n",
                  npwc->entries);
    else
        rb_puts(b, "# neighbour_pwc_entries: left out, tlb.walker.neighbour_pwc is null\n");
    if (t->walker.fetch_bytes)
        rb_printf(b, "# tlb.walker.fetch_bytes\nVegaPagetableWalker.pwc_fetch_bytes=%u\n",
                  t->walker.fetch_bytes);
    else
        rb_puts(b, "# pwc_fetch_bytes: left out, no tlb.walker.fetch_bytes\n");
    if (t->default_page_bytes)
        rb_printf(b, "# tlb.page_table.default_page_bytes\nVegaTLBCoalescer.default_pgSize=%llu\n",
                  (unsigned long long)t->default_page_bytes);
    else
        rb_puts(b, "# default_pgSize: left out, no tlb.page_table.default_page_bytes\n");
}

int rp_export_gem5(const gx_profile *p, const gx_export_opts *o, gx_rbuf *b)
{
    (void)o;
    rb_printf(b, "# gem5 GPU options from the gpuxray profile \"%s\" (%s, target %s)\n", p->name,
              p->provenance.kind[0] ? p->provenance.kind : "?",
              p->provenance.target[0] ? p->provenance.target : "not recorded");
    rb_puts(b, "# Latencies in GPU cycles (the profile's SM cycles; set --gpu-clock to the SM clock");
    if (p->device.sm_clock_mhz)
        rb_printf(b, ", %u MHz", p->device.sm_clock_mhz);
    rb_puts(b, ")\n");
    l2_lines(p, b);
    rb_puts(b, "# translation options of configs/common/GPUTLBOptions.py\n");
    if (!p->tlb.present) {
        rb_puts(b, "# --L1TLBentries ... and the walker parameters: left out, the profile has no tlb "
                   "section\n");
        return GX_OK;
    }
    level_lines(&p->tlb, b);
    walker_lines(&p->tlb, b);
    return GX_OK;
}
