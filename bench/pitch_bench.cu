// pitch_bench.cu - the advisor's check on a GPU: a column walk (warp w
// reads column w % cols over 32 consecutive rows, lane = row, then the next
// 32 rows, --reps passes; loads through L2 with ld.global.cg, so L1 does not
// absorb them) over a rows x cols
// float array at a given pitch, timed with CUDA events: the median of
// --runs launches after --warm launches, each launch walking the array
// (rows must be a multiple of 32). The touched lines (rows x cols x 4 B) fit in L2, so after
// the warm-up the kernel is bound by L2 slice throughput: the quantity the
// advisor predicts from the slice hash.
// Build: nvcc -O3 -arch=sm_90 -o pitch_bench bench/pitch_bench.cu
// Usage: pitch_bench ROWS COLS PITCH [PITCH ...]  ->  CSV on stdout
#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

__device__ __forceinline__ float ld_cg(const float *p)
{
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}

extern "C" __global__ void col_walk(const float *in, unsigned long long pitch, int rows, int cols,
                                    int reps, float *out)
{
    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long w = t / 32;
    int lane = (int)(t % 32);
    unsigned long long c = w % cols, r = (w / cols) * 32 + lane;
    if (r >= (unsigned long long)rows)
        return;
    /* pass k walks the next block of 32 rows (wrapping): every load a
     * different line, so none can be merged, and the touched lines stay
     * rows x cols x 4 B */
    float acc = 0;
    for (int k = 0; k < reps; k++) {
        unsigned long long rk = (r + 32ULL * (unsigned long long)k) % (unsigned long long)rows;
        acc += ld_cg(in + rk * pitch + c);
    }
    out[t] = acc;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: pitch_bench ROWS COLS PITCH [PITCH ...]\n");
        return 2;
    }
    int rows = atoi(argv[1]), cols = atoi(argv[2]);
    const int reps = 64, warm = 5, runs = 21, block = 256;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device,rows,cols,pitch_elems,pitch_bytes,reps,median_ms,min_ms,max_ms,l2_gbps\n");
    for (int a = 3; a < argc; a++) {
        unsigned long long pitch = strtoull(argv[a], NULL, 10);
        size_t bytes = (size_t)rows * pitch * sizeof(float);
        float *in = NULL, *out = NULL;
        CHECK(cudaMalloc(&in, bytes));
        CHECK(cudaMemset(in, 0, bytes));
        unsigned long long threads = (unsigned long long)cols * ((rows + 31) / 32) * 32;
        CHECK(cudaMalloc(&out, threads * sizeof(float)));
        unsigned grid = (unsigned)((threads + block - 1) / block);
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        std::vector<float> ms;
        for (int i = 0; i < warm + runs; i++) {
            CHECK(cudaEventRecord(e0));
            col_walk<<<grid, block>>>(in, pitch, rows, cols, reps, out);
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaGetLastError());
            float t = 0;
            CHECK(cudaEventElapsedTime(&t, e0, e1));
            if (i >= warm)
                ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        double med = ms[ms.size() / 2];
        double sectors = (double)rows * cols * reps; // one 32 B sector per load
        printf("%s,%d,%d,%llu,%llu,%d,%.4f,%.4f,%.4f,%.1f\n", prop.name, rows, cols, pitch,
               pitch * 4ULL, reps, med, ms.front(), ms.back(), sectors * 32 / (med * 1e-3) / 1e9);
        fflush(stdout);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
        CHECK(cudaEventDestroy(e0));
        CHECK(cudaEventDestroy(e1));
    }
    return 0;
}
