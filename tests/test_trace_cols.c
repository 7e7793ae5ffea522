/* test_trace_cols.c - column batches (gx_trace_reader_next_cols) and the
 * trace simulator's batched paths: the columns hold the records the record
 * reader gives (with merging: the same records, repeats of a sector folded),
 * and every statistic of gx_tsim_run_cols and of gx_tsim_run equals the
 * one-access-at-a-time loop's (prefetch off), exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/trace.h"
#include "testutil.h"

/* A trace of 20000 records, each a 4-byte read of SM 0 that fill(t, i, x,
 * &r) then changes (x: a fresh pseudo-random word a record). */
static void build_trace(gx_trace *t, uint64_t x,
                        void (*fill)(const gx_trace *t, uint32_t i, uint64_t x, gx_trace_rec *r))
{
    gx_trace_init(t);
    assert_int_equal(gx_trace_reserve(t, 20000, NULL), GX_OK);
    for (uint32_t i = 0; i < 20000; i++) {
        gx_trace_rec r;
        memset(&r, 0, sizeof r);
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        r.size = 4;
        fill(t, i, x, &r);
        t->rec[t->n++] = r;
    }
}

/* A mixed trace: runs of 4-byte reads (repeats of sectors), writes and
 * atomics, multi-sector and unaligned accesses, several SMs (one beyond
 * sm_count, folded), shared records, random addresses. */
static void mixed_rec(const gx_trace *t, uint32_t i, uint64_t x, gx_trace_rec *r)
{
    (void)t;
    const uint32_t kind = (uint32_t)(x >> 58); /* 1..8 special: 1 in 8 records */
    r->addr = 0x100000 + 4ULL * i;
    if (kind == 1)
        r->addr = (x >> 8) & ((64u << 20) - 1);
    if (kind == 2)
        r->size = 64; /* multi-sector */
    if (kind == 3)
        r->addr += 30; /* crosses a sector */
    if (kind == 4)
        r->op = GX_TRACE_WRITE;
    if (kind == 5)
        r->op = GX_TRACE_ATOMIC;
    if (kind == 6)
        r->op = GX_TRACE_SHARED_READ, r->addr = i % 4096, r->lane = (uint8_t)(i % 32);
    if (kind == 7)
        r->sm = 3;
    if (kind == 8)
        r->sm = 200; /* beyond both profiles' SMs: folded */
}

static void mixed_trace(gx_trace *t)
{
    build_trace(t, 12345, mixed_rec);
}

/* A trace of many SMs: nearly every record changes the SM (round robin
 * over 8, the decoder's SM-change runs), 4-byte accesses at multiples of 4
 * and some not (2 bytes on), writes, and runs where the SM stays. */
static void sm_rec(const gx_trace *t, uint32_t i, uint64_t x, gx_trace_rec *r)
{
    const uint32_t kind = (uint32_t)(x >> 60); /* 0..15 */
    r->sm = i % 8;
    r->addr = ((x >> 8) & ((8u << 20) - 1)) & ~3ULL;
    if (kind == 1)
        r->addr += 2; /* not a multiple of the size */
    if (kind == 2)
        r->op = GX_TRACE_WRITE;
    if (kind >= 12 && i) /* the SM of the record before, the next word */
        r->sm = t->rec[i - 1].sm, r->addr = t->rec[i - 1].addr + 4;
}

static void sm_trace(gx_trace *t)
{
    build_trace(t, 777, sm_rec);
}

static void same_stats(const gx_tsim *a, const gx_tsim *b)
{
    gx_tsim_stats x, y;
    gx_tsim_get_stats(a, &x);
    gx_tsim_get_stats(b, &y);
    assert_int_equal(x.accesses, y.accesses);
    assert_int_equal(x.reads, y.reads);
    assert_int_equal(x.writes, y.writes);
    assert_int_equal(x.atomics, y.atomics);
    assert_int_equal(x.shared_reads, y.shared_reads);
    assert_int_equal(x.bytes, y.bytes);
    assert_int_equal(x.l2_accesses, y.l2_accesses);
    for (int l = 0; l < 2; l++) {
        assert_int_equal(x.level_accesses[l], y.level_accesses[l]);
        assert_int_equal(x.level_hits[l], y.level_hits[l]);
        assert_int_equal(x.level_sector_misses[l], y.level_sector_misses[l]);
        assert_int_equal(x.level_line_misses[l], y.level_line_misses[l]);
    }
    assert_int_equal(x.dram_accesses, y.dram_accesses);
    assert_int_equal(x.slices, y.slices);
    assert_memory_equal(x.slice_accesses, y.slice_accesses, x.slices * sizeof(uint64_t));
    assert_memory_equal(x.lat_hist, y.lat_hist, GX_TSIM_LAT_BINS * sizeof(uint64_t));
    assert_true(x.total_cycles == y.total_cycles); /* the same sum, bit for bit */
    assert_true(x.min_cycles == y.min_cycles && x.max_cycles == y.max_cycles);
}

