/* cuda_open.c - the cuda target (Contract 2 of DESIGN.md): answers discovery's
 * primitives with kernels (src/kernels/gx_probe.cu, embedded as a fatbin)
 * on a real GPU, driven from C through the CUDA driver API opened with
 * dlopen (cuda_driver.h), so one gpuxray binary runs with and without a GPU.
 *
 * Models / semantics:
 * - info: name, SM count, clock (CLOCK_RATE), the API's L2 size (a hint),
 *   page_bytes = the driver's minimum allocation granularity for device
 *   memory (cuMemGetAllocationGranularity, 2 MiB on sm_80..sm_90: the GPU's
 *   large page), max_arena_bytes = min(free memory / 2, 64 GiB).
 * - arena: plain cuMemAlloc of bytes + one page, its base aligned up to a
 *   page so arena offsets and page offsets agree. The new arena is allocated
 *   before the old one is freed, so it never reuses the previous arena's
 *   frames (older ones it may).
 * - chase: the offsets are uploaded and two kernels build the pointer chain
 *   in the arena ON THE DEVICE (word off[i] <- address of word off[i+1]),
 *   detecting duplicate offsets (a chain visits each word once a round:
 *   duplicates are rejected with GX_EINVAL). The chain is cached: the same
 *   offsets again are not rebuilt unless the arena changed or a seq stored
 *   into it. One thread on the wanted SM walks warm then timed steps with
 *   ld.global.cg; mean = cycles between the two clock64 reads / steps.
 *   The walk's end pointer is checked against the expected offset.
 * - seq: ops packed (gx_kernels_abi.h) and run in chunks of what fits in
 *   shared memory (ops + per-op cycles); the cache state carries over
 *   between chunk launches (a launch touches a few lines of its own).
 * - prime_probe: one block of GX_PP_THREADS threads on the wanted SM loads
 *   the prime set `rounds` times (a block barrier after each round), then
 *   thread 0 times the probes. Prime offsets that do not
 *   fit in shared memory are read from device memory during the prime (one
 *   extra line per 16 prime offsets passes through L2). Probes beyond one
 *   launch's capacity run in further launches without prime.
 * - SM choice: %smid values are learnt once by a census kernel at open;
 *   logical SM i is the i-th smallest %smid seen (the identity when the ids
 *   are 0..sm_count-1). Every probe block asks for more than half an SM's
 *   shared memory, so a launch of sm_count blocks puts one on each SM; the
 *   block on the wanted SM claims the job with the launch's ticket (never
 *   repeated, so nothing is cleared between launches), and one copy back
 *   brings the result slots and the cycles together.
 * - Bounds: each kernel gets a cycle budget (GX_CUDA_FIXED_CYCLES +
 *   GX_CUDA_CYCLES_PER_ACCESS per access; GX_CUDA_BUDGET_CYCLES in the
 *   environment overrides it, for tests) and stops itself with
 *   GX_ST_TIMEOUT; the host also polls with a wall-clock limit of twice the
 *   budget at the nominal clock + 5 s and gives the context up past it.
 *
 * - xchase: two windows (timed, thrashing), each a VA reservation (room
 *   for the longest chain of its stride when the driver grants it) whose
 *   touched granules are mapped (cuMemMap) onto one zeroed physical granule
 *   of its own; a window is kept while the stride stays and grows by
 *   mapping more granules. gx_xchase times every access (u16 cycles in
 *   shared memory, copied out after the run); timed rounds are split over
 *   launches of what shared memory holds, each later launch repeating one
 *   warm round. The thrashing block (claimed through res[AUX]) runs until
 *   the timed one is done.
 *
 * Notes: every driver call is checked; failures name the call and the
 * driver's error name and text. After a kernel fault or a host timeout the
 * context is unusable and every later call fails with GX_EDEVICE.
 *
 * Files (src/target/cuda/): cuda_driver.{h,c} (the driver API, dlopen),
 * cuda_context.c (checked calls, buffers, launches, arena), cuda_probes.c
 * (chase, seq, prime + probe, shared memory, contention), cuda_xchase.c (translation
 * chase), cuda_open.c (this file: the ops table, open); cuda_internal.h
 * what they share; cuda_debug.h counters for measurement tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

static const gx_target_ops cuda_ops = {
    .close = cuda_close,
    .arena = cuda_arena,
    .chase = cuda_chase,
    .seq = cuda_seq,
    .prime_probe = cuda_prime_probe,
    .smem_probe = cuda_smem_probe,
    .xchase = cuda_xchase,
    .contend = cuda_contend,
};

int gx_cuda_target_counters(const gx_target *t, uint64_t *launches, uint64_t *relaunches)
{
    if (!t || t->ops != &cuda_ops)
        return GX_EINVAL;
    const cuda_target *c = t->impl;
    *launches = c->launches;
    *relaunches = c->relaunches;
    return GX_OK;
}

int gx_cuda_target_hammer_loads(const gx_target *t, uint64_t *loads)
{
    if (!t || t->ops != &cuda_ops)
        return GX_EINVAL;
    *loads = ((const cuda_target *)t->impl)->hammer_loads;
    return GX_OK;
}

/* ---- open --------------------------------------------------------------- */

