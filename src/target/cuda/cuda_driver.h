/* cuda_driver.h - the few CUDA driver API types, constants and entry points
 * that the cuda target uses, declared here so the host builds without the
 * CUDA toolkit; libcuda.so.1 is opened with dlopen at run time, so one
 * gpuxray binary runs on machines with and without a GPU.
 *
 * Notes:
 * - Values and layouts follow the driver API's documented ABI (cuda.h,
 *   CUDA 11+). The versioned symbols (cuMemAlloc_v2 ...) are the ones with
 *   64-bit device pointers and sizes.
 * - GX_CUDA_LIB (environment) names another library to open instead of
 *   libcuda.so.1 (tests use it to check the "libcuda not found" path). */
#ifndef GPUXRAY_CUDA_DRIVER_H
#define GPUXRAY_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct gx_cu_ctx *CUcontext;
typedef struct gx_cu_mod *CUmodule;
typedef struct gx_cu_func *CUfunction;
typedef struct gx_cu_stream *CUstream;

#define GX_CUDA_SUCCESS 0
#define GX_CUDA_ERROR_NOT_READY 600

/* CUdevice_attribute values */
#define GX_CU_ATTR_CLOCK_RATE 13 /* kHz */
#define GX_CU_ATTR_MULTIPROCESSOR_COUNT 16
#define GX_CU_ATTR_L2_CACHE_SIZE 38
#define GX_CU_ATTR_CC_MAJOR 75
#define GX_CU_ATTR_CC_MINOR 76
#define GX_CU_ATTR_MAX_SMEM_PER_SM 81
#define GX_CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN 97
#define GX_CU_ATTR_RESERVED_SMEM_PER_BLOCK 111

/* CUfunction_attribute values */
#define GX_CU_FUNC_MAX_THREADS_PER_BLOCK 0
#define GX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* cuMemGetAllocationGranularity */
#define GX_CU_MEM_ALLOCATION_TYPE_PINNED 1
#define GX_CU_MEM_LOCATION_TYPE_DEVICE 1
#define GX_CU_MEM_ALLOC_GRANULARITY_MINIMUM 0

typedef struct gx_cu_alloc_prop { /* CUmemAllocationProp (v1) */
    int type;                 /* CUmemAllocationType */
    int requested_handle_types;
    struct {
        int type; /* CUmemLocationType */
        int id;
    } location;
    void *win32_handle_meta_data;
    struct {
        unsigned char compression_type;
        unsigned char gpu_direct_rdma_capable;
        unsigned short usage;
        unsigned char reserved[4];
    } alloc_flags;
} gx_cu_alloc_prop;

/* virtual memory management (cuMemCreate ...): optional entry points */
typedef unsigned long long CUmemGenericAllocationHandle;
#define GX_CU_MEM_ACCESS_FLAGS_PROT_READWRITE 3
typedef struct gx_cu_access_desc { /* CUmemAccessDesc */
    struct {
        int type; /* CUmemLocationType */
        int id;
    } location;
    int flags; /* CUmemAccess_flags */
} gx_cu_access_desc;

typedef struct gx_cu_api {
    void *lib;
    CUresult (*Init)(unsigned flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*MemAlloc)(CUdeviceptr *dptr, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr dptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemsetD8)(CUdeviceptr dst, unsigned char value, size_t n);
    CUresult (*MemGetAllocationGranularity)(size_t *granularity, const gx_cu_alloc_prop *prop,
                                            int option);
    CUresult (*ModuleLoadData)(CUmodule *mod, const void *image);
    CUresult (*ModuleUnload)(CUmodule mod);
    CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule mod, const char *name);
    CUresult (*FuncSetAttribute)(CUfunction f, int attrib, int value);
    CUresult (*FuncGetAttribute)(int *value, int attrib, CUfunction f);
    CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned smem_bytes, CUstream stream,
                             void **params, void **extra);
    CUresult (*StreamQuery)(CUstream stream);
    CUresult (*GetErrorName)(CUresult err, const char **name);
    CUresult (*GetErrorString)(CUresult err, const char **text);
    /* optional (NULL when the driver lacks them): the translation chase's
     * windows, one physical granule mapped at many places */
    CUresult (*MemCreate)(CUmemGenericAllocationHandle *h, size_t size,
                          const gx_cu_alloc_prop *prop, unsigned long long flags);
    CUresult (*MemRelease)(CUmemGenericAllocationHandle h);
    CUresult (*MemAddressReserve)(CUdeviceptr *ptr, size_t size, size_t alignment,
                                  CUdeviceptr addr, unsigned long long flags);
    CUresult (*MemAddressFree)(CUdeviceptr ptr, size_t size);
    CUresult (*MemMap)(CUdeviceptr ptr, size_t size, size_t offset,
                       CUmemGenericAllocationHandle h, unsigned long long flags);
    CUresult (*MemUnmap)(CUdeviceptr ptr, size_t size);
    CUresult (*MemSetAccess)(CUdeviceptr ptr, size_t size, const gx_cu_access_desc *desc,
                             size_t count);
} gx_cu_api;

/* Open libcuda (or $GX_CUDA_LIB) and resolve every entry point. On failure
 * the message says which library or symbol is missing. */
int gx_cu_api_load(gx_cu_api *api, gx_msg *msg);
void gx_cu_api_unload(gx_cu_api *api);

/* "CUDA_ERROR_X (text)" for a driver error code; never NULL. */
const char *gx_cu_strerror(const gx_cu_api *api, CUresult r, char *buf, size_t len);

#endif
