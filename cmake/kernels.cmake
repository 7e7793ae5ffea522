# kernels.cmake - build the CUDA kernels (src/kernels/gx_probe.cu) with nvcc
# into ONE fatbin (sm_80, sm_86, sm_89, sm_90 machine code + compute_90 PTX)
# and embed it in gx_target as a byte array (generated C file), with the
# compile definition GX_HAVE_KERNELS=1 for src/target/cuda/.
#
# Notes:
# - Included by the top CMakeLists.txt. Without nvcc (or with an nvcc that
#   lacks one of the architectures, or -DGX_KERNELS=OFF) the kernels are
#   skipped with a message and the cuda target reports that gpuxray was
#   built without CUDA kernels. The host C code never needs the toolkit.
# - nvcc is looked up as -DGX_NVCC=PATH, then on PATH, then under CUDA_HOME,
#   CUDA_PATH and the conventional /usr/local/cuda.
# - The fatbin is embedded by cmake/embed.cmake (KIND=binary), the build's
#   one embedding script.
# - gx_probe.cu is the one translation unit (nvcc -fatbin takes one input);
#   any other file under src/kernels/ (headers, extra .cu files it includes)
#   is a dependency.

option(GX_KERNELS "Build and embed the CUDA kernels when nvcc is found" ON)
set(GX_KERNELS_BUILT OFF)
if(NOT GX_KERNELS)
  message(STATUS "gpuxray: CUDA kernels disabled (GX_KERNELS=OFF); the cuda target will be unavailable")
  return()
endif()

find_program(GX_NVCC nvcc
  HINTS ENV CUDA_HOME ENV CUDA_PATH
  PATH_SUFFIXES bin
  PATHS /usr/local/cuda)
if(NOT GX_NVCC)
  message(STATUS "gpuxray: nvcc not found: building without CUDA kernels (the cuda target will report it)")
  return()
endif()

set(GX_KERNEL_ARCHS 80 86 89 90)
execute_process(COMMAND ${GX_NVCC} --list-gpu-arch
  OUTPUT_VARIABLE gx_nvcc_archs ERROR_QUIET RESULT_VARIABLE gx_nvcc_rc)
set(gx_missing)
foreach(a ${GX_KERNEL_ARCHS})
  if(NOT gx_nvcc_archs MATCHES "compute_${a}")
    list(APPEND gx_missing ${a})
  endif()
endforeach()
if(NOT gx_nvcc_rc EQUAL 0 OR gx_missing)
  message(STATUS "gpuxray: ${GX_NVCC} cannot build for every one of sm_80, sm_86, sm_89, sm_90 (missing: ${gx_missing}): building without CUDA kernels")
  return()
endif()

set(gx_gencode)
foreach(a ${GX_KERNEL_ARCHS})
  list(APPEND gx_gencode -gencode arch=compute_${a},code=sm_${a})
endforeach()
list(APPEND gx_gencode -gencode arch=compute_90,code=compute_90)

file(GLOB gx_kernel_deps CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/src/kernels/*.cu ${CMAKE_SOURCE_DIR}/src/kernels/*.h)
set(gx_fatbin ${CMAKE_BINARY_DIR}/gx_kernels.fatbin)
set(gx_fatbin_c ${CMAKE_BINARY_DIR}/gx_kernels_fatbin.c)
add_custom_command(OUTPUT ${gx_fatbin}
  COMMAND ${GX_NVCC} -fatbin -O3 ${gx_gencode} -o ${gx_fatbin}
          ${CMAKE_SOURCE_DIR}/src/kernels/gx_probe.cu
  DEPENDS ${gx_kernel_deps}
  COMMENT "nvcc: CUDA kernels -> gx_kernels.fatbin (sm_80 sm_86 sm_89 sm_90 + PTX)"
  VERBATIM)
add_custom_command(OUTPUT ${gx_fatbin_c}
  COMMAND ${CMAKE_COMMAND} -DIN=${gx_fatbin} -DOUT=${gx_fatbin_c} -DNAME=gx_kernels_fatbin
          -DSIZE_NAME=gx_kernels_fatbin_bytes -DKIND=binary -P ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${gx_fatbin} ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
  COMMENT "embedding gx_kernels.fatbin"
  VERBATIM)
target_sources(gx_target PRIVATE ${gx_fatbin_c})
target_compile_definitions(gx_target PRIVATE GX_HAVE_KERNELS=1)
set(GX_KERNELS_BUILT ON)
string(REPLACE ";" ", sm_" gx_arch_text "sm_${GX_KERNEL_ARCHS}")
message(STATUS "gpuxray: CUDA kernels built with ${GX_NVCC} for ${gx_arch_text} + compute_90 PTX")
