/* cuda_driver.c - opens the CUDA driver (libcuda.so.1) with dlopen and fills
 * the function table of cuda_driver.h; formats driver error codes.
 *
 * Notes: nothing here needs the CUDA toolkit at build time. A missing
 * library or entry point is reported with the dlerror() text, so the cuda
 * target can say "no usable CUDA device: <reason>". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"

typedef struct sym_slot {
    const char *name;
    size_t offset;
    int optional; /* missing: left NULL (the feature answers GX_EUNSUPPORTED) */
} sym_slot;

#define SLOT(field, sym) {sym, offsetof(gx_cu_api, field), 0}
#define OPT_SLOT(field, sym) {sym, offsetof(gx_cu_api, field), 1}
static const sym_slot slots[] = {
    SLOT(Init, "cuInit"),
    SLOT(DriverGetVersion, "cuDriverGetVersion"),
    SLOT(DeviceGetCount, "cuDeviceGetCount"),
    SLOT(DeviceGet, "cuDeviceGet"),
    SLOT(DeviceGetName, "cuDeviceGetName"),
    SLOT(DeviceGetAttribute, "cuDeviceGetAttribute"),
    SLOT(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    SLOT(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    SLOT(CtxSetCurrent, "cuCtxSetCurrent"),
    SLOT(MemGetInfo, "cuMemGetInfo_v2"),
    SLOT(MemAlloc, "cuMemAlloc_v2"),
    SLOT(MemFree, "cuMemFree_v2"),
    SLOT(MemcpyHtoD, "cuMemcpyHtoD_v2"),
    SLOT(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    SLOT(MemsetD8, "cuMemsetD8_v2"),
    SLOT(MemGetAllocationGranularity, "cuMemGetAllocationGranularity"),
    SLOT(ModuleLoadData, "cuModuleLoadData"),
    SLOT(ModuleUnload, "cuModuleUnload"),
    SLOT(ModuleGetFunction, "cuModuleGetFunction"),
    SLOT(FuncSetAttribute, "cuFuncSetAttribute"),
    SLOT(FuncGetAttribute, "cuFuncGetAttribute"),
    SLOT(LaunchKernel, "cuLaunchKernel"),
    SLOT(StreamQuery, "cuStreamQuery"),
    SLOT(GetErrorName, "cuGetErrorName"),
    SLOT(GetErrorString, "cuGetErrorString"),
    OPT_SLOT(MemCreate, "cuMemCreate"),
    OPT_SLOT(MemRelease, "cuMemRelease"),
    OPT_SLOT(MemAddressReserve, "cuMemAddressReserve"),
    OPT_SLOT(MemAddressFree, "cuMemAddressFree"),
    OPT_SLOT(MemMap, "cuMemMap"),
    OPT_SLOT(MemUnmap, "cuMemUnmap"),
    OPT_SLOT(MemSetAccess, "cuMemSetAccess"),
};
#undef SLOT
#undef OPT_SLOT

int gx_cu_api_load(gx_cu_api *api, gx_msg *msg)
{
    memset(api, 0, sizeof *api);
    const char *path = getenv("GX_CUDA_LIB");
    if (!path || !*path)
        path = "libcuda.so.1";
    dlerror();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: cannot load the CUDA driver %s (%s)",
                       path, e ? e : "unknown dlopen error");
    }
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        void *sym = dlsym(lib, slots[i].name);
        if (!sym && slots[i].optional)
            continue;
        if (!sym) {
            dlclose(lib);
            memset(api, 0, sizeof *api);
            return gx_fail(msg, GX_ENODEV,
                           "no usable CUDA device: the CUDA driver %s lacks %s (driver too old?)",
                           path, slots[i].name);
        }
        /* function pointers and void* have the same representation on POSIX */
        memcpy((char *)api + slots[i].offset, &sym, sizeof sym);
    }
    api->lib = lib;
    return GX_OK;
}

void gx_cu_api_unload(gx_cu_api *api)
{
    if (api->lib)
        dlclose(api->lib);
    memset(api, 0, sizeof *api);
}

const char *gx_cu_strerror(const gx_cu_api *api, CUresult r, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (api->GetErrorName && api->GetErrorName(r, &name) != GX_CUDA_SUCCESS)
        name = NULL;
    if (api->GetErrorString && api->GetErrorString(r, &text) != GX_CUDA_SUCCESS)
        text = NULL;
    if (name && text)
        snprintf(buf, len, "%s (%s)", name, text);
    else if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "CUDA error %d", r);
    return buf;
}