#ifdef GX_HAVE_KERNELS

static int get_attr(cuda_target *c, int attr, int *v)
{
    *v = 0;
    return c->api.DeviceGetAttribute(v, attr, c->dev) == GX_CUDA_SUCCESS && *v > 0;
}

/* Shared memory per probe block: more than half an SM's, so that no SM
 * ever holds two probe blocks; then a launch of sm_count blocks puts one
 * block on every SM. */
static int setup_pinning(cuda_target *c, gx_msg *msg)
{
    int per_sm = 0, optin = 0, reserved = 0;
    c->pin_smem = 48 * 1024;
    c->one_block_per_sm = 0;
    if (get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_SM, &per_sm) &&
        get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN, &optin)) {
        get_attr(c, GX_CU_ATTR_RESERVED_SMEM_PER_BLOCK, &reserved);
        uint32_t want = ((uint32_t)per_sm / 2 + 1024u + 127u) & ~127u;
        if (want <= (uint32_t)optin) {
            c->pin_smem = want;
            c->one_block_per_sm = 1;
        } else {
            c->pin_smem = (uint32_t)optin;
        }
    }
    /* prime offsets read from device memory pass through L2 (one line per
     * 16 offsets, every round) and can evict what a test watches: give
     * prime_probe all the shared memory a block may have */
    c->pp_smem = c->pin_smem;
    if (c->one_block_per_sm && (uint32_t)optin > c->pin_smem)
        c->pp_smem = (uint32_t)optin / 128u * 128u;
    CUfunction fs[] = {c->f_chase, c->f_seq, c->f_pp, c->f_census, c->f_xchase, c->f_contend};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        CU_OPEN(c,
                c->api.FuncSetAttribute(fs[i], GX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)(fs[i] == c->f_pp ? c->pp_smem : c->pin_smem)),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", msg);
    int maxt = 0;
    CU_OPEN(c, c->api.FuncGetAttribute(&maxt, GX_CU_FUNC_MAX_THREADS_PER_BLOCK, c->f_pp),
            "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", msg);
    c->pp_threads = maxt >= GX_PP_THREADS ? GX_PP_THREADS : (uint32_t)maxt / 32u * 32u;
    if (c->pp_threads == 0)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: gx_prime_probe cannot run a warp");
    (void)reserved;
    return GX_OK;
}

/* The shared-memory probe's block: the header and the 64 KiB window, and
 * at least pin_smem (one block per SM); the API's sizes go into info. */
static int setup_smem_probe(cuda_target *c, gx_target_info *info, gx_msg *msg)
{
    int per_sm = 0, optin = 0;
    if (get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_SM, &per_sm))
        info->smem_sm_bytes = (uint64_t)per_sm;
    if (get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN, &optin))
        info->smem_block_bytes = (uint64_t)optin;
    uint32_t want = GX_HDR_BYTES + GX_SMEM_PROBE_WINDOW;
    if (want < c->pin_smem)
        want = c->pin_smem;
    c->smem_probe_smem = 0;
    if (optin <= 0 || want > (uint32_t)optin)
        return GX_OK; /* smem_probe answers GX_EUNSUPPORTED */
    CU_OPEN(c,
            c->api.FuncSetAttribute(c->f_smem, GX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)want),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, gx_smem_probe)", msg);
    c->smem_probe_smem = want;
    return GX_OK;
}

/* Learn the %smid values: launch blocks that each count their SM and linger
 * so that the first wave lands on every SM. */
