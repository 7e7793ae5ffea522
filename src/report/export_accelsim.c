/* export_accelsim.c - a profile as GPGPU-Sim / Accel-Sim options
 * (gpgpusim.config lines), and the export entry point.
 *
 * Mapping (GPGPU-Sim's memory side): every memory sub-partition holds one
 * L2 bank, so -gpgpu_n_mem x -gpgpu_n_sub_partition_per_mchannel = the
 * measured l2.slices, and -gpgpu_cache:dl2 describes ONE bank:
 * "<type>:<sets>:<line>:<assoc>,<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>,
 * <mshr>:<entries>:<merge>,<miss_queue>:<result_fifo>,<data_port>"
 * (gpu-cache.cc's sscanf format).
 *
 * Notes / what does not carry over:
 * - Memory channels are not observable from timing: the split uses 2
 *   sub-partitions per channel, as Accel-Sim's Volta..Hopper configs do;
 *   only the product is measured.
 * - GPGPU-Sim's set index functions mask with sets - 1: a set count that is
 *   not a power of two (a modulo set index, e.g. 48) is exported as the
 *   power-of-two set count whose associativity is closest to the measured
 *   one at the same capacity per bank; the line says so.
 * - -gpgpu_memory_partition_indexing 2 (IPOLY) needs n_mem (a power of
 *   two) x sub-partitions = 16, 32 or 64 (hashing.cc); 1 (XOR)
 *   needs a power of two; otherwise 0 (linear). None of them is the
 *   measured slice hash (GPGPU-Sim has no option that takes XOR masks).
 * - Sectors are 32 B in GPGPU-Sim (4 per 128 B line); another measured
 *   sector size is named in a comment.
 * - A near-far L2 is flattened: one latency for every bank (the near
 *   hit), every line in one home bank; far hits, their extra cost and the
 *   near copies are lost (the header says how much).
 * - -gpgpu_l2_rop_latency and -dram_latency are counted in core-clock
 *   cycles (gpu_sim_cycle); Accel-Sim's tuner sets them to L2 hit - L1 hit
 *   and DRAM - L2 hit. The L1 latency is not in the profile: given with
 *   --l1-latency, else the rop line is left out with its formula.
 * - MSHR / queue / port fields are not measured: Accel-Sim's Ampere values
 *   (A:192:4,32:0,32), marked as such. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/export.h"
#include "rbuf.h"

#define AS_SUBS_PER_CHANNEL 2u   /* Accel-Sim's Volta..Hopper configs */
#define AS_SECTOR_BYTES 32u      /* GPGPU-Sim's SECTOR_SIZE */
#define AS_SECTOR_LINE 128u      /* a sector cache's line: 4 x 32 B */
#define AS_DL2_TAIL "A:192:4,32:0,32" /* MSHR, queues, port: Accel-Sim's SM86 values */

int rp_export_gem5(const gx_profile *p, const gx_export_opts *o, gx_rbuf *b);

int gx_export_kind_parse(const char *s, gx_export_kind *out)
{
    if (!s)
        return -1;
    if (!strcmp(s, "accel-sim") || !strcmp(s, "accelsim") || !strcmp(s, "gpgpu-sim"))
        *out = GX_EXPORT_ACCELSIM;
    else if (!strcmp(s, "gem5"))
        *out = GX_EXPORT_GEM5;
    else
        return -1;
    return 0;
}

/* IPOLY's constraint (hashing.cc): it hashes over 16, 32 or 64 banks.
 * Channel counts that are not a power of two go through an extra
 * reduction in addrdec.cc that breaks the hash's conflict-freedom: only
 * exact power-of-two products are taken. */
static int ipoly_ok(uint32_t n_mem, uint32_t subs)
{
    uint64_t banks = (uint64_t)n_mem * subs;
    return gx_is_pow2_u64(n_mem) && (banks == 16 || banks == 32 || banks == 64);
}

/* Sets of one bank as GPGPU-Sim can index them: (sets, assoc). */
static void bank_geometry(uint32_t sets, uint32_t ways, uint32_t *gs, uint32_t *ga)
{
    *gs = sets;
    *ga = ways;
    if (gx_is_pow2_u64(sets))
        return;
    uint64_t lines = (uint64_t)sets * ways;
    double best = INFINITY;
    for (uint32_t s = 1; s <= lines && s < (1u << 24); s <<= 1) {
        if (lines % s)
            continue;
        double d = fabs((double)(lines / s) - ways);
        if (d < best) {
            best = d;
            *gs = s;
            *ga = (uint32_t)(lines / s);
        }
    }
}

static char rep_char(const char *policy)
{
    return !strncmp(policy, "fifo", 4) ? 'F' : 'L';
}

static double l2_hit(const gx_profile *p)
{
    if (isfinite(p->l2.hit_cycles))
        return p->l2.hit_cycles;
    if (isfinite(p->l2.near_hit_cycles))
        return p->l2.near_hit_cycles;
    return p->l2.n_levels ? p->l2.levels[0].latency_cycles : NAN;
}

