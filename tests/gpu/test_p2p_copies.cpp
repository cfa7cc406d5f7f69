// Device tests of the GPU-to-GPU copies. On one GPU both ends of a pair are the same device (two
// buffers, two streams), which checks every copy kind, the bidirectional pattern and the word
// check; with two GPUs that can reach each other, the same over the link.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "common/random_values.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "p2p/p2p_copy.cuh"
#include "p2p/pair_runner.hpp"

using namespace triaudit;

namespace {

void run_once(PairRunner& run) {
  run.poison();
  run.enqueue(true);
  if (run.kind().direction == "bidir") {
    run.join(false);
    run.enqueue(false);
  }
}

void check_all_kinds(int src, int dst) {
  for (const P2pKind& k :
       {P2pKind{"ce", "uni", false}, P2pKind{"ce", "bidir", false}, P2pKind{"sm_read", "uni", false},
        P2pKind{"sm_read", "bidir", false}, P2pKind{"sm_write", "uni", false}, P2pKind{"sm_write", "bidir", false},
        P2pKind{"staged", "uni", false}, P2pKind{"ce", "uni", true}, P2pKind{"sm_write", "uni", true}})
    for (std::uint64_t bytes : {std::uint64_t{4}, std::uint64_t{4100}, std::uint64_t{1} << 20}) {
      PairRunner run(k, src, dst, bytes);
      run_once(run);
      const VerifyResult v = run.verify();
      EXPECT_TRUE(v.ok()) << k.test << "/" << k.direction << " " << bytes << " B, GPU " << src << " -> " << dst << ": "
                          << v.describe();
      // Bidirectional: each end received twice the size.
      EXPECT_EQ(v.checked, (k.direction == "bidir" ? 4 : 1) * bytes / 4) << k.test << "/" << k.direction;
    }
}

}  // namespace

TEST(P2pCopy, KernelCopiesEveryWordAndNothingBeyond) {
  for (std::size_t bytes : {4u, 8u, 12u, 16u, 60u, 4100u, 1u << 20}) {
    const std::size_t words = bytes / 4;
    DeviceBuffer<std::uint32_t> src(words + 8), dst(words + 8);
    std::vector<std::uint32_t> host(words + 8);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = pattern_word(7, i);
    TRIAUDIT_CUDA(cudaMemcpy(src.data(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    TRIAUDIT_CUDA(cudaMemset(dst.data(), 0xA5, dst.bytes()));
    kernels::p2p_copy(src.data(), dst.data(), bytes, nullptr);
    TRIAUDIT_CUDA_LAUNCH();
    std::vector<std::uint32_t> back(words + 8);
    TRIAUDIT_CUDA(cudaMemcpy(back.data(), dst.data(), back.size() * 4, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < words; ++i) ASSERT_EQ(back[i], host[i]) << bytes << " B, word " << i;
    for (std::size_t i = words; i < back.size(); ++i)
      ASSERT_EQ(back[i], 0xA5A5A5A5u) << bytes << " B: wrote word " << i;
  }
}

TEST(P2pCopy, EveryKindOnOneGpu) { check_all_kinds(0, 0); }

TEST(P2pCopy, VerificationCatchesACopyThatDidNotHappen) {
  PairRunner run({"ce", "uni", false}, 0, 0, 4096);
  run.poison();
  const VerifyResult v = run.verify();
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.wrong, 1024u);
}

TEST(P2pCopy, EveryKindBetweenTwoGpus) {
  int n = 0, a = 0, b = 0;
  TRIAUDIT_CUDA(cudaGetDeviceCount(&n));
  if (n < 2) GTEST_SKIP() << "needs 2 GPUs, " << n << " visible";
  TRIAUDIT_CUDA(cudaDeviceCanAccessPeer(&a, 0, 1));
  TRIAUDIT_CUDA(cudaDeviceCanAccessPeer(&b, 1, 0));
  if (!a || !b) GTEST_SKIP() << "GPUs 0 and 1 have no peer access";
  for (auto [from, to] : {std::make_pair(0, 1), std::make_pair(1, 0)}) {
    DeviceGuard g(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();
    else
      TRIAUDIT_CUDA(e);
  }
  check_all_kinds(0, 1);
  check_all_kinds(1, 0);
}