static int census(cuda_target *c, gx_msg *msg)
{
    int rc;
    const size_t bytes = GX_CENSUS_SLOTS * sizeof(uint32_t);
    uint32_t *seen = calloc(GX_CENSUS_SLOTS, sizeof *seen);
    c->smid_map = calloc(c->sm_count, sizeof *c->smid_map);
    if (!seen || !c->smid_map) {
        free(seen);
        return gx_fail(msg, GX_ENOMEM, "out of memory for the SM census");
    }
    rc = cuda_ensure_dev(c, &c->d_buf, &c->d_buf_bytes, bytes, msg);
    uint32_t found = 0;
    for (int attempt = 0; rc == GX_OK && attempt < 3 && found < c->sm_count; attempt++) {
        CUresult r = c->api.MemsetD8(c->d_buf, 0, bytes);
        if (r != GX_CUDA_SUCCESS) {
            rc = cuda_fail(c, r, GX_ENODEV, "no usable CUDA device: ", "cuMemsetD8 (census)", msg);
            break;
        }
        uint64_t linger = GX_CUDA_LINGER_CYCLES << attempt;
        void *params[] = {&c->d_buf, &linger};
        unsigned grid = c->sm_count * (c->one_block_per_sm ? 2u : 8u) << attempt;
        if ((rc = cuda_launch(c, c->f_census, "gx_census", grid, 32, c->pin_smem, params,
                              cuda_budget_for(c, grid), msg)) != GX_OK)
            break;
        r = c->api.MemcpyDtoH(seen, c->d_buf, bytes);
        if (r != GX_CUDA_SUCCESS) {
            rc = cuda_fail(c, r, GX_ENODEV, "no usable CUDA device: ", "cuMemcpyDtoH (census)",
                           msg);
            break;
        }
        found = 0;
        for (uint32_t id = 0; id < GX_CENSUS_IDS; id++)
            if (seen[id])
                found++;
    }
    if (rc == GX_OK && (found != c->sm_count || seen[GX_CENSUS_OVERFLOW]))
        rc = gx_fail(msg, GX_ENODEV,
                     "no usable CUDA device: the SM census saw %u SM ids (%u beyond %d) for %u "
                     "SMs (is another process using the GPU?)",
                     found, seen[GX_CENSUS_OVERFLOW], GX_CENSUS_IDS, c->sm_count);
    if (rc == GX_OK) {
        uint32_t k = 0;
        for (uint32_t id = 0; id < GX_CENSUS_IDS; id++)
            if (seen[id])
                c->smid_map[k++] = id;
    }
    free(seen);
    return rc;
}

static int load_module(cuda_target *c, int cc_major, int cc_minor, gx_msg *msg)
{
    CUresult r = c->api.ModuleLoadData(&c->mod, gx_kernels_fatbin);
    if (r != GX_CUDA_SUCCESS) {
        char b[256];
        return gx_fail(msg, GX_ENODEV,
                       "no usable CUDA device: cuModuleLoadData failed: %s (the embedded kernels "
                       "are for sm_80..sm_90 + compute_90 PTX; this GPU is sm_%d%d)",
                       gx_cu_strerror(&c->api, r, b, sizeof b), cc_major, cc_minor);
    }
    static const struct {
        const char *name;
        size_t off;
    } fn[] = {
        {"gx_chase", offsetof(cuda_target, f_chase)},
        {"gx_seq", offsetof(cuda_target, f_seq)},
        {"gx_prime_probe", offsetof(cuda_target, f_pp)},
        {"gx_chain_clear", offsetof(cuda_target, f_clear)},
        {"gx_chain_link", offsetof(cuda_target, f_link)},
        {"gx_census", offsetof(cuda_target, f_census)},
        {"gx_smem_probe", offsetof(cuda_target, f_smem)},
        {"gx_xchase", offsetof(cuda_target, f_xchase)},
        {"gx_contend", offsetof(cuda_target, f_contend)},
    };
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        CUfunction f = NULL;
        char what[96];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", fn[i].name);
        CU_OPEN(c, c->api.ModuleGetFunction(&f, c->mod, fn[i].name), what, msg);
        memcpy((char *)c + fn[i].off, &f, sizeof f);
    }
    return GX_OK;
}

