# Provides the imported target NormLab::Torch.
#
# NORMLAB_TORCH=wheel  (default) LibTorch from the pinned PyPI `torch` wheel that
#                      scripts/setup.sh installs under ~/.cache/normlab. We wire the
#                      libraries ourselves instead of calling the wheel's TorchConfig,
#                      because that config insists on a matching CUDA toolkit at build
#                      time; the wheel already carries the CUDA runtime it was built for.
# NORMLAB_TORCH=system Debian's libtorch-dev (CPU only), through its TorchConfig.
set(NORMLAB_TORCH "wheel" CACHE STRING "Where LibTorch comes from: wheel or system")
set_property(CACHE NORMLAB_TORCH PROPERTY STRINGS wheel system)
set(NORMLAB_TORCH_VERSION "2.11.0" CACHE STRING "Pinned torch wheel version")

if(NORMLAB_TORCH STREQUAL "system")
  find_package(Torch REQUIRED)
  add_library(NormLab::Torch INTERFACE IMPORTED)
  # Debian's libsentencepiece exports the protobuf-lite 3.14 it bundles; unless the
  # libprotobuf 3.21 that libtorch needs is loaded first, libprotobuf's start-up code
  # binds to that copy and the program crashes before main. Loaded first, the program
  # runs, but SentencePiece then refuses the newer protobuf: with this LibTorch,
  # training a tokenizer fails with that message (bench and everything else work).
  target_link_libraries(NormLab::Torch INTERFACE
    "-Wl,--no-as-needed" protobuf "-Wl,--as-needed" ${TORCH_LIBRARIES})
  return()
endif()

if(DEFINED ENV{XDG_CACHE_HOME})
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
    "Run scripts/setup.sh, set NORMLAB_TORCH_DIR, or configure with -DNORMLAB_TORCH=system.")
endif()

set(_lib "${NORMLAB_TORCH_DIR}/lib")
add_library(NormLab::Torch INTERFACE IMPORTED)
target_include_directories(NormLab::Torch SYSTEM INTERFACE
  "${NORMLAB_TORCH_DIR}/include"
  "${NORMLAB_TORCH_DIR}/include/torch/csrc/api/include")
target_compile_definitions(NormLab::Torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
set(_torch_libs "${_lib}/libtorch.so" "${_lib}/libtorch_cpu.so" "${_lib}/libc10.so")
if(EXISTS "${_lib}/libtorch_cuda.so")
  # Nothing references libtorch_cuda directly; it registers the CUDA backend when
  # loaded, so it must stay linked even though the linker sees no use for it.
  list(APPEND _torch_libs "-Wl,--no-as-needed" "${_lib}/libtorch_cuda.so"
       "${_lib}/libc10_cuda.so" "-Wl,--as-needed")
endif()
# libtorch exports its own std::filesystem (pytorch/pytorch#133437), built against a newer
# libstdc++ than Debian 12's; libstdc++ must come first or calls like remove_all crash.
target_link_libraries(NormLab::Torch INTERFACE
  "-Wl,--no-as-needed" stdc++ "-Wl,--as-needed" ${_torch_libs})
target_link_options(NormLab::Torch INTERFACE "LINKER:-rpath,${_lib}")
message(STATUS "LibTorch: ${NORMLAB_TORCH_DIR}")