static void header(const gx_profile *p, const gx_export_opts *o, gx_rbuf *b)
{
    rb_printf(b, "# GPGPU-Sim / Accel-Sim options from the gpuxray profile \"%s\" (%s, target %s)\n",
              p->name, p->provenance.kind[0] ? p->provenance.kind : "?",
              p->provenance.target[0] ? p->provenance.target : "not recorded");
    rb_puts(b, "# Append to gpgpusim.config (a later option overrides an earlier one).\n");
    if (p->device.sm_clock_mhz)
        rb_printf(b, "# Latencies: measured in SM cycles at %u MHz; GPGPU-Sim counts these in core-clock "
                     "cycles, %s.\n",
                  p->device.sm_clock_mhz,
                  o->core_mhz > 0 ? "rescaled to the given core clock" : "kept as measured (set the "
                                                                         "first -gpgpu_clock_domains value to the SM clock)");
    if (p->l2.topology == GX_TOPO_NEAR_FAR) {
        double nh = p->l2.near_hit_cycles, fh = p->l2.far_hit_cycles;
        rb_printf(b, "# Flattening a near-far L2: GPGPU-Sim gives every bank one latency and every line "
                     "one home bank. Exported: the near hit (%.0f cycles). Lost: far hits (%.0f cycles, "
                     "+%.0f)", nh, fh, fh - nh);
        if (isfinite(p->l2.far_stream_extra_cycles) && p->l2.far_stream_extra_cycles > 0)
            rb_printf(b, " and back-to-back far hits (+%.0f more)", p->l2.far_stream_extra_cycles);
        if (p->l2.n_levels >= 2)
            rb_printf(b, ", the one-SM view of %llu B near then %llu B in all",
                      (unsigned long long)p->l2.levels[0].capacity_bytes,
                      (unsigned long long)p->l2.levels[1].capacity_bytes);
        rb_puts(b, ", copies of far lines into the near partition. A kernel whose working set lies "
                   "between the near and the whole capacity runs faster here than on the GPU.\n");
    }
}

/* The memory side: channels, sub-partitions, the L2 bank, the indexing. */
static void memory_lines(const gx_profile *p, gx_rbuf *b)
{
    uint32_t S = p->l2.slices;
    if (!S) {
        rb_puts(b, "# -gpgpu_n_mem, -gpgpu_n_sub_partition_per_mchannel, -gpgpu_cache:dl2, "
                   "-gpgpu_memory_partition_indexing: left out, the profile has no l2.slices (the "
                   "bank count they are built from)\n");
        return;
    }
    uint32_t subs = S % AS_SUBS_PER_CHANNEL == 0 ? AS_SUBS_PER_CHANNEL : 1;
    uint32_t n_mem = S / subs;
    rb_printf(b, "# l2.slices = %u banks = n_mem x sub-partitions; channels are not measured: %u "
                 "sub-partition%s per channel (Accel-Sim's Volta..Hopper convention)\n",
              S, subs, subs > 1 ? "s" : "");
    rb_printf(b, "-gpgpu_n_mem %u\n-gpgpu_n_sub_partition_per_mchannel %u\n", n_mem, subs);
    int idx = ipoly_ok(n_mem, subs) ? 2 : gx_is_pow2_u64(S) ? 1 : 0;
    rb_printf(b, "# %s; the measured slice hash (%s) has no GPGPU-Sim option\n",
              idx == 2   ? "IPOLY: its 16/32/64-bank constraint holds"
              : idx == 1 ? "XOR (bitwise): IPOLY needs 16, 32 or 64 banks"
                         : "linear: IPOLY needs 16, 32 or 64 banks, XOR a power of two",
              p->l2.slice_hash.present ? "XOR masks" : "not in the profile");
    rb_printf(b, "-gpgpu_memory_partition_indexing %d\n", idx);
    uint32_t sets = p->l2.sets_per_slice, ways = p->l2.ways, line = p->l2.line_bytes;
    if (!sets || !ways || !line) {
        rb_printf(b, "# -gpgpu_cache:dl2: left out, the profile lacks%s%s%s\n",
                  sets ? "" : " l2.sets_per_slice", ways ? "" : " l2.ways", line ? "" : " l2.line_bytes");
        return;
    }
    uint32_t gs, ga;
    bank_geometry(sets, ways, &gs, &ga);
    int sector = p->l2.sector_bytes && p->l2.sector_bytes < line && line == AS_SECTOR_LINE;
    char sif = gs == 16 || gs == 32 || gs == 64 ? 'P' : 'L';
    rb_printf(b, "# one bank: l2.sets_per_slice %u x l2.ways %u x l2.line_bytes %u = %llu B (x %u banks = "
                 "%llu B)",
              sets, ways, line, (unsigned long long)sets * ways * line, S,
              (unsigned long long)sets * ways * line * S);
    if (gs != sets)
        rb_printf(b, "; %u sets is not a power of two (GPGPU-Sim masks the set index): %u sets x %u ways, "
                     "same capacity",
                  sets, gs, ga);
    rb_printf(b, "; policy %s -> %c (GPGPU-Sim has LRU and FIFO)",
              p->l2.policy[0] ? p->l2.policy : "not in the profile", rep_char(p->l2.policy));
    if (p->l2.sector_bytes && p->l2.sector_bytes != AS_SECTOR_BYTES && p->l2.sector_bytes < line)
        rb_printf(b, "; measured %u B sectors, GPGPU-Sim's are %u B", p->l2.sector_bytes,
                  AS_SECTOR_BYTES);
    rb_printf(b, "; set index %s; MSHR/queue/port fields not measured (%s: Accel-Sim's Ampere "
                 "values)\n",
              sif == 'P' ? "IPOLY" : "linear", AS_DL2_TAIL);
    rb_printf(b, "-gpgpu_cache:dl2 %c:%u:%u:%u,%c:B:m:L:%c,%s\n", sector ? 'S' : 'N', gs, line, ga,
              rep_char(p->l2.policy), sif, AS_DL2_TAIL);
    rb_puts(b, "-gpgpu_cache:dl2_texture_only 0\n");
}