static int fill_info(cuda_target *c, gx_target_info *info, gx_msg *msg)
{
    int v = 0;
    CU_OPEN(c, c->api.DeviceGetName(info->name, (int)sizeof info->name, c->dev), "cuDeviceGetName",
            msg);
    CU_OPEN(c, c->api.DeviceGetAttribute(&v, GX_CU_ATTR_MULTIPROCESSOR_COUNT, c->dev),
            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", msg);
    if (v <= 0)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: it reports %d SMs", v);
    c->sm_count = (uint32_t)v;
    info->sm_count = c->sm_count;
    CU_OPEN(c, c->api.DeviceGetAttribute(&v, GX_CU_ATTR_CLOCK_RATE, c->dev),
            "cuDeviceGetAttribute(CLOCK_RATE)", msg);
    info->sm_clock_mhz = v > 0 ? (uint32_t)(v / 1000) : 0;
    c->clock_hz = v > 0 ? 1000.0 * v : 1e9;
    CU_OPEN(c, c->api.DeviceGetAttribute(&v, GX_CU_ATTR_L2_CACHE_SIZE, c->dev),
            "cuDeviceGetAttribute(L2_CACHE_SIZE)", msg);
    info->api_l2_bytes = v > 0 ? (uint64_t)v : 0;

    gx_cu_alloc_prop prop;
    memset(&prop, 0, sizeof prop);
    prop.type = GX_CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = GX_CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = c->dev;
    size_t gran = 0;
    if (c->api.MemGetAllocationGranularity(&gran, &prop, GX_CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
            GX_CUDA_SUCCESS ||
        gran == 0 || (gran & (gran - 1)) != 0)
        gran = GX_CUDA_DEFAULT_PAGE_BYTES; /* the GPU's large page on sm_80..sm_90 */
    c->page_bytes = gran;
    info->page_bytes = gran;

    size_t free_b = 0, total_b = 0;
    CU_OPEN(c, c->api.MemGetInfo(&free_b, &total_b), "cuMemGetInfo", msg);
    uint64_t max = (uint64_t)free_b / 2;
    if (max > GX_CUDA_MAX_ARENA_BYTES)
        max = GX_CUDA_MAX_ARENA_BYTES;
    max = max / gran * gran;
    if (max < gran)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: only %zu bytes of device memory free",
                       free_b);
    info->max_arena_bytes = max;
    return GX_OK;
}

static int open_device(cuda_target *c, int device, gx_target_info *info, gx_msg *msg)
{
    int rc;
    if ((rc = gx_cu_api_load(&c->api, msg)) != GX_OK)
        return rc;
    CU_OPEN(c, c->api.Init(0), "cuInit", msg);
    int count = 0;
    CU_OPEN(c, c->api.DeviceGetCount(&count), "cuDeviceGetCount", msg);
    if (count <= 0)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: the driver found no CUDA devices");
    if (device >= count)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: cuda:%d requested but %d device%s found",
                       device, count, count == 1 ? "" : "s");
    CU_OPEN(c, c->api.DeviceGet(&c->dev, device), "cuDeviceGet", msg);
    int major = 0, minor = 0;
    CU_OPEN(c, c->api.DeviceGetAttribute(&major, GX_CU_ATTR_CC_MAJOR, c->dev),
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", msg);
    CU_OPEN(c, c->api.DeviceGetAttribute(&minor, GX_CU_ATTR_CC_MINOR, c->dev),
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", msg);
    CU_OPEN(c, c->api.DevicePrimaryCtxRetain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain", msg);
    CU_OPEN(c, c->api.CtxSetCurrent(c->ctx), "cuCtxSetCurrent", msg);
    if ((rc = fill_info(c, info, msg)) != GX_OK)
        return rc;
    if ((rc = load_module(c, major, minor, msg)) != GX_OK)
        return rc;
    if ((rc = setup_pinning(c, msg)) != GX_OK)
        return rc;
    if ((rc = setup_smem_probe(c, info, msg)) != GX_OK)
        return rc;
    if ((rc = cuda_ensure_out(c, 0, msg)) != GX_OK)
        return rc;
    if ((rc = census(c, msg)) != GX_OK)
        return rc;
    const char *b = getenv("GX_CUDA_BUDGET_CYCLES");
    if (b && *b)
        c->budget_override = strtoull(b, NULL, 0);
    return GX_OK;
}

int gx_cuda_target_open(int device, const gx_target_ops **ops, void **impl,
                        gx_target_info *info, gx_msg *msg)
{
    cuda_target *c = calloc(1, sizeof *c);
    if (!c)
        return gx_fail(msg, GX_ENOMEM, "out of memory opening the cuda target");
    memset(info, 0, sizeof *info);
    int rc = open_device(c, device, info, msg);
    if (rc != GX_OK) {
        cuda_close(c);
        return rc;
    }
    *ops = &cuda_ops;
    *impl = c;
    return GX_OK;
}

#else /* !GX_HAVE_KERNELS */

int gx_cuda_target_open(int device, const gx_target_ops **ops, void **impl,
                        gx_target_info *info, gx_msg *msg)
{
    (void)device;
    (void)ops;
    (void)impl;
    (void)info;
    (void)cuda_ops;
    return gx_fail(msg, GX_ENODEV,
                   "no usable CUDA device: gpuxray was built without CUDA kernels (nvcc not found)");
}

#endif
