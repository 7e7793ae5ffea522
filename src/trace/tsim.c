/* tsim.c - the trace-driven run of the L2 model (`gpuxray sim`): virtual
 * addresses through the page placement, every touched sector through gx_l2,
 * and the statistics (per level, per slice, latency histogram, cycles).
 *
 * Models (see also include/gpuxray/trace.h):
 * - Trace addresses are virtual. Page = memory.page_bytes; frames placed by
 *   gx_placement seeded with frames_seed (the profile's sim.frames_seed by
 *   default) within phys_bytes of physical memory.
 * - An access of SIZE bytes touches the sectors of [addr, addr+SIZE); each
 *   is one L2 access, issued together: the access's latency is the largest.
 * - Total cycles are the sum of the accesses' latencies (one after another,
 *   each waiting for the previous), a latency-bound estimate; not a model of
 *   memory-level parallelism or bandwidth.
 * - Shared-memory records (SR / SW) run the bank model (smem.h) on their own
 *   statistics (warp accesses, conflicts by degree, cycles), apart from the
 *   global accesses' totals.
 *
 * Notes:
 * - The run is a client of the memory system (memsys.h), which joins the
 *   parts (frame placement, L2, DRAM); this file holds the loop and the
 *   statistics.
 * - Each access is located (its hashes) PREFETCH_DISTANCE accesses ahead
 *   and its sets prefetched into the host's caches
 *   (gx_memsys_locate_ahead); the access then uses the kept location, so an
 *   address is hashed once. Only for frames already placed: results never
 *   change. Measured (random / stream 64 MiB traces, 10M accesses, one
 *   thread of a loaded 2-core AMD EPYC VM, off -> on, pairs run back to
 *   back): hopper-like random 5.3 -> 11.3, 7.8 -> 9.5, stream 14.2 -> 24.3,
 *   12.9 -> 17.4 M accesses/s; seed-ampere-6mb random 32.8 -> 35.8,
 *   46.0 -> 47.7, stream 44.1 -> 48.7, 52.1 -> 53.7. An earlier version
 *   hashing twice (prefetch by address, then access by address) lost ~8% on
 *   the seed card, whose ~0.5 MB of model state stays in the host's L2.
 * - Translation off, the default loops are batched: gx_tsim_run gathers
 *   runs of single-sector accesses (run_batched) and gx_tsim_run_cols takes
 *   the reader's columns as they are (one sector's repeats folded by the
 *   decoder, gx_trace_cols); both hand them to gx_memsys_run_off, whose L2
 *   batch run locates ahead itself. run_loop (one access at a time, with the
 *   look-ahead above) remains for prefetch off and is the reference the
 *   batched loops are tested against (tests/test_trace_cols.c). Measured
 *   gains: memsys.c (gx_memsys_run_off) and docs/performance.md.
 * - Latencies are rounded to whole cycles for the histogram (1-cycle bins
 *   below GX_TSIM_LAT_BINS - 1; the last bin holds everything above);
 *   the mean and the total use the exact values (the total as an exact
 *   fixed-point sum: tsim_internal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/l2.h"
#include "gpuxray/memsys.h"
#include "gpuxray/smem.h"
#include "gpuxray/trace.h"
#include "tsim_internal.h"

#define PREFETCH_DISTANCE 8 /* accesses ahead (gx_memsys_locate_ahead) */
#define TSIM_COLS 4096      /* accesses gathered per gx_memsys_run_off call (48 KiB) */


static void smem_open(gx_tsim *s, const gx_profile *p); /* shared memory, below */

void gx_tsim_defaults(const gx_profile *p, gx_tsim_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->skew = 1;
    c->seed = 1;
    c->frames_seed = p && p->sim.present ? p->sim.frames_seed : 1;
    c->phys_bytes = GX_TSIM_DEFAULT_PHYS_BYTES;
    c->prefetch = -1;
}

int gx_tsim_new(const gx_profile *p, const gx_tsim_cfg *c, gx_tsim **out, gx_msg *msg)
{
    *out = NULL;
    int rc0 = gx_profile_check_model(p, msg); /* then trusted: powers of two, ranges */
    if (rc0 != GX_OK)
        return rc0;
    gx_tsim *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    s->cfg = *c;
    uint64_t phys = c->phys_bytes ? c->phys_bytes : GX_TSIM_DEFAULT_PHYS_BYTES;
    s->cfg.phys_bytes = phys;
    snprintf(s->name, sizeof s->name, "%s", p->name);
    s->topo = p->l2.topology;
    s->partitions = p->l2.partitions ? p->l2.partitions : 1;
    s->slices = p->l2.slices;
    s->sm_count = p->device.sm_count;
    s->sector_bytes = p->l2.sector_bytes;
    s->page_bytes = p->memory.page_bytes;
    s->prefetch = c->prefetch != 0; /* auto (-1) = on: see the notes above */
    s->min_cycles = INFINITY;
    s->max_cycles = -INFINITY;
    s->hist = calloc(GX_TSIM_LAT_BINS, sizeof *s->hist);
    s->col_va = malloc(TSIM_COLS * sizeof *s->col_va);
    s->col_sm = malloc(TSIM_COLS * sizeof *s->col_sm);
    s->col_cycle = malloc(TSIM_COLS * sizeof *s->col_cycle);
    gx_memsys_cfg mc = {c->noise, c->skew, c->seed, c->frames_seed, phys};
    int rc = s->hist && s->col_va && s->col_sm && s->col_cycle ? GX_OK
                                                : gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    if (rc == GX_OK)
        rc = gx_memsys_new(p, &mc, &s->ms, msg);
    if (rc == GX_OK) {
        s->xlate = gx_memsys_translating(s->ms);
        s->window = gx_memsys_window(s->ms);
    }
    if (rc != GX_OK) {
        gx_tsim_free(s);
        return rc;
    }
    smem_open(s, p);
    *out = s;
    return GX_OK;
}