static void latency_lines(const gx_profile *p, const gx_export_opts *o, double scale, gx_rbuf *b)
{
    double hit = l2_hit(p), dram = p->memory.dram_latency_cycles;
    const char *hit_src = isfinite(p->l2.hit_cycles)        ? "l2.latency_cycles.hit"
                          : isfinite(p->l2.near_hit_cycles) ? "l2.latency_cycles.near_hit"
                                                            : "l2.levels_from_one_sm[0]";
    if (!isfinite(hit)) {
        rb_puts(b, "# -gpgpu_l2_rop_latency, -dram_latency: left out, the profile has no L2 hit "
                   "latency\n");
        return;
    }
    if (o->l1_latency_cycles > 0) {
        double v = (hit - o->l1_latency_cycles) * scale;
        rb_printf(b, "# %s %.0f - the given L1 latency %.0f (Accel-Sim's tuner: L2 hit - L1 hit)\n",
                  hit_src, hit, o->l1_latency_cycles);
        rb_printf(b, "-gpgpu_l2_rop_latency %.0f\n", v > 0 ? v : 0);
    } else {
        rb_printf(b, "# -gpgpu_l2_rop_latency: left out, it is L2 hit - L1 hit and the profile has no "
                     "L1 latency: %s %.0f minus your -gpgpu_l1_latency (or pass --l1-latency)\n",
                  hit_src, hit * scale);
    }
    if (isfinite(dram)) {
        rb_printf(b, "# memory.dram_latency_cycles %.0f - %s %.0f (Accel-Sim's tuner: DRAM - L2 hit)\n",
                  dram, hit_src, hit);
        rb_printf(b, "-dram_latency %.0f\n", (dram - hit) * scale > 0 ? (dram - hit) * scale : 0);
    } else {
        rb_puts(b, "# -dram_latency: left out, the profile has no memory.dram_latency_cycles\n");
    }
}

static int export_accelsim(const gx_profile *p, const gx_export_opts *o, gx_rbuf *b, gx_msg *msg)
{
    if (o->core_mhz > 0 && !p->device.sm_clock_mhz)
        return gx_fail(msg, GX_EINVAL, "--core-mhz needs the profile's device.sm_clock_mhz");
    double scale = o->core_mhz > 0 ? o->core_mhz / p->device.sm_clock_mhz : 1.0;
    header(p, o, b);
    memory_lines(p, b);
    latency_lines(p, o, scale, b);
    return GX_OK;
}

int gx_export(const gx_profile *p, gx_export_kind kind, const gx_export_opts *o, char **text,
              gx_msg *msg)
{
    if (!p || !text)
        return gx_fail(msg, GX_EINVAL, "gx_export: NULL argument");
    gx_export_opts def = {0, 0};
    if (!o)
        o = &def;
    if (!(o->core_mhz >= 0) || !(o->l1_latency_cycles >= 0))
        return gx_fail(msg, GX_EINVAL, "export: clock and latency options must be >= 0");
    gx_rbuf b;
    rb_init(&b);
    int rc = kind == GX_EXPORT_ACCELSIM ? export_accelsim(p, o, &b, msg)
             : kind == GX_EXPORT_GEM5   ? rp_export_gem5(p, o, &b)
                                        : gx_fail(msg, GX_EINVAL, "export: unknown kind");
    if (rc == GX_OK && b.failed)
        rc = gx_fail(msg, GX_ENOMEM, "out of memory");
    if (rc != GX_OK) {
        rb_free(&b);
        return rc;
    }
    *text = b.s ? b.s : strdup("");
    return *text ? GX_OK : gx_fail(msg, GX_ENOMEM, "out of memory");
}
