# COMMBENCH_WITH_<DEP> = AUTO | ON | OFF
#   AUTO: use the dependency when it is found, build without it otherwise.
#   ON:   configuration fails when it is missing (a cluster build that must have it).
#   OFF:  never look for it.
# Each resolved dependency sets COMMBENCH_HAVE_<DEP> (ON/OFF) for the config header.

foreach(dep CUDA NCCL MPI HWLOC IBVERBS NVTX)
  set(COMMBENCH_WITH_${dep} AUTO CACHE STRING "Use ${dep}: AUTO, ON or OFF")
  set_property(CACHE COMMBENCH_WITH_${dep} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${COMMBENCH_WITH_${dep}}" _mode)
  if(NOT _mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "COMMBENCH_WITH_${dep}=${COMMBENCH_WITH_${dep}}: expected AUTO, ON or OFF")
  endif()
endforeach()

# Records the outcome of one dependency search and enforces ON.
function(_commbench_conclude dep found why_missing)
  string(TOUPPER "${COMMBENCH_WITH_${dep}}" _mode)
  if(found)
    set(COMMBENCH_HAVE_${dep} ON PARENT_SCOPE)
  else()
    if(_mode STREQUAL "ON")
      message(FATAL_ERROR "COMMBENCH_WITH_${dep}=ON but ${dep} was not found: ${why_missing}")
    endif()
    set(COMMBENCH_HAVE_${dep} OFF PARENT_SCOPE)
  endif()
endfunction()

macro(commbench_resolve_dependencies)
  # MPI: the bootstrap of every benchmark (ranks, hosts, agreement between ranks).
  set(COMMBENCH_HAVE_MPI OFF)
  if(NOT COMMBENCH_WITH_MPI STREQUAL "OFF")
    find_package(MPI COMPONENTS CXX)
    _commbench_conclude(MPI "${MPI_CXX_FOUND}" "install libopenmpi-dev (Debian) or load your MPI module")
  endif()

  # CUDA: architectures are an explicit list because the build host may have no GPU,
  # where 'native' would fail or silently pick nothing.
  set(COMMBENCH_HAVE_CUDA OFF)
  if(NOT COMMBENCH_WITH_CUDA STREQUAL "OFF")
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90;100" CACHE STRING "CUDA architectures to build for")
    endif()
    if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      enable_language(CUDA)
      find_package(CUDAToolkit)
      # CMake < 3.26 knows no nvcc flag for C++20 (nvcc >= 12 accepts -std=c++20) and CUDA
      # targets inherit CXX_STANDARD 20; teach it the flag instead of lowering the dialect.
      if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
        set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
        set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      endif()
    endif()
    _commbench_conclude(CUDA "${CUDAToolkit_FOUND}" "no nvcc/CUDA toolkit found (set CMAKE_CUDA_COMPILER)")
  endif()

  set(COMMBENCH_HAVE_NCCL OFF)
  if(NOT COMMBENCH_WITH_NCCL STREQUAL "OFF")
    if(COMMBENCH_HAVE_CUDA)
      find_package(NCCL)
      _commbench_conclude(NCCL "${NCCL_FOUND}" "nccl.h/libnccl not found (set NCCL_ROOT)")
    else()
      _commbench_conclude(NCCL OFF "NCCL needs CUDA, which is not enabled")
    endif()
  endif()

  set(COMMBENCH_HAVE_HWLOC OFF)
  if(NOT COMMBENCH_WITH_HWLOC STREQUAL "OFF")
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc>=2.0)
    endif()
    _commbench_conclude(HWLOC "${HWLOC_FOUND}" "install libhwloc-dev (hwloc >= 2.0)")
  endif()

  set(COMMBENCH_HAVE_IBVERBS OFF)
  if(NOT COMMBENCH_WITH_IBVERBS STREQUAL "OFF")
    find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
    find_library(IBVERBS_LIBRARY ibverbs)
    if(IBVERBS_INCLUDE_DIR AND IBVERBS_LIBRARY)
      set(_ibv_found ON)
    else()
      set(_ibv_found OFF)
    endif()
    _commbench_conclude(IBVERBS "${_ibv_found}" "install libibverbs-dev")
  endif()

  # NVTX3: header-only, shipped with the CUDA toolkit. Host-only builds use it too where
  # the header exists, since Nsight Systems traces CPU ranges without any GPU.
  set(COMMBENCH_HAVE_NVTX OFF)
  if(NOT COMMBENCH_WITH_NVTX STREQUAL "OFF")
    find_path(NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    if(NVTX_INCLUDE_DIR)
      set(_nvtx_found ON)
    else()
      set(_nvtx_found OFF)
    endif()
    _commbench_conclude(NVTX "${_nvtx_found}" "nvtx3/nvToolsExt.h not found (set NVTX_INCLUDE_DIR)")
  endif()
endmacro()