void gx_tsim_free(gx_tsim *s)
{
    if (!s)
        return;
    gx_tsim_par_free(s->par);
    gx_tsim_ext_free(s->ext);
    gx_memsys_free(s->ms); /* owns s->smem */
    free(s->hist);
    free(s->col_va);
    free(s->col_sm);
    free(s->col_cycle);
    free(s);
}

/* ---- shared memory: the bank model (smem.h) runs SR / SW records ----
 * The part is memsys's (gx_memsys_smem); the trace simulator feeds it: lanes
 * grouped into warp instructions by the model (gx_smem_record), costed per
 * SM. A profile whose smem section cannot run the model (null fields)
 * leaves shared records counted only, with the reason in the output. */
static void smem_open(gx_tsim *s, const gx_profile *p)
{
    (void)p; /* memsys built the part from the profile */
    s->smem = gx_memsys_smem(s->ms);
    snprintf(s->smem_note, sizeof s->smem_note, "%s", gx_memsys_smem_note(s->ms));
}

static void smem_record(gx_tsim *s, const gx_trace_rec *r)
{
    if (!s->smem)
        return;
    uint32_t sm = r->sm < s->sm_count ? r->sm : r->sm % s->sm_count;
    (void)gx_smem_record(s->smem, sm, r->warp, r->lane, r->op == GX_TRACE_SHARED_WRITE, r->addr,
                         r->size ? r->size : 1, NULL);
}

/* A record the L2 path does not model (shared memory, MAP, INVALIDATE):
 * counted; shared records go to the bank model. Translation is modelled by
 * its own module; until it runs here, MAP / INV records do not touch the L2. */
static __attribute__((noinline)) void other_record(gx_tsim *s, const gx_trace_rec *r)
{
    if (r->op >= GX_TRACE_SHARED_READ && r->op < GX_TRACE_OPS)
        s->other_count[r->op - GX_TRACE_SHARED_READ]++;
    if (r->op == GX_TRACE_SHARED_READ || r->op == GX_TRACE_SHARED_WRITE)
        smem_record(s, r);
}

/* Locate access i + D (a global one) ahead of time, when its frame is
 * already placed (gx_memsys_locate_ahead): 1 when loc is filled. */
static inline int look_ahead(gx_tsim *s, const gx_trace_rec *rec, uint64_t i, uint64_t n,
                             gx_l2_loc *loc)
{
    if (i + PREFETCH_DISTANCE >= n)
        return 0;
    const gx_trace_rec *a = &rec[i + PREFETCH_DISTANCE];
    if (!gx_trace_op_is_global(a->op))
        return 0;
    return gx_memsys_locate_ahead(s->ms, a->addr, a->sm < s->sm_count ? a->sm : a->sm % s->sm_count,
                                  loc);
}

/* The run loop, specialised on prefetching (pf is a constant in each copy).
 * Notes: the single-sector case is the straight path; statistics are kept
 * in locals and a 4-entry op array indexed by op & 3 (ops are validated by
 * the readers). Measured (callgrind, random 64 MiB trace, seed profile):
 * the loop's own share went from 81 to 58 instructions per access without
 * prefetching (~94 with it: the ring of locations, a second SM fold). */