static gx_tsim *new_sim(const gx_profile *p, int prefetch, int skew)
{
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    cfg.prefetch = prefetch;
    cfg.skew = skew;
    gx_tsim *s = NULL;
    gx_msg m;
    if (gx_tsim_new(p, &cfg, &s, &m) != GX_OK)
        fail_msg("tsim: %s", m.text);
    return s;
}

/* Read path through the column reader into sim (merging at its sector);
 * checks the batches against the records of the trace. */
static void run_cols_file(const char *path, const gx_trace *t, gx_tsim *sim, size_t cap)
{
    gx_trace_reader *rd = NULL;
    gx_msg m;
    assert_int_equal(gx_trace_reader_open(path, 0, &rd, &m), GX_OK);
    gx_trace_cols c;
    assert_int_equal(gx_trace_cols_init(&c, cap), GX_OK);
    c.merge_bytes = gx_tsim_merge_bytes(sim);
    uint64_t at = 0, folded = 0;
    for (;;) {
        assert_int_equal(gx_trace_reader_next_cols(rd, &c, &m), GX_OK);
        if (!c.n)
            break;
        size_t jr = 0, wide = 0;
        uint64_t recs = 0;
        for (size_t i = 0; i < c.n; i++) {
            const gx_trace_rec *r = &t->rec[at];
            /* n_wide: a global entry not within one merge block */
            if (gx_trace_op_is_global(r->op) &&
                r->addr / c.merge_bytes != (r->addr + r->size - 1) / c.merge_bytes)
                wide++;
            assert_int_equal(c.addr[i], r->addr);
            assert_int_equal(c.op[i], r->op);
            assert_int_equal(c.sm[i], r->sm);
            assert_int_equal(c.size[i], r->size);
            if (!gx_trace_op_is_global(r->op)) {
                assert_true(jr < c.n_rec);
                assert_int_equal(c.rec[jr].addr, r->addr);
                assert_int_equal(c.rec[jr].lane, r->lane);
                jr++;
                assert_int_equal(c.rep[i], 0);
            }
            /* a folded record: same sector, SM, size, a global op */
            for (uint32_t k = 1; k <= c.rep[i]; k++) {
                const gx_trace_rec *q = &t->rec[at + k];
                assert_true(gx_trace_op_is_global(q->op));
                assert_int_equal(q->addr / c.merge_bytes, r->addr / c.merge_bytes);
                assert_int_equal(q->sm, r->sm);
                assert_int_equal(q->size, r->size);
            }
            folded += c.rep[i];
            at += 1 + c.rep[i];
            recs += 1 + c.rep[i];
        }
        assert_int_equal(jr, c.n_rec);
        assert_int_equal(wide, c.n_wide);
        assert_int_equal(recs, c.records);
        gx_tsim_run_cols(sim, &c);
    }
    assert_int_equal(at, t->n);
    if (gx_trace_reader_format(rd) == GX_TRACE_BINARY && cap >= 8)
        assert_true(folded > 1000); /* the runs of 4-byte reads were folded */
    gx_trace_cols_free(&c);
    gx_trace_reader_close(rd);
}

#define RUNS_RECORDS 90000 /* ~1.6 MB of text */

/* Long runs of one line template each (the text decoder's template run):
 * sequential 64-byte and 128-byte reads (wider than a sector), 4-byte reads
 * crossing a sector, 1-byte writes, sequential 4-byte reads (folded at a
 * sector), each run a few hundred records. */
static void runs_trace(gx_trace *t)
{
    gx_trace_init(t);
    /* RUNS_RECORDS: text of more than the reader's 1 MiB buffer, so runs
     * meet its refills (lines across the buffer's end) */
    assert_int_equal(gx_trace_reserve(t, RUNS_RECORDS, NULL), GX_OK);
    static const uint16_t sizes[] = {64, 4, 128, 1, 4};
    for (uint32_t i = 0; i < RUNS_RECORDS; i++) {
        gx_trace_rec r;
        memset(&r, 0, sizeof r);
        const uint32_t run = i / 400 % 5;
        r.size = sizes[run];
        r.addr = run == 4 ? 0x200000 + 4ULL * i : 0x200000 + 32ULL * i + (run == 1 ? 30 : 0);
        r.op = run == 3 ? GX_TRACE_WRITE : GX_TRACE_READ;
        r.sm = run == 2 ? 5 : 0;
        t->rec[t->n++] = r;
    }
}

/* The runs, text and binary, without merging (every global entry wide,
 * nothing folded) and at the seed card's sector. */
