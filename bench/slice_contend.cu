// slice_contend.cu - does contention inside one L2 slice show in timing?
// A second signal for the slices (issue 12): the latency fingerprints over
// SMs merge slices that sit at the same distance from every SM, so lines of
// two slices read as one class. Here block 0 (one thread, the measurer)
// times one dependent ld.global.cg of every line B of a list while the other
// blocks ("hammers", one warp each at most --warps per block) load one line
// A back to back through L2. If the slice that holds A queues the hammers'
// requests, the lines B of A's slice come back later than the lines of other
// slices, and the set of slowed lines names A's slice whatever its distance
// from the SMs.
//
// Assumptions: one block per SM is not guaranteed, so the measurer waits
// until every hammer block has started (or a timeout) and records the SMs it
// ran on; the hammers stop at a flag the measurer sets. Loads use .cg (L2,
// not L1). Lines are 128 B apart (the H200's line); every B is loaded once
// untimed before its timed loads (an L2 hit in the near partition).
//
// Build: nvcc -O3 -arch=sm_90 -o slice_contend bench/slice_contend.cu
// Usage: slice_contend partition NLINES REPS SM[,SM...] THRESH WARPS
//   -> CSV sm,line,class,base,delta: classes found greedily (partition_main)
// Usage: slice_contend NLINES REPS A[,A...] HAMMERS:WARPS[,HAMMERS:WARPS...]
//   -> CSV on stdout: a,hammers,warps,started,line,mean_cycles,min_cycles
//   (HAMMERS 0 = no contention, the baseline), and the hammer SMs on stderr.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));               \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static const unsigned LINE_WORDS = 32; /* 128 B lines of 4-byte words */