static inline __attribute__((always_inline)) void run_loop(gx_tsim *s, const gx_trace_rec *rec,
                                                           uint64_t n, const int pf)
{
    const uint32_t smc = s->sm_count;
    gx_memsys *ms = s->ms;
    gx_cyc_sum total = s->total;
    double lo = s->min_cycles, hi = s->max_cycles;
    uint64_t l2n = 0, bytes = 0;
    uint64_t ops[4] = {0, 0, 0, 0};
    uint64_t *hist = s->hist;
    gx_l2_loc ring[PREFETCH_DISTANCE]; /* locations of accesses i .. i+D-1 */
    uint8_t have[PREFETCH_DISTANCE] = {0};
    uint64_t others = 0;
    for (uint64_t i = 0; i < n; i++) {
        const gx_trace_rec *r = &rec[i];
        const uint32_t slot = (uint32_t)(i % PREFETCH_DISTANCE);
        if (__builtin_expect(!gx_trace_op_is_global(r->op), 0)) {
            other_record(s, r);
            others++;
            if (pf)
                have[slot] = (uint8_t)look_ahead(s, rec, i, n, &ring[slot]);
            continue;
        }
        uint32_t sm = r->sm < smc ? r->sm : r->sm % smc;
        double lat = gx_memsys_access_off(ms, r->addr, r->size, sm, (gx_l2_op)r->op,
                                          pf && have[slot] ? &ring[slot] : NULL, &l2n);
        if (pf) /* the slot now serves access i + D */
            have[slot] = (uint8_t)look_ahead(s, rec, i, n, &ring[slot]);
        bytes += r->size;
        ops[r->op & 3]++;
        gx_cyc_add(&total, lat);
        lo = lat < lo ? lat : lo;
        hi = lat > hi ? lat : hi;
        int64_t b = (int64_t)(lat + 0.5); /* latencies are far below 2^63 */
        uint64_t bin = b > 0 ? (uint64_t)b : 0;
        hist[bin < GX_TSIM_LAT_BINS - 1 ? bin : GX_TSIM_LAT_BINS - 1]++;
    }
    for (int k = 0; k < 3; k++)
        s->op_count[k] += ops[k];
    s->op_count[0] += ops[3]; /* never: global ops are 0..2 */
    s->accesses += n - others;
    s->l2_accesses += l2n;
    s->bytes += bytes;
    s->total = total;
    s->min_cycles = lo;
    s->max_cycles = hi;
}

/* ---- translation off, batched: the default single-thread loop ----
 * Runs of global accesses that each stay within one sector are gathered
 * (VA, SM) into columns and run by gx_memsys_run_off (VA -> PA pass, then
 * the L2's batch run); any other record ends the run: a multi-sector
 * access goes through gx_memsys_access_off, a shared / MAP / INV record is
 * counted (other_record), each in trace order. Statistics are the same,
 * access for access, as run_loop's: the latencies are summed in access
 * order into the same total. */
static void run_batched(gx_tsim *s, const gx_trace_rec *rec, uint64_t n)
{
    const uint32_t smc = s->sm_count;
    const uint64_t smask = (uint64_t)s->sector_bytes - 1;
    gx_memsys *ms = s->ms;
    gx_l2_tally t = {s->total, s->min_cycles, s->max_cycles, s->hist, GX_TSIM_LAT_BINS, 0};
    uint64_t ops[4] = {0, 0, 0, 0}, bytes = 0, others = 0;
    uint64_t *va = s->col_va;
    uint32_t *sm = s->col_sm;
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        const gx_trace_rec *r = &rec[i];
        const int global = gx_trace_op_is_global(r->op);
        if (__builtin_expect(global && (r->addr & smask) + r->size <= smask + 1, 1)) {
            va[k] = r->addr;
            sm[k] = r->sm < smc ? r->sm : r->sm % smc;
            ops[r->op & 3]++;
            bytes += r->size;
            if (++k == TSIM_COLS) {
                gx_memsys_run_off(ms, va, sm, NULL, k, &t);
                k = 0;
            }
            continue;
        }
        gx_memsys_run_off(ms, va, sm, NULL, k, &t); /* the run before, in order */
        k = 0;
        if (!global) {
            other_record(s, r);
            others++;
            continue;
        }
        uint32_t rsm = r->sm < smc ? r->sm : r->sm % smc;
        gx_l2_tally_add(&t, gx_memsys_access_off(ms, r->addr, r->size, rsm, (gx_l2_op)r->op,
                                                 NULL, &t.sectors));
        ops[r->op & 3]++;
        bytes += r->size;
    }
    gx_memsys_run_off(ms, va, sm, NULL, k, &t);
    for (int j = 0; j < 3; j++)
        s->op_count[j] += ops[j];
    s->op_count[0] += ops[3]; /* never: global ops are 0..2 */
    s->accesses += n - others;
    s->l2_accesses += t.sectors;
    s->bytes += bytes;
    s->total = t.total;
    s->min_cycles = t.lo;
    s->max_cycles = t.hi;
}

/* ---- translation off, column batches ----
 * The decoder's columns are the run's input as they are: each maximal run
 * of global single-sector accesses of valid SMs goes to gx_memsys_run_off
 * straight from the columns; the record ending it is handled as
 * run_batched handles it. Op counts and bytes are the decoder's. */
int gx_tsim_takes_cols(const gx_tsim *s)
{
    /* a split run over threads takes columns too; a shard takes records
     * (the trace's digest is over records): tsim_par.c */
    return !s->xlate && s->prefetch && (!s->par || gx_tsim_par_takes_cols(s));
}

uint32_t gx_tsim_merge_bytes(const gx_tsim *s)
{
    return s->sector_bytes;
}

/* The batch's runs of global single-sector accesses of valid SMs, each
 * through gx_memsys_run_off straight from the columns, and the entries
 * between them in order (shared / MAP / INV counted, the others one at a
 * time). */