static void test_cols_runs(void **state)
{
    (void)state;
    gx_trace t;
    runs_trace(&t);
    gx_msg m;
    const char *bin = gx_test_tmp("runs.bin"), *txt = gx_test_tmp("runs.txt");
    assert_int_equal(gx_trace_save(&t, bin, GX_TRACE_BINARY, &m), GX_OK);
    assert_int_equal(gx_trace_save(&t, txt, GX_TRACE_TEXT, &m), GX_OK);
    for (int f = 0; f < 2; f++) {
        gx_trace_reader *rd = NULL;
        assert_int_equal(gx_trace_reader_open(f ? txt : bin, 0, &rd, &m), GX_OK);
        gx_trace_cols c;
        assert_int_equal(gx_trace_cols_init(&c, 8192), GX_OK);
        c.merge_bytes = 0;
        size_t at = 0;
        for (;;) {
            assert_int_equal(gx_trace_reader_next_cols(rd, &c, &m), GX_OK);
            if (!c.n)
                break;
            assert_int_equal(c.n_wide, c.n);
            assert_int_equal(c.records, c.n);
            for (size_t i = 0; i < c.n; i++, at++) {
                assert_int_equal(c.addr[i], t.rec[at].addr);
                assert_int_equal(c.size[i], t.rec[at].size);
                assert_int_equal(c.sm[i], t.rec[at].sm);
                assert_int_equal(c.op[i], t.rec[at].op);
                assert_int_equal(c.rep[i], 0);
            }
        }
        assert_int_equal(at, t.n);
        gx_trace_cols_free(&c);
        gx_trace_reader_close(rd);
    }
    gx_profile *p = NULL;
    if (gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m) != GX_OK)
        fail_msg("seed: %s", m.text);
    p->tlb.present = 0;
    gx_tsim *ref = new_sim(p, 0, 1);
    gx_tsim_run(ref, t.rec, t.n);
    for (int f = 0; f < 2; f++) {
        gx_tsim *col = new_sim(p, -1, 1);
        run_cols_file(f ? txt : bin, &t, col, 8192);
        same_stats(ref, col);
        gx_tsim_free(col);
    }
    gx_tsim_free(ref);
    gx_profile_free(p);
    gx_trace_free(&t);
}

static void check_trace(const char *profile, int skew, void (*make)(gx_trace *))
{
    gx_profile *p = NULL;
    gx_msg m;
    if (gx_profile_load(gx_test_path(profile), &p, &m) != GX_OK)
        fail_msg("%s: %s", profile, m.text);
    p->tlb.present = 0; /* the L2's column paths (translation runs the general one) */
    gx_trace t;
    make(&t);
    const char *bin = gx_test_tmp("cols.bin"), *txt = gx_test_tmp("cols.txt");
    assert_int_equal(gx_trace_save(&t, bin, GX_TRACE_BINARY, &m), GX_OK);
    assert_int_equal(gx_trace_save(&t, txt, GX_TRACE_TEXT, &m), GX_OK);
    gx_tsim *ref = new_sim(p, 0, skew); /* one access at a time */
    gx_tsim_run(ref, t.rec, t.n);
    gx_tsim *rec = new_sim(p, -1, skew); /* records, batched */
    gx_tsim_run(rec, t.rec, t.n);
    same_stats(ref, rec);
    assert_true(gx_tsim_takes_cols(rec));
    assert_false(gx_tsim_takes_cols(ref));
    const size_t caps[] = {1, 7, 8192};
    for (int f = 0; f < 2; f++)
        for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
            gx_tsim *col = new_sim(p, -1, skew);
            run_cols_file(f ? txt : bin, &t, col, caps[ci]);
            same_stats(ref, col);
            gx_tsim_free(col);
        }
    gx_tsim_free(ref);
    gx_tsim_free(rec);
    gx_trace_free(&t);
    gx_profile_free(p);
}

static void check_profile(const char *profile, int skew)
{
    check_trace(profile, skew, mixed_trace);
    check_trace(profile, skew, sm_trace);
}

/* seed card: the L2's specialised path (PLRU, repeats without a lookup) */
static void test_cols_seed(void **state)
{
    (void)state;
    check_profile("profiles/seed-ampere-6mb.json", 1);
    check_profile("profiles/seed-ampere-6mb.json", 0);
}

/* near-far and LRU: the general path */
static void test_cols_general(void **state)
{
    (void)state;
    check_profile("profiles/hopper-like.json", 1);
    check_profile("profiles/nvidia-h200-model.json", 1);
}

/* A malformed record is reported by the column reader as by the record
 * reader (the source and the record index). */
static void test_cols_error(void **state)
{
    (void)state;
    const unsigned char bad[] = {'G', 'X', 'T', 'R', 'A', 'C', 'E', '2', 0, 0, 0, 0, 0, 0, 0, 0,
                                 0x01, 0x08, 0x0f};
    gx_trace_reader *rd = NULL;
    gx_msg m;
    assert_int_equal(gx_trace_reader_open_mem(bad, sizeof bad, "bad.bin", 0, &rd, &m), GX_OK);
    gx_trace_cols c;
    assert_int_equal(gx_trace_cols_init(&c, 16), GX_OK);
    c.merge_bytes = 32;
    assert_int_equal(gx_trace_reader_next_cols(rd, &c, &m), GX_EPARSE);
    assert_non_null(strstr(m.text, "bad.bin: record 1"));
    gx_trace_cols_free(&c);
    gx_trace_reader_close(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cols_seed),
        cmocka_unit_test(test_cols_general),
        cmocka_unit_test(test_cols_error),
        cmocka_unit_test(test_cols_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