__device__ __forceinline__ unsigned ld_cg(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long clk(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

__device__ __forceinline__ unsigned smid(void)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

struct ctl {
    unsigned started;
    unsigned stop;
    unsigned claimed;
    unsigned long long sink;
};

/* The measuring thread: every line once untimed, then reps timed loads
 * (clock, load, the value folded into the next address, clock); the mean
 * and the least of them. */
__device__ void measure_lines(const unsigned *buf, const unsigned *lines, int nlines, int reps,
                              unsigned zero, float *mean_out, float *min_out)
{
    unsigned dep = 0;
    for (int i = 0; i < nlines; i++) {
        const unsigned *p = buf + (size_t)lines[i] * LINE_WORDS;
        unsigned v = ld_cg(p);
        asm volatile("and.b32 %0, %1, %2;" : "=r"(dep) : "r"(v), "r"(zero));
        unsigned long long sum = 0, lo = ~0ull;
        for (int r = 0; r < reps; r++) {
            unsigned long long a = clk();
            v = ld_cg(p + dep);
            asm volatile("and.b32 %0, %1, %2;" : "=r"(dep) : "r"(v), "r"(zero));
            unsigned long long b = clk();
            unsigned long long d = b - a + dep;
            sum += d;
            lo = d < lo ? d : lo;
        }
        mean_out[i] = (float)sum / (float)reps;
        min_out[i] = (float)lo;
    }
}

/* A hammering warp: four loads of line a_line in flight until the stop flag. */
__device__ void hammer_line(const unsigned *buf, unsigned a_line, unsigned zero, ctl *c)
{
    const unsigned *p = buf + (size_t)a_line * LINE_WORDS;
    unsigned acc = 0;
    for (unsigned it = 0;; it++) {
        acc += ld_cg(p) + ld_cg(p + (acc & zero)) + ld_cg(p + (acc & zero) + 1) +
               ld_cg(p + (acc & zero) + 2);
        if ((it & 63) == 63 && *(volatile unsigned *)&c->stop)
            break;
    }
    if (acc == 0xdeadbeefu)
        c->sink = acc;
}

extern "C" __global__ void contend(const unsigned *buf, const unsigned *lines, int nlines,
                                   unsigned a_line, int warps, int reps, unsigned zero,
                                   ctl *c, float *mean_out, float *min_out, unsigned *sm_out)
{
    const int warp = threadIdx.x / 32;
    if (blockIdx.x == 0) {
        if (threadIdx.x != 0)
            return;
        sm_out[0] = smid();
        const unsigned want = gridDim.x - 1;
        unsigned long long t0 = clk();
        while (atomicAdd(&c->started, 0) < want && clk() - t0 < (1ull << 31))
            ;
        measure_lines(buf, lines, nlines, reps, zero, mean_out, min_out);
        atomicExch(&c->stop, 1u);
        return;
    }
    if (warp >= warps)
        return;
    if (threadIdx.x == 0) {
        sm_out[blockIdx.x] = smid();
        atomicAdd(&c->started, 1u);
    }
    hammer_line(buf, a_line, zero, c);
}


/* The same with the measurer pinned to SM want_sm: the first block that
 * finds itself there measures, every other block hammers with up to `warps`
 * warps (warps 0: they only start, for a baseline over the same grid). */
extern "C" __global__ void contend_on(const unsigned *buf, const unsigned *lines, int nlines,
                                      unsigned a_line, int warps, int reps, unsigned zero,
                                      unsigned want_sm, ctl *c, float *mean_out, float *min_out,
                                      unsigned *sm_out)
{
    __shared__ int role; /* 1 measurer, 0 hammer */
    const int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        unsigned s = smid();
        role = s == want_sm && atomicCAS(&c->claimed, 0u, 1u) == 0u;
        sm_out[blockIdx.x] = s;
        if (!role)
            atomicAdd(&c->started, 1u);
    }
    __syncthreads();
    if (role) {
        if (threadIdx.x != 0)
            return;
        const unsigned want = gridDim.x - 1;
        unsigned long long t0 = clk();
        while (atomicAdd(&c->started, 0) < want && clk() - t0 < (1ull << 31))
            ;
        measure_lines(buf, lines, nlines, reps, zero, mean_out, min_out);
        atomicExch(&c->stop, 1u);
        return;
    }
    if (warp >= warps)
        return;
    hammer_line(buf, a_line, zero, c);
}

static std::vector<unsigned> parse_list(const char *s);

/* Run contend_on over lines[]; mean/min per line. 0 when the measurer ran. */
static int run_on(const unsigned *buf, unsigned *dlines, const std::vector<unsigned> &lines,
                  unsigned a, int warps, int reps, unsigned sm, int grid, ctl *dc, float *dmean,
                  float *dmin, unsigned *dsm, std::vector<float> &mean, std::vector<float> &mn)
{
    size_t n = lines.size();
    CHECK(cudaMemcpy(dlines, lines.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0, sizeof(ctl)));
    contend_on<<<grid, 256>>>(buf, dlines, (int)n, a, warps, reps, 0u, sm, dc, dmean, dmin, dsm);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    ctl hc;
    CHECK(cudaMemcpy(&hc, dc, sizeof hc, cudaMemcpyDeviceToHost));
    mean.resize(n);
    mn.resize(n);
    CHECK(cudaMemcpy(mean.data(), dmean, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(mn.data(), dmin, n * sizeof(float), cudaMemcpyDeviceToHost));
    return hc.claimed ? 0 : -1;
}

/* partition mode: for each SM, classes of the first NLINES lines by
 * contention, greedily: hammer the lowest unassigned line, the unassigned
 * lines slowed by more than THRESH cycles over their baseline join its class.
 * Then each class is checked once from another member over every line. */
static int partition_main(int nlines, int reps, const char *sm_list, double thresh, int warps)
{
    std::vector<unsigned> sms = parse_list(sm_list);
    const size_t bytes = 64ull << 20;
    unsigned *buf, *dlines, *dsm;
    float *dmean, *dmin;
    ctl *dc;
    CHECK(cudaMalloc(&buf, bytes));
    CHECK(cudaMemset(buf, 0, bytes));
    CHECK(cudaMalloc(&dlines, nlines * sizeof(unsigned)));
    CHECK(cudaMalloc(&dmean, nlines * sizeof(float)));
    CHECK(cudaMalloc(&dmin, nlines * sizeof(float)));
    CHECK(cudaMalloc(&dsm, 4096 * sizeof(unsigned)));
    CHECK(cudaMalloc(&dc, sizeof(ctl)));
    int nsm = 0;
    CHECK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    const int grid = 2 * nsm;
    printf("sm,line,class,base,delta_in_own_class_run\n");
    for (unsigned sm : sms) {
        std::vector<unsigned> all(nlines);
        for (int i = 0; i < nlines; i++)
            all[i] = (unsigned)i;
        std::vector<float> base, bmin, mean, mn;
        if (run_on(buf, dlines, all, 0, 0, reps, sm, grid, dc, dmean, dmin, dsm, base, bmin)) {
            fprintf(stderr, "sm %u: no block landed there\n", sm);
            continue;
        }
        std::vector<int> cls(nlines, -1);
        std::vector<float> dl(nlines, 0);
        int ncls = 0;
        std::vector<unsigned> left = all;
        while (!left.empty() && ncls < 400) {
            unsigned a = left[0];
            run_on(buf, dlines, left, a, warps, reps, sm, grid, dc, dmean, dmin, dsm, mean, mn);
            std::vector<unsigned> rest;
            int members = 0;
            double in_lo = 1e9, out_hi = -1e9;
            for (size_t i = 0; i < left.size(); i++) {
                unsigned l = left[i];
                double d = mean[i] - base[l];
                if (d > thresh || l == a) {
                    cls[l] = ncls;
                    dl[l] = (float)d;
                    members++;
                    if (l != a && d < in_lo)
                        in_lo = d;
                } else {
                    rest.push_back(l);
                    if (d > out_hi)
                        out_hi = d;
                }
            }
            fprintf(stderr, "sm %u class %d rep %u: %d lines, members' least %.1f, others' most %.1f\n",
                    sm, ncls, a, members, in_lo, out_hi);
            left.swap(rest);
            ncls++;
        }
        /* check: each class from its second member, over every line */
        int agree = 0, checked = 0;
        for (int k = 0; k < ncls; k++) {
            unsigned rep2 = 0;
            int seen = 0;
            for (int i = 0; i < nlines; i++)
                if (cls[i] == k && seen++ == 1)
                    rep2 = (unsigned)i;
            if (seen < 2)
                continue;
            run_on(buf, dlines, all, rep2, warps, reps, sm, grid, dc, dmean, dmin, dsm, mean, mn);
            int bad = 0;
            for (int i = 0; i < nlines; i++) {
                int in = (mean[i] - base[i] > thresh) || (unsigned)i == rep2;
                if (in != (cls[i] == k))
                    bad++;
            }
            checked++;
            agree += bad == 0;
            if (bad)
                fprintf(stderr, "sm %u class %d check from %u: %d lines disagree\n", sm, k, rep2, bad);
        }
        fprintf(stderr, "sm %u: %d classes, %d of %d checks agree exactly\n", sm, ncls, agree, checked);
        for (int i = 0; i < nlines; i++)
            printf("%u,%d,%d,%.1f,%.1f\n", sm, i, cls[i], base[i], dl[i]);
    }
    return 0;
}

static std::vector<unsigned> parse_list(const char *s)
{
    std::vector<unsigned> v;
    while (*s) {
        v.push_back((unsigned)strtoul(s, (char **)&s, 0));
        if (*s == ',')
            s++;
        else if (*s && *s != ':')
            break;
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc == 7 && !strcmp(argv[1], "partition"))
        return partition_main(atoi(argv[2]), atoi(argv[3]), argv[4], atof(argv[5]), atoi(argv[6]));
    if (argc != 5) {
        fprintf(stderr, "usage: slice_contend NLINES REPS A[,A...] HAMMERS:WARPS[,...]\n");
        return 2;
    }
    const int nlines = atoi(argv[1]), reps = atoi(argv[2]);
    std::vector<unsigned> as = parse_list(argv[3]);
    std::vector<int> hams, wps;
    for (const char *s = argv[4]; *s;) {
        hams.push_back((int)strtol(s, (char **)&s, 10));
        if (*s != ':') {
            fprintf(stderr, "bad HAMMERS:WARPS list\n");
            return 2;
        }
        wps.push_back((int)strtol(s + 1, (char **)&s, 10));
        if (*s == ',')
            s++;
    }
    if (nlines <= 0 || reps <= 0 || as.empty()) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    const size_t bytes = 64ull << 20;
    unsigned *buf, *dlines, *dsm;
    float *dmean, *dmin;
    ctl *dc;
    CHECK(cudaMalloc(&buf, bytes));
    CHECK(cudaMemset(buf, 0, bytes));
    std::vector<unsigned> lines(nlines);
    for (int i = 0; i < nlines; i++)
        lines[i] = (unsigned)i;
    CHECK(cudaMalloc(&dlines, nlines * sizeof(unsigned)));
    CHECK(cudaMemcpy(dlines, lines.data(), nlines * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&dmean, nlines * sizeof(float)));
    CHECK(cudaMalloc(&dmin, nlines * sizeof(float)));
    CHECK(cudaMalloc(&dsm, 4096 * sizeof(unsigned)));
    CHECK(cudaMalloc(&dc, sizeof(ctl)));
    std::vector<float> mean(nlines), mn(nlines);
    std::vector<unsigned> sms(4096);
    printf("a,hammers,warps,started,line,mean_cycles,min_cycles\n");
    for (unsigned a : as) {
        for (size_t k = 0; k < hams.size(); k++) {
            CHECK(cudaMemset(dc, 0, sizeof(ctl)));
            int grid = 1 + hams[k];
            contend<<<grid, 256>>>(buf, dlines, nlines, a, wps[k], reps, 0u, dc, dmean, dmin,
                                   dsm);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            ctl hc;
            CHECK(cudaMemcpy(&hc, dc, sizeof hc, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(mean.data(), dmean, nlines * sizeof(float), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(mn.data(), dmin, nlines * sizeof(float), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(sms.data(), dsm, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
            fprintf(stderr, "a=%u hammers=%d warps=%d started=%u sms:", a, hams[k], wps[k],
                    hc.started);
            for (int g = 0; g < grid; g++)
                fprintf(stderr, " %u", sms[g]);
            fprintf(stderr, "\n");
            for (int i = 0; i < nlines; i++)
                printf("%u,%d,%d,%u,%d,%.1f,%.0f\n", a, hams[k], wps[k], hc.started, i, mean[i],
                       mn[i]);
        }
    }
    return 0;
}
