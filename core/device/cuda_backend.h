#pragma once
// LibTorch's CUDA backend is libtorch_cuda.so, which registers itself with LibTorch when it
// is loaded. NormLab links only the CPU library and loads the backend at run time, so one
// program runs where the 3.5 GB of CUDA libraries are absent (the .deb) and uses the GPU
// where they are. No torch in this header.
#include <functional>
#include <string>
#include <vector>

namespace normlab {

struct CudaBackend {
  bool loaded = false;
  std::string library;  // the libtorch_cuda.so that was loaded
  std::string reason;   // why none was, when not loaded
};

// Loads the backend once per process, before anything asks LibTorch about CUDA (LibTorch
// remembers the first answer). Looks beside the LibTorch in use, then in the pinned wheel
// that scripts/normlab.sh installs under $XDG_CACHE_HOME/normlab.
const CudaBackend& load_cuda_backend();

// Where the backend would be loaded from, without loading it; empty when nowhere.
std::string find_cuda_backend();

// Where an NVIDIA driver was found: its kernel module (/proc/driver/nvidia) or its
// user-space library (libcuda.so.1); empty when none. Cheap, so "auto" on a machine
// without one answers at once instead of loading the 1 GB backend only to find no GPU.
std::string find_nvidia_driver();
bool nvidia_driver_present();  // !find_nvidia_driver().empty()

// Tests stand in for the driver look-up with their own; an empty function restores it.
void set_nvidia_driver_probe(std::function<std::string()> probe);

struct CudaDevice {
  std::string name;
  int major = 0, minor = 0;  // compute capability
};
struct CudaDriverReport {
  int version = 0;  // the CUDA version the driver supports, 12040 for 12.4; 0: unknown
  std::vector<CudaDevice> devices;
  std::string error;  // why it lists no GPU
};
// Loads the NVIDIA driver (libcuda.so.1) and asks it, through its API, for its version and
// its GPUs, without LibTorch. Only where a driver was found: it initialises the driver.
CudaDriverReport ask_cuda_driver();

// From the CUDA driver LibTorch loaded, for GPU 0; no CUDA headers needed. The name is
// "CUDA GPU" and the capability 0 when the driver cannot say.
std::string cuda_device_name();
int cuda_compute_capability_major();

// Free memory of GPU 0 in bytes, as the CUDA driver LibTorch loaded says it (cuMemGetInfo
// in the GPU's primary context, the one LibTorch trains in); 0 when unknown: no driver
// loaded (no GPU, or LibTorch never asked for one), or a call that failed. What a run may
// take there is memory_check's question (core/runs/run_cost.h).
double cuda_free_memory_bytes();

// "2.11.0", the LibTorch this program was built against.
std::string libtorch_version();

}  // namespace normlab