static void run_cols_scan(gx_tsim *s, const gx_trace_cols *c, gx_l2_tally *t)
{
    const uint32_t smc = s->sm_count;
    const uint64_t smask = (uint64_t)s->sector_bytes - 1, sec = smask + 1;
    gx_memsys *ms = s->ms;
    const uint64_t *addr = c->addr;
    const uint32_t *sm = c->sm;
    const uint16_t *size = c->size;
    const uint8_t *op = c->op;
    const size_t n = c->n;
    size_t jr = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && op[j] <= GX_TRACE_ATOMIC && sm[j] < smc &&
               (addr[j] & smask) + size[j] <= sec)
            j++;
        if (j > i)
            gx_memsys_run_off(ms, addr + i, sm + i, c->rep + i, j - i, t);
        if (j == n)
            break;
        if (op[j] > GX_TRACE_ATOMIC) {
            other_record(s, &c->rec[jr++]);
        } else {
            uint32_t rsm = sm[j] < smc ? sm[j] : sm[j] % smc;
            for (uint64_t q = 0; q <= c->rep[j]; q++) /* the entry and its folded repeats */
                gx_l2_tally_add(t, gx_memsys_access_off(ms, addr[j], size[j], rsm,
                                                        (gx_l2_op)op[j], NULL, &t->sectors));
        }
        i = j + 1;
    }
}

void gx_tsim_run_cols(gx_tsim *s, const gx_trace_cols *c)
{
    if (s->par) {
        gx_tsim_par_run_cols(s, c);
        return;
    }
    gx_l2_tally t = {s->total, s->min_cycles, s->max_cycles, s->hist, GX_TSIM_LAT_BINS, 0};
    /* the decoder's counts say the whole batch is one run (every entry
     * global, within one sector: the merge block, of an SM below the
     * model's): no scan (13 instructions an entry, random 64 MiB binary) */
    if (!c->n_rec && !c->n_wide && c->merge_bytes == s->sector_bytes && c->sm_bound &&
        c->sm_bound <= s->sm_count)
        /* no repeat folded (records = entries): no repeat column (the L2's
         * statistics pass then reads none: 5 instructions an entry) */
        gx_memsys_run_off(s->ms, c->addr, c->sm, c->records == c->n ? NULL : c->rep, c->n,
                          &t);
    else
        run_cols_scan(s, c, &t);
    for (int k = 0; k < 3; k++)
        s->op_count[k] += c->ops[k];
    s->accesses += c->ops[0] + c->ops[1] + c->ops[2];
    s->l2_accesses += t.sectors;
    s->bytes += c->bytes;
    s->total = t.total;
    s->min_cycles = t.lo;
    s->max_cycles = t.hi;
}

/* ---- translation on: warp instructions through the whole memory system ----
 * Runs of instructions of one single-sector access (no warp id) go to
 * gx_memsys_run_alone in columns (run_alone); warp instructions are gathered
 * and go through gx_memsys_access_group (gx_tsim_flush). */

/* One access's latency into the statistics. */
static void account(gx_tsim *s, double lat)
{
    gx_cyc_add(&s->total, lat);
    s->min_cycles = lat < s->min_cycles ? lat : s->min_cycles;
    s->max_cycles = lat > s->max_cycles ? lat : s->max_cycles;
    int64_t b = (int64_t)(lat + 0.5);
    uint64_t bin = b > 0 ? (uint64_t)b : 0;
    s->hist[bin < GX_TSIM_LAT_BINS - 1 ? bin : GX_TSIM_LAT_BINS - 1]++;
}

void gx_tsim_flush(gx_tsim *s)
{
    if (!s->grp_n)
        return;
    /* issue cycle: the trace's, or (not given) when the previous access is
     * done: accesses one after another, as the totals assume */
    double t = s->grp_cycle ? (double)s->grp_cycle : gx_cyc_value(&s->total);
    gx_memsys_access_group(s->ms, s->grp, s->grp_n, t, s->grp_res);
    for (uint32_t i = 0; i < s->grp_n; i++) {
        const gx_memsys_req *q = &s->grp[i];
        s->op_count[q->op]++;
        s->bytes += q->size;
        s->l2_accesses += s->grp_res[i].sectors;
        account(s, s->grp_res[i].latency_cycles);
    }
    s->accesses += s->grp_n;
    s->grp_n = 0;
}

/* Does r continue the warp instruction being gathered? */
static int same_instruction(const gx_tsim *s, const gx_trace_rec *r, uint32_t sm)
{
    return s->grp_n && s->grp_n < GX_MEMSYS_MAX_GROUP && r->warp && r->warp == s->grp_warp &&
           sm == s->grp[0].sm && (double)(r->cycle - s->grp_cycle) <= s->window &&
           r->cycle >= s->grp_cycle;
}

static void control_record(gx_tsim *s, const gx_trace_rec *r)
{
    gx_tsim_flush(s);
    if (r->op == GX_TRACE_MAP)
        (void)gx_memsys_map(s->ms, r->addr, r->arg, r->size < 64 ? (uint64_t)1 << r->size : 0,
                            NULL);
    else
        gx_memsys_invalidate(s->ms, r->addr, r->arg);
}

/* An instruction alone (no warp id) of one global single-sector access. */
static inline int alone_in_sector(const gx_trace_rec *r, uint64_t smask)
{
    return !r->warp && gx_trace_op_is_global(r->op) && (r->addr & smask) + r->size <= smask + 1;
}

