# Provides the imported target NormLab::Torch: LibTorch from the pinned PyPI `torch` wheel
# (CUDA build) that scripts/normlab.sh installs under $XDG_CACHE_HOME/normlab.
#
# We wire the libraries ourselves instead of calling the wheel's TorchConfig, which insists
# on a matching CUDA toolkit at build time. Only the CPU library is linked; the CUDA backend
# (libtorch_cuda.so and 3.5 GB of NVIDIA libraries) is loaded at run time when present
# (core/device/cuda_backend.cpp), so the same program runs from the .deb, which carries only
# NORMLAB_TORCH_RUNTIME_FILES.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/torch.version" NORMLAB_TORCH_VERSION LIMIT_COUNT 1)

if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_normlab_cache "$ENV{XDG_CACHE_HOME}/normlab")
else()
  set(_normlab_cache "$ENV{HOME}/.cache/normlab")
endif()
file(GLOB _torch_candidates
     "${_normlab_cache}/torch-${NORMLAB_TORCH_VERSION}/lib/python3*/site-packages/torch")
set(NORMLAB_TORCH_DIR "${_torch_candidates}" CACHE PATH
    "The `torch` package folder of the pinned wheel (holds lib/ and include/)")
if(NOT EXISTS "${NORMLAB_TORCH_DIR}/lib/libtorch_cpu.so")
  message(FATAL_ERROR
    "LibTorch ${NORMLAB_TORCH_VERSION} not found under ${_normlab_cache}. "
    "Run scripts/normlab.sh setup, or set NORMLAB_TORCH_DIR to a torch==${NORMLAB_TORCH_VERSION} "
    "wheel's torch/ folder.")
endif()

set(_lib "${NORMLAB_TORCH_DIR}/lib")
add_library(NormLab::Torch INTERFACE IMPORTED)
target_include_directories(NormLab::Torch SYSTEM INTERFACE
  "${NORMLAB_TORCH_DIR}/include"
  "${NORMLAB_TORCH_DIR}/include/torch/csrc/api/include")
target_compile_definitions(NormLab::Torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
# libtorch exports its own std::filesystem (pytorch/pytorch#133437), built against a newer
# libstdc++ than Debian 12's; libstdc++ must come first or calls like remove_all crash.
target_link_libraries(NormLab::Torch INTERFACE
  "-Wl,--no-as-needed" stdc++ "-Wl,--as-needed" "${_lib}/libtorch_cpu.so" "${_lib}/libc10.so")
message(STATUS "LibTorch: ${NORMLAB_TORCH_DIR}")

set(_nvidia "${NORMLAB_TORCH_DIR}/../nvidia/cu13")

# LibTorch's CUDA library, for the one small library that calls it directly
# (core/device/cuda_graph_capture.cpp) and is itself loaded only where the backend is.
# cuda_runtime.h includes crt/, which the wheel's CUDA packages leave out; scripts/normlab.sh
# installs the nvidia-cuda-crt wheel beside them.
set(NORMLAB_CUDA_CRT_INCLUDE "${_nvidia}/include" CACHE PATH
    "The folder holding CUDA's crt/ headers (the nvidia-cuda-crt wheel's include folder)")
if(NOT EXISTS "${NORMLAB_CUDA_CRT_INCLUDE}/crt/host_config.h")
  message(FATAL_ERROR
    "CUDA's crt/ headers are not in ${NORMLAB_CUDA_CRT_INCLUDE}: run scripts/normlab.sh setup, or "
    "set NORMLAB_CUDA_CRT_INCLUDE to the include folder of the nvidia-cuda-crt wheel that matches "
    "the CUDA runtime in ${_nvidia}.")
endif()
add_library(NormLab::TorchCuda INTERFACE IMPORTED)
target_include_directories(NormLab::TorchCuda SYSTEM INTERFACE "${_nvidia}/include" "${NORMLAB_CUDA_CRT_INCLUDE}")
target_link_libraries(NormLab::TorchCuda INTERFACE
  NormLab::Torch "${_lib}/libtorch_cuda.so" "${_lib}/libc10_cuda.so" "${_nvidia}/lib/libcudart.so.13")

# What the CPU library needs at run time: it finds these beside itself ($ORIGIN).
set(NORMLAB_TORCH_RUNTIME_FILES
  "${_lib}/libtorch_cpu.so" "${_lib}/libc10.so" "${_lib}/libgomp.so.1"
  "${_nvidia}/lib/libcudart.so.13" "${_nvidia}/lib/libcupti.so.13")
foreach(_file IN LISTS NORMLAB_TORCH_RUNTIME_FILES)
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "LibTorch ${NORMLAB_TORCH_VERSION}: ${_file} is missing")
  endif()
endforeach()
