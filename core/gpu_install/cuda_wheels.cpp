// Written by scripts/pin-cuda-wheels.py from the source set-up's torch==2.11.0: edit that, not this.
#include "cuda_wheels.h"

namespace normlab {

const std::vector<PinnedWheel>& cuda_wheels() {
  // One wheel a line, as this script writes them.
  // clang-format off
  static const std::vector<PinnedWheel> wheels{
      {"nvidia-cublas", "nvidia_cublas-13.1.0.3-py3-none-manylinux_2_27_x86_64.whl", 423133236, "ee8722c1f0145ab246bccb9e452153b5e0515fd094c3678df50b2a0888b8b171"},
      {"nvidia-cuda-cupti", "nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl", 10715597, "4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8"},
      {"nvidia-cuda-nvrtc", "nvidia_cuda_nvrtc-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 90215200, "ad9b6d2ead2435f11cbb6868809d2adeeee302e9bb94bcf0539c7a40d80e8575"},
      {"nvidia-cuda-runtime", "nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 2243632, "7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548"},
      {"nvidia-cudnn-cu13", "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl", 366066321, "d20e1734305e9d68889a96e3f35094d733ff1f83932ebe462753973e53a572bf"},
      {"nvidia-cufft", "nvidia_cufft-12.0.0.61-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 214085489, "6c44f692dce8fd5ffd3e3df134b6cdb9c2f72d99cf40b62c32dde45eea9ddad3"},
      {"nvidia-cufile", "nvidia_cufile-1.15.1.6-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 1223672, "08a3ecefae5a01c7f5117351c64f17c7c62efa5fffdbe24fc7d298da19cd0b44"},
      {"nvidia-curand", "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl", 59544258, "1aee33a5da6e1db083fe2b90082def8915f30f3248d5896bcec36a579d941bfc"},
      {"nvidia-cusolver", "nvidia_cusolver-12.0.4.66-py3-none-manylinux_2_27_x86_64.whl", 200941980, "0a759da5dea5c0ea10fd307de75cdeb59e7ea4fcb8add0924859b944babf1112"},
      {"nvidia-cusparse", "nvidia_cusparse-12.6.3.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 145942937, "2b3c89c88d01ee0e477cb7f82ef60a11a4bcd57b6b87c33f789350b59759360b"},
      {"nvidia-cusparselt-cu13", "nvidia_cusparselt_cu13-0.8.0-py3-none-manylinux2014_x86_64.whl", 169884119, "25e30a8a7323935d4ad0340b95a0b69926eee755767e8e0b1cf8dd85b197d3fd"},
      {"nvidia-nccl-cu13", "nvidia_nccl_cu13-2.28.9-py3-none-manylinux_2_18_x86_64.whl", 196493177, "e4553a30f34195f3fa1da02a6da3d6337d28f2003943aa0a3d247bbc25fefc42"},
      {"nvidia-nvjitlink", "nvidia_nvjitlink-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 40713933, "13a74f429e23b921c1109976abefacc69835f2f433ebd323d3946e11d804e47b"},
      {"nvidia-nvshmem-cu13", "nvidia_nvshmem_cu13-3.4.5-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 60412546, "290f0a2ee94c9f3687a02502f3b9299a9f9fe826e6d0287ee18482e78d495b80"},
      {"nvidia-nvtx", "nvidia_nvtx-13.0.85-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl", 148047, "4936d1d6780fbe68db454f5e72a42ff64d1fd6397df9f363ae786930fd5c1cd4"},
      {"torch", "torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl", 530604548, "7aa2f9bbc6d4595ba72138026b2074be1233186150e9292865e04b7a63b8c67a"},
  };
  // clang-format on
  return wheels;
}

}  // namespace normlab