/* The maximal run of records alone_in_sector from rec[0] (rec[0] one of
 * them; n records at most) through gx_memsys_run_alone in column batches:
 * what gx_tsim_flush does for each of them one at a time (the same issue
 * cycles, statistics in the same order; gx_memsys_run_alone's notes).
 * Returns the records taken. */
static uint64_t run_alone(gx_tsim *s, const gx_trace_rec *rec, uint64_t n, uint64_t smask)
{
    const uint32_t smc = s->sm_count;
    gx_l2_tally t = {s->total, s->min_cycles, s->max_cycles, s->hist, GX_TSIM_LAT_BINS, 0};
    uint64_t ops[3] = {0, 0, 0}, bytes = 0, done = 0;
    for (size_t k = TSIM_COLS; k == TSIM_COLS;) {
        const size_t most = n - done < TSIM_COLS ? (size_t)(n - done) : TSIM_COLS;
        for (k = 0; k < most && alone_in_sector(&rec[done + k], smask); k++) {
            const gx_trace_rec *r = &rec[done + k];
            s->col_va[k] = r->addr;
            s->col_sm[k] = r->sm < smc ? r->sm : r->sm % smc;
            s->col_cycle[k] = r->cycle;
            ops[r->op]++;
            bytes += r->size;
        }
        gx_memsys_run_alone(s->ms, s->col_va, s->col_sm, s->col_cycle, k, &t);
        done += k;
    }
    for (int j = 0; j < 3; j++)
        s->op_count[j] += ops[j];
    s->bytes += bytes;
    s->accesses += done;
    s->l2_accesses += t.sectors;
    s->total = t.total;
    s->min_cycles = t.lo;
    s->max_cycles = t.hi;
    return done;
}

static void run_translated(gx_tsim *s, const gx_trace_rec *rec, uint64_t n)
{
    const uint64_t smask = (uint64_t)s->sector_bytes - 1;
    for (uint64_t i = 0; i < n; i++) {
        const gx_trace_rec *r = &rec[i];
        if (alone_in_sector(r, smask)) { /* a run of them: batched */
            gx_tsim_flush(s); /* the instruction gathered before, in order */
            i += run_alone(s, r, n - i, smask) - 1;
            continue;
        }
        if (r->op == GX_TRACE_MAP || r->op == GX_TRACE_INVALIDATE) {
            control_record(s, r);
            continue;
        }
        if (!gx_trace_op_is_global(r->op)) {
            other_record(s, r);
            continue;
        }
        uint32_t sm = r->sm < s->sm_count ? r->sm : r->sm % s->sm_count;
        if (!same_instruction(s, r, sm)) {
            gx_tsim_flush(s);
            s->grp_warp = r->warp;
            s->grp_cycle = r->cycle;
        }
        s->grp[s->grp_n++] = (gx_memsys_req){r->addr, sm, r->size, r->op};
        if (!r->warp)
            gx_tsim_flush(s); /* an instruction alone */
    }
}

void gx_tsim_run(gx_tsim *s, const gx_trace_rec *rec, uint64_t n)
{
    if (s->par) /* threads or a shard: tsim_par.c */
        gx_tsim_par_run(s, rec, n);
    else if (s->xlate)
        run_translated(s, rec, n);
    else if (s->prefetch)
        run_batched(s, rec, n);
    else
        run_loop(s, rec, n, 0);
}

void gx_tsim_get_stats(const gx_tsim *s, gx_tsim_stats *st)
{
    memset(st, 0, sizeof *st);
    gx_l2_stats ls;
    if (s->ext) /* gathered from threads or merged partials */
        ls = (gx_l2_stats){{s->ext->level[0], s->ext->level[1]}, s->ext->dram_accesses,
                           s->ext->slices, s->ext->slice_accesses};
    else
        gx_l2_get_stats(gx_memsys_l2(s->ms), &ls);
    st->accesses = s->accesses;
    st->reads = s->op_count[GX_TRACE_READ];
    st->writes = s->op_count[GX_TRACE_WRITE];
    st->atomics = s->op_count[GX_TRACE_ATOMIC];
    st->shared_reads = s->other_count[0];
    st->shared_writes = s->other_count[1];
    st->maps = s->other_count[2];
    st->invalidations = s->other_count[3];
    st->bytes = s->bytes;
    st->l2_accesses = s->l2_accesses;
    for (int l = 0; l < 2; l++) {
        st->level_accesses[l] = ls.level[l].accesses;
        st->level_hits[l] = ls.level[l].hits;
        st->level_sector_misses[l] = ls.level[l].sector_misses;
        st->level_line_misses[l] = ls.level[l].line_misses;
    }
    st->dram_accesses = ls.dram_accesses;
    st->slices = ls.slices;
    st->slice_accesses = ls.slice_accesses;
    st->lat_hist = s->hist;
    st->total_cycles = gx_cyc_value(&s->total);
    st->min_cycles = s->accesses ? s->min_cycles : NAN;
    st->max_cycles = s->accesses ? s->max_cycles : NAN;
}

