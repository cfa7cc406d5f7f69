#include "chain_check.hpp"

#include <cmath>
#include <vector>

#include "common/fill.cuh"
#include "common/random_values.hpp"
#include "cuda_check.hpp"
#include "launch/chain.cuh"

namespace triaudit {

constexpr std::uint64_t kSeedChain = 7;

void chain_prepare(float* x, std::uint64_t n, cudaStream_t stream) {
  kernels::fill_random(x, n, kSeedChain, stream);
  TRIAUDIT_CUDA_LAUNCH();
}

VerifyResult chain_verify(const float* x, std::uint64_t n, int steps, cudaStream_t stream) {
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> host(n);
  TRIAUDIT_CUDA(cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
  return verify_elements(
      host.data(), n,
      [steps](std::uint64_t i) {
        float v = random_pm1<float>(kSeedChain, i);
        for (int s = 0; s < steps; ++s) v = std::fma(kernels::kChainA, v, kernels::kChainB);
        return v;
      },
      [](std::uint64_t) { return 0.0; });
}

}  // namespace triaudit
