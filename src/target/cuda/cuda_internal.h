/* cuda_internal.h - private to the cuda target (src/target/cuda/): its
 * limits, its state (cuda_target, the translation-chase windows), the checked
 * driver calls (CU_TRY, CU_OPEN) and the functions one file of the backend
 * calls in another. The driver API comes from cuda_driver.h (dlopen). */
#ifndef GX_TARGET_CUDA_INTERNAL_H
#define GX_TARGET_CUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/clock.h"

#include "../../kernels/gx_kernels_abi.h"
#include "../target_impl.h"
#include "cuda_debug.h"
#include "cuda_driver.h"

#ifdef GX_HAVE_KERNELS
extern const unsigned char gx_kernels_fatbin[];
extern const size_t gx_kernels_fatbin_bytes;
#endif

#define GX_CUDA_MAX_ARENA_BYTES (64ULL << 30)
#define GX_CUDA_DEFAULT_PAGE_BYTES (2ULL << 20)
#define GX_CUDA_CYCLES_PER_ACCESS 10000ULL
#define GX_CUDA_FIXED_CYCLES 20000000ULL
#define GX_CUDA_LINGER_CYCLES 200000ULL /* ~0.1 ms: keeps a launch's first wave on every SM */
#define GX_CUDA_PIN_ATTEMPTS 4
#define GX_CUDA_BUILD_GRID_MAX 8192u

/* A translation chase window: a VA reservation whose granules touched so
 * far (by chains of any stride) are mapped onto one physical granule
 * (handle) of its own. */
typedef struct cuda_xwin {
    CUmemGenericAllocationHandle h; /* 0: none yet */
    CUdeviceptr va;                 /* 0: no reservation */
    size_t bytes;                   /* reserved */
    uint64_t *bits;                 /* bit k: granule k of the window is mapped */
    uint64_t mapped;                /* granules mapped */
    uint64_t *map_at;               /* their VAs (to unmap) */
    size_t map_cap;
} cuda_xwin;

typedef struct cuda_target {
    gx_cu_api api;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_chase, f_seq, f_pp, f_clear, f_link, f_census;
    CUfunction f_smem;      /* gx_smem_probe (gx_smem.cu) */
    CUfunction f_xchase;    /* gx_xchase */
    CUfunction f_contend;   /* gx_contend */
    cuda_xwin xwin[2];      /* translation chase windows: timed, thrashing */
    CUdeviceptr d_flags;    /* xchase: thrasher running / timed done / sink */
    CUdeviceptr d_xcyc;     /* xchase: u16 cycles of one launch */
    size_t d_xcyc_bytes;
    uint16_t *h_xcyc;
    size_t h_xcyc_cap;
    uint32_t smem_probe_smem; /* its dynamic shared memory: header + the 64 KiB window */
    uint32_t sm_count;
    uint32_t *smid_map;     /* logical SM -> %smid */
    uint32_t pin_smem;      /* dynamic shared memory of every probe block */
    uint32_t pp_smem;       /* prime_probe's: all an SM allows a block (>= pin_smem), so
                               large prime sets stay in shared memory */
    int one_block_per_sm;   /* pin_smem keeps a second block off an SM */
    uint32_t pp_threads;
    double clock_hz;
    uint64_t budget_override; /* GX_CUDA_BUDGET_CYCLES, 0: none */
    uint64_t page_bytes;
    CUdeviceptr arena_raw, arena;
    CUdeviceptr d_out; /* result slots, then per-op cycles (u32): one copy back */
    size_t d_out_bytes;
    CUdeviceptr d_buf; /* offsets / packed ops going in */
    size_t d_buf_bytes;
    uint64_t *h_buf;
    size_t h_buf_cap;
    uint64_t *h_out; /* host copy of d_out */
    size_t h_out_cap; /* u64 words */
    uint64_t ticket;  /* claim tickets: never repeated */
    uint64_t launches, relaunches;
    uint64_t hammer_loads; /* contend: the hammers' loads in the last launch */
    uint64_t *chain; /* offsets of the chain now built in the arena */
    size_t chain_n, chain_cap;
    int chain_valid;
    int broken;
} cuda_target;

/* A checked driver call inside a primitive: GX_EDEVICE naming the call. */
#define CU_TRY(c, call, what, msg)                                                  \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != GX_CUDA_SUCCESS)                                                  \
            return cuda_fail((c), r_, GX_EDEVICE, "cuda: ", (what), (msg));          \
    } while (0)

/* A checked driver call while opening: GX_ENODEV, "no usable CUDA device". */
#define CU_OPEN(c, call, what, msg)                                                 \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != GX_CUDA_SUCCESS)                                                  \
            return cuda_fail((c), r_, GX_ENODEV, "no usable CUDA device: ", (what), (msg)); \
    } while (0)

/* ---- cuda_context.c ---- */
int cuda_fail(cuda_target *c, CUresult r, int code, const char *prefix, const char *what,
              gx_msg *msg);
uint64_t cuda_budget_for(const cuda_target *c, uint64_t accesses);
int cuda_ensure_dev(cuda_target *c, CUdeviceptr *p, size_t *cap, size_t need, gx_msg *msg);
int cuda_ensure_host(void *pp, size_t *cap, size_t need, size_t elem, gx_msg *msg);
int cuda_launch(cuda_target *c, CUfunction f, const char *name, unsigned grid, unsigned block,
                unsigned smem, void **params, uint64_t budget, gx_msg *msg);
int cuda_ensure_out(cuda_target *c, size_t n_cycles, gx_msg *msg);
int cuda_read_out(cuda_target *c, size_t n_cycles, gx_msg *msg);
const uint32_t *cuda_out_cycles(const cuda_target *c);
int cuda_run_pinned(cuda_target *c, CUfunction f, const char *name, unsigned threads,
                    unsigned smem, uint32_t sm, void **params, uint64_t *linger,
                    uint32_t *smid, uint64_t *ticket, uint64_t budget, size_t n_cycles,
                    gx_msg *msg);
int cuda_check_usable(cuda_target *c, gx_msg *msg);
void cuda_xwin_drop(cuda_target *c, cuda_xwin *w, int all);
void cuda_close(void *impl);
int cuda_arena(void *impl, uint64_t bytes, gx_msg *msg);

/* ---- cuda_probes.c ---- */
int cuda_chase(void *impl, const gx_chase_req *req, double *mean_cycles, gx_msg *msg);
int cuda_seq(void *impl, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
             gx_msg *msg);
int cuda_prime_probe(void *impl, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                     const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                     gx_msg *msg);
int cuda_smem_probe(void *impl, const gx_smem_probe_req *req, double *cycles,
                    gx_msg *msg);
int cuda_contend(void *impl, const gx_contend_req *req, double *cycles, gx_msg *msg);

/* ---- cuda_xchase.c ---- */
int cuda_xchase(void *impl, const gx_xchase_req *req, double *cycles, gx_msg *msg);

#endif