double gx_tsim_latency_quantile(const gx_tsim_stats *st, double q)
{
    if (!st->accesses || !st->lat_hist)
        return NAN;
    /* the smallest latency L with count(lat <= L) >= q * n (at least 1) */
    double need = ceil(q * (double)st->accesses);
    if (need < 1)
        need = 1;
    uint64_t cum = 0;
    for (uint32_t b = 0; b < GX_TSIM_LAT_BINS; b++) {
        cum += st->lat_hist[b];
        if ((double)cum >= need)
            return (double)b;
    }
    return (double)(GX_TSIM_LAT_BINS - 1);
}

/* ------------------------------------------------------------------ */
/* reporting */

typedef struct slice_summary {
    uint64_t sum, min, max;
    double mean, imbalance;
} slice_summary;

static slice_summary summarize_slices(const gx_tsim_stats *st)
{
    slice_summary r = {0, UINT64_MAX, 0, 0, 0};
    for (uint32_t i = 0; i < st->slices; i++) {
        uint64_t v = st->slice_accesses[i];
        r.sum += v;
        r.min = v < r.min ? v : r.min;
        r.max = v > r.max ? v : r.max;
    }
    if (!st->slices)
        r.min = 0;
    r.mean = st->slices ? (double)r.sum / st->slices : 0;
    r.imbalance = r.mean > 0 ? (double)r.max / r.mean : 0;
    return r;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0;
}

/* Histogram display buckets: width a power of two so that [min, max] fits
 * in at most 32 buckets. */
static void bucket_layout(const gx_tsim_stats *st, uint32_t *first_bin, uint32_t *last_bin,
                          uint32_t *width)
{
    uint32_t a = 0, b = 0;
    int seen = 0;
    for (uint32_t i = 0; i < GX_TSIM_LAT_BINS; i++)
        if (st->lat_hist[i]) {
            if (!seen)
                a = i;
            b = i;
            seen = 1;
        }
    uint32_t w = 1;
    while ((b - a) / w >= 32)
        w *= 2;
    *width = w;
    *first_bin = a / w * w;
    *last_bin = b;
}

static uint64_t bucket_count(const gx_tsim_stats *st, uint32_t lo, uint32_t w)
{
    uint64_t c = 0;
    for (uint32_t i = lo; i < lo + w && i < GX_TSIM_LAT_BINS; i++)
        c += st->lat_hist[i];
    return c;
}

