// A chain launched eagerly and the same chain replayed from a CUDA Graph give identical output;
// the fused kernel equals the unfused chain, and both equal the host reference.
#include <gtest/gtest.h>

#include <vector>

#include "common/cuda_raii.hpp"
#include "launch/chain.cuh"
#include "launch/chain_check.hpp"

using namespace triaudit;

namespace {
std::vector<float> to_host(const DeviceBuffer<float>& x) {
  std::vector<float> h(x.size());
  EXPECT_EQ(cudaMemcpy(h.data(), x.data(), x.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}
}  // namespace

TEST(LaunchChains, GraphEqualsEagerEqualsFused) {
  const std::uint64_t n = 100003;
  const int steps = 37;
  Stream s;
  DeviceBuffer<float> eager(n), graph(n), fused(n);

  chain_prepare(eager.data(), n, s);
  for (int k = 0; k < steps; ++k) kernels::chain_step(eager.data(), n, s);

  chain_prepare(graph.data(), n, s);
  Graph g = Graph::capture(s, [&](cudaStream_t cs) {
    for (int k = 0; k < steps; ++k) kernels::chain_step(graph.data(), n, cs);
  });
  GraphExec exec(g);
  exec.launch(s);

  chain_prepare(fused.data(), n, s);
  kernels::chain_fused(fused.data(), n, steps, s);
  s.synchronize();

  EXPECT_EQ(to_host(eager), to_host(graph));
  EXPECT_EQ(to_host(eager), to_host(fused));
  const VerifyResult v = chain_verify(fused.data(), n, steps, s);
  EXPECT_TRUE(v.ok()) << v.describe();
  EXPECT_FALSE(chain_verify(fused.data(), n, steps + 1, s).ok());  // the check can fail
}