static void json_level(FILE *f, const gx_tsim_stats *st, int l)
{
    fprintf(f,
            "{\"accesses\": %llu, \"hits\": %llu, \"sector_misses\": %llu, "
            "\"line_misses\": %llu, \"hit_rate\": %.6f}",
            (unsigned long long)st->level_accesses[l], (unsigned long long)st->level_hits[l],
            (unsigned long long)st->level_sector_misses[l],
            (unsigned long long)st->level_line_misses[l],
            ratio(st->level_hits[l], st->level_accesses[l]));
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static double num_or_zero(double x)
{
    return isfinite(x) ? x : 0;
}

/* ---- the parts a merge of partials carries as rendered text (ms NULL) ---- */
static int smem_on(const gx_tsim *s)
{
    return s->ms ? s->smem != NULL : s->ext && s->ext->smem_on;
}

static void put_block(FILE *f, const char *text)
{
    if (text)
        fputs(text, f);
}

static void write_translation(const gx_tsim *s, FILE *f, int json)
{
    if (!s->ms)
        put_block(f, s->ext ? (json ? s->ext->xlate_json : s->ext->xlate_text) : NULL);
    else if (json)
        gx_memsys_write_translation_json(s->ms, f);
    else
        gx_memsys_write_translation_text(s->ms, f);
}

static void write_smem(const gx_tsim *s, FILE *f, int json)
{
    if (!s->ms)
        put_block(f, s->ext ? (json ? s->ext->smem_json : s->ext->smem_text) : NULL);
    else if (json)
        gx_smem_write_json(s->smem, f);
    else
        gx_smem_write_text(s->smem, f);
}

int gx_tsim_write_json(const gx_tsim *s, FILE *f)
{
    gx_tsim_stats st;
    gx_tsim_get_stats(s, &st);
    slice_summary ss = summarize_slices(&st);
    int nf = s->topo == GX_TOPO_NEAR_FAR;
    fprintf(f, "{\n  \"format\": \"gpuxray-sim-stats\",\n  \"version\": 1,\n  \"profile\": ");
    json_string(f, s->name);
    fprintf(f, ",\n  \"topology\": \"%s\",\n", gx_topology_name(s->topo));
    fprintf(f,
            "  \"config\": {\"noise\": %s, \"skew\": %s, \"seed\": %llu, \"frames_seed\": %llu, "
            "\"page_bytes\": %llu, \"phys_bytes\": %llu, \"sector_bytes\": %u},\n",
            s->cfg.noise ? "true" : "false", s->cfg.skew ? "true" : "false",
            (unsigned long long)s->cfg.seed, (unsigned long long)s->cfg.frames_seed,
            (unsigned long long)s->page_bytes, (unsigned long long)s->cfg.phys_bytes,
            s->sector_bytes);
    fprintf(f,
            "  \"trace\": {\"accesses\": %llu, \"reads\": %llu, \"writes\": %llu, "
            "\"atomics\": %llu, \"bytes\": %llu, \"l2_accesses\": %llu},\n",
            (unsigned long long)st.accesses, (unsigned long long)st.reads,
            (unsigned long long)st.writes, (unsigned long long)st.atomics,
            (unsigned long long)st.bytes, (unsigned long long)st.l2_accesses);
    uint64_t sr = smem_on(s) ? 0 : st.shared_reads, sw = smem_on(s) ? 0 : st.shared_writes;
    if (sr || sw || st.maps || st.invalidations)
        fprintf(f,
                "  \"ignored\": {\"shared_reads\": %llu, \"shared_writes\": %llu, \"maps\": %llu, "
                "\"invalidations\": %llu},\n",
                (unsigned long long)sr, (unsigned long long)sw,
                (unsigned long long)st.maps, (unsigned long long)st.invalidations);
    if (smem_on(s) && (st.shared_reads || st.shared_writes)) {
        fprintf(f, "  \"smem\": ");
        write_smem(s, f, 1);
        fprintf(f, ",\n");
    }
    write_translation(s, f, 1);
    fprintf(f, "  \"l2\": {\n    \"near\": ");
    json_level(f, &st, GX_L2_NEAR);
    fprintf(f, ",\n    \"far\": ");
    if (nf)
        json_level(f, &st, GX_L2_FAR);
    else
        fprintf(f, "null");
    fprintf(f, "\n  },\n  \"dram\": {\"accesses\": %llu, \"rate\": %.6f},\n",
            (unsigned long long)st.dram_accesses, ratio(st.dram_accesses, st.l2_accesses));
    fprintf(f,
            "  \"slices\": {\"count\": %u, \"min\": %llu, \"max\": %llu, \"mean\": %.3f, "
            "\"imbalance\": %.6f,\n    \"accesses\": [",
            st.slices, (unsigned long long)ss.min, (unsigned long long)ss.max, ss.mean,
            ss.imbalance);
    for (uint32_t i = 0; i < st.slices; i++)
        fprintf(f, "%s%llu", i ? (i % 16 ? ", " : ",\n      ") : "",
                (unsigned long long)st.slice_accesses[i]);
    fprintf(f, "]},\n");
    double mean = st.accesses ? st.total_cycles / (double)st.accesses : 0;
    fprintf(f,
            "  \"latency\": {\"mean_cycles\": %.3f, \"p50_cycles\": %.0f, \"p99_cycles\": %.0f, "
            "\"min_cycles\": %.3f, \"max_cycles\": %.3f,",
            mean, num_or_zero(gx_tsim_latency_quantile(&st, 0.5)),
            num_or_zero(gx_tsim_latency_quantile(&st, 0.99)), num_or_zero(st.min_cycles),
            num_or_zero(st.max_cycles));
    /* accesses past the histogram's last bin: the percentiles are lower bounds */
    uint64_t past = st.lat_hist ? st.lat_hist[GX_TSIM_LAT_BINS - 1] : 0;
    if (past && st.max_cycles >= GX_TSIM_LAT_BINS - 1)
        fprintf(f, " \"past_range\": {\"from_cycles\": %d, \"count\": %llu},",
                GX_TSIM_LAT_BINS - 1, (unsigned long long)past);
    fprintf(f, "\n    \"histogram\": [");
    if (st.accesses) {
        uint32_t a, b, w;
        bucket_layout(&st, &a, &b, &w);
        for (uint32_t lo = a, k = 0; lo <= b; lo += w, k++)
            fprintf(f, "%s{\"lo\": %u, \"hi\": %u, \"count\": %llu}",
                    k ? ",\n      " : "\n      ", lo, lo + w,
                    (unsigned long long)bucket_count(&st, lo, w));
        fprintf(f, "\n    ");
    }
    fprintf(f, "]},\n");
    fprintf(f, "  \"cycles\": {\"total\": %.3f, \"per_access\": %.3f}\n}\n", st.total_cycles,
            mean);
    return ferror(f) ? GX_EIO : GX_OK;
}

static void text_level(FILE *f, const char *name, const gx_tsim_stats *st, int l)
{
    uint64_t n = st->level_accesses[l];
    fprintf(f, "%-8s accesses %llu, hits %llu (%.2f%%), sector misses %llu (%.2f%%), "
               "line misses %llu (%.2f%%)\n",
            name, (unsigned long long)n, (unsigned long long)st->level_hits[l],
            100 * ratio(st->level_hits[l], n), (unsigned long long)st->level_sector_misses[l],
            100 * ratio(st->level_sector_misses[l], n),
            (unsigned long long)st->level_line_misses[l],
            100 * ratio(st->level_line_misses[l], n));
}

/* Indices of the k slices with the most (dir > 0) or fewest accesses. */
static void pick_slices(const gx_tsim_stats *st, int dir, uint32_t *out, int k)
{
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (uint32_t i = 0; i < st->slices; i++) {
            int used = 0;
            for (int q = 0; q < j; q++)
                used |= out[q] == i;
            if (used)
                continue;
            uint64_t v = st->slice_accesses[i];
            if (best < 0 || (dir > 0 ? v > st->slice_accesses[best]
                                     : v < st->slice_accesses[best]))
                best = (int)i;
        }
        out[j] = (uint32_t)best;
    }
}

static void text_slices(FILE *f, const gx_tsim_stats *st, int top)
{
    slice_summary ss = summarize_slices(st);
    fprintf(f, "slices   %u, accesses per slice min %llu, mean %.1f, max %llu; imbalance "
               "(max/mean) %.3f\n",
            st->slices, (unsigned long long)ss.min, ss.mean, (unsigned long long)ss.max,
            ss.imbalance);
    if (top > (int)st->slices)
        top = (int)st->slices;
    if (top <= 0 || !ss.sum)
        return;
    uint32_t idx[64];
    if (top > 64)
        top = 64;
    for (int dir = 1; dir >= -1; dir -= 2) {
        pick_slices(st, dir, idx, top);
        fprintf(f, "         %s:", dir > 0 ? "busiest" : "idlest ");
        for (int j = 0; j < top; j++)
            fprintf(f, " %u (%.2f%%)", idx[j], 100 * ratio(st->slice_accesses[idx[j]], ss.sum));
        fputc('\n', f);
    }
}

static void text_latency(FILE *f, const gx_tsim_stats *st)
{
    double mean = st->accesses ? st->total_cycles / (double)st->accesses : 0;
    fprintf(f, "latency  mean %.1f, p50 %.0f, p99 %.0f, min %.1f, max %.1f cycles\n", mean,
            num_or_zero(gx_tsim_latency_quantile(st, 0.5)),
            num_or_zero(gx_tsim_latency_quantile(st, 0.99)), num_or_zero(st->min_cycles),
            num_or_zero(st->max_cycles));
    if (!st->accesses)
        return;
    uint32_t a, b, w;
    bucket_layout(st, &a, &b, &w);
    for (uint32_t lo = a; lo <= b; lo += w) {
        uint64_t c = bucket_count(st, lo, w);
        if (!c)
            continue;
        double frac = ratio(c, st->accesses);
        int bar = (int)(frac * 40 + 0.5);
        fprintf(f, "         %5u-%-5u %6.2f%% ", lo, lo + w - 1, 100 * frac);
        for (int i = 0; i < bar; i++)
            fputc('#', f);
        fputc('\n', f);
    }
}

int gx_tsim_write_text(const gx_tsim *s, FILE *f, int top_slices)
{
    gx_tsim_stats st;
    gx_tsim_get_stats(s, &st);
    int nf = s->topo == GX_TOPO_NEAR_FAR;
    fprintf(f, "profile  %s (%s, %u partitions, %u slices)%s\n", s->name,
            gx_topology_name(s->topo), s->partitions, s->slices, s->cfg.noise ? ", noise on" : "");
    fprintf(f, "trace    %llu accesses (%llu R, %llu W, %llu A), %llu bytes, %llu L2 sector "
               "accesses\n",
            (unsigned long long)st.accesses, (unsigned long long)st.reads,
            (unsigned long long)st.writes, (unsigned long long)st.atomics,
            (unsigned long long)st.bytes, (unsigned long long)st.l2_accesses);
    uint64_t sr = smem_on(s) ? 0 : st.shared_reads, sw = smem_on(s) ? 0 : st.shared_writes;
    if (sr || sw || st.maps || st.invalidations)
        fprintf(f, "ignored  %llu SR, %llu SW, %llu MAP, %llu INV records (not modelled by this "
                   "run)%s%s\n",
                (unsigned long long)sr, (unsigned long long)sw,
                (unsigned long long)st.maps, (unsigned long long)st.invalidations,
                s->smem_note[0] && (sr || sw) ? ": " : "", (sr || sw) ? s->smem_note : "");
    write_translation(s, f, 0);
    text_level(f, nf ? "L2 near" : "L2", &st, GX_L2_NEAR);
    if (nf)
        text_level(f, "L2 far", &st, GX_L2_FAR);
    fprintf(f, "DRAM     accesses %llu (%.2f%% of L2 accesses)\n",
            (unsigned long long)st.dram_accesses, 100 * ratio(st.dram_accesses, st.l2_accesses));
    text_slices(f, &st, top_slices);
    text_latency(f, &st);
    fprintf(f, "cycles   total %.0f, per access %.2f (latency-bound: accesses one after "
               "another)\n",
            st.total_cycles, st.accesses ? st.total_cycles / (double)st.accesses : 0);
    if (smem_on(s) && (st.shared_reads || st.shared_writes))
        write_smem(s, f, 0);
    return ferror(f) ? GX_EIO : GX_OK;
}

void gx_tsim_page_usage(const gx_tsim *s, uint64_t *pages, uint64_t *frames)
{
    if (!s->ms || (s->ext && s->ext->usage_here)) { /* merged partials, a pipeline */
        *pages = s->ext ? s->ext->pages : 0;
        *frames = s->ext ? s->ext->frames : 0;
        return;
    }
    gx_vmem_usage(gx_memsys_vmem(s->ms), pages, frames);
}

/* ---- for the threaded / sharded run (tsim_par.c) ---- */
void gx_tsim_other(gx_tsim *s, const gx_trace_rec *r)
{
    other_record(s, r);
}

void gx_tsim_account(gx_tsim *s, double lat)
{
    account(s, lat);
}
