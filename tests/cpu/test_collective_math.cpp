#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "collective_math.hpp"
#include "collectives/pattern.hpp"
#include "nccl_choice.hpp"
#include "nvls.hpp"

using namespace triaudit;

namespace {
EnvLookup env_of(std::map<std::string, std::string> m) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(m));
  return [shared](const char* k) -> const char* {
    auto it = shared->find(k);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST(AllreduceMath, InputsSumExactlyInBf16) {
  for (int ranks : {1, 2, 8, 32, 64, 512}) {
    const int amp = allreduce_amplitude_for(ranks);
    EXPECT_GE(amp, 1);
    EXPECT_LE(amp * std::min(ranks, 256), 256) << ranks;
    int nonzero = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
      const int s = allreduce_sum(i, ranks);
      if (ranks <= 256) {
        EXPECT_LE(std::abs(s), 256);  // every integer up to 256 is exact in BF16
      }
      for (int r = 0; r < std::min(ranks, 4); ++r) {
        const int v = allreduce_value(r, i, ranks);
        EXPECT_LE(std::abs(v), amp);
        nonzero += v != 0;
      }
    }
    EXPECT_GT(nonzero, 500) << "inputs must not be mostly zero";
  }
  EXPECT_NE(allreduce_value(0, 5, 8), allreduce_value(1, 5, 8));  // ranks differ
}

TEST(AllreduceMath, LauncherEnvironment) {
  EXPECT_FALSE(launcher_world_size(env_of({})).has_value());
  EXPECT_EQ(*launcher_world_size(env_of({{"OMPI_COMM_WORLD_SIZE", "4"}})), 4);
  EXPECT_EQ(*launcher_world_size(env_of({{"PMI_SIZE", "2"}})), 2);
  EXPECT_FALSE(launcher_world_size(env_of({{"SLURM_NTASKS", "8"}})).has_value());  // an allocation, not a launch
  EXPECT_EQ(*launcher_world_size(env_of({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "3"}})), 8);
  EXPECT_FALSE(launcher_world_size(env_of({{"OMPI_COMM_WORLD_SIZE", "x"}})).has_value());
}

TEST(AllreduceMath, TheTrapIsRefused) {
  EXPECT_EQ(single_process_trap(env_of({}), "triaudit_allreduce"), "");
  EXPECT_EQ(single_process_trap(env_of({{"OMPI_COMM_WORLD_SIZE", "1"}}), "triaudit_allreduce"), "");
  const std::string msg = single_process_trap(env_of({{"OMPI_COMM_WORLD_SIZE", "8"}}), "triaudit_allreduce");
  EXPECT_NE(msg.find("one of 8 processes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("triaudit_allreduce_mpi"), std::string::npos) << msg;
  EXPECT_NE(msg.find("one-rank allreduce with busbw 0"), std::string::npos) << msg;
  const std::string other = single_process_trap(env_of({{"PMI_SIZE", "2"}}), "triaudit_allgather");
  EXPECT_NE(other.find("triaudit_allgather_mpi"), std::string::npos) << other;
}

TEST(AllreduceMath, RankToDevice) {
  std::string err;
  EXPECT_EQ(device_for_local_rank(3, 8, 8, &err), 3);
  EXPECT_EQ(device_for_local_rank(0, 1, 8, &err), 0);
  EXPECT_EQ(device_for_local_rank(5, 9, 8, &err), -1);
  EXPECT_NE(err.find("9 ranks on this node but 8"), std::string::npos) << err;
  EXPECT_EQ(device_for_local_rank(0, 1, 0, &err), -1);
  // One GPU visible to each of 8 ranks (srun --gpus-per-task=1, --gpu-bind): each uses its own
  // device 0; the bootstrap then checks that no two ranks got the same GPU (its UUID).
  EXPECT_EQ(device_for_local_rank(5, 8, 1, &err), 0);
}

TEST(AllreduceMath, SizeSweep) {
  const auto s = collective_sizes(8, 1ULL << 30, 4);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 1ULL << 30);
  EXPECT_EQ(s.size(), 28u);
  EXPECT_EQ(collective_sizes(1, 16, 4).front(), 4u);  // at least one element
}

// nccl-tests (common.cu BenchTime) times 20 back-to-back collectives per measurement; a region
// with one collective would carry the launch skew between GPUs in every sample.
TEST(AllreduceTiming, AtLeastTwentyCollectivesPerRegion) {
  for (std::uint64_t bytes : {8ULL, 1ULL << 20, 32ULL << 20, 1ULL << 30, 8ULL << 30}) {
    EXPECT_GE(collectives_per_region(bytes), 20) << bytes;
    EXPECT_LE(collectives_per_region(bytes), 200) << bytes;
  }
  EXPECT_EQ(collectives_per_region(8ULL << 30), 20);
}

TEST(AllreduceAlgorithms, NamesAndTheEnvironmentNcclReads) {
  EXPECT_EQ(nccl_algo_env("ring"), "Ring");
  EXPECT_EQ(nccl_algo_env("tree"), "Tree");
  EXPECT_EQ(nccl_algo_env("nvls"), "NVLS");
  EXPECT_EQ(nccl_algo_env("collnet"), "CollNet");
  EXPECT_EQ(nccl_algo_env("auto"), "");  // NCCL's own choice
}

TEST(AllreduceScaling, PowersOfTwoUpToTheGpusThere) {
  EXPECT_EQ(scaling_gpu_counts(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(scaling_gpu_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(scaling_gpu_counts(1), (std::vector<int>{1}));
}

// What NCCL chose, from its NCCL_DEBUG=INFO / NCCL_DEBUG_SUBSYS=TUNING lines: both the newer
// "Best tuning" line and the older numeric one (enqueue.cc of the versions in use).
TEST(NcclTuning, ParsesBothLineFormats) {
  const std::string log =
      "host:123:123 [0] NCCL INFO Best tuning, algorithm, RING, protocol, LL\n"
      "host:123:130 [0] NCCL INFO 1048576 Bytes -> Algo 4 proto 2 time 12.500000\n"
      "host:123:123 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f datatype 7 op 0 root 0 comm 0x55 [nranks=8]\n"
      "host:123:123 [1] NCCL INFO Best tuning, algorithm, NVLS_TREE, protocol, SIMPLE\n"
      "host:123:123 [0] NCCL INFO AllReduce: 8388608 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..23}\n";
  const auto choices = parse_nccl_tuning(log);
  ASSERT_EQ(choices.size(), 4u);
  EXPECT_EQ(choices[3].algorithm, "Ring");  // NCCL 2.19-2.27's line, names instead of numbers
  EXPECT_EQ(choices[3].protocol, "LL128");
  EXPECT_EQ(choices[3].bytes, 8388608u);
  EXPECT_EQ(choices[0].algorithm, "Ring");
  EXPECT_EQ(choices[0].protocol, "LL");
  EXPECT_EQ(choices[1].algorithm, "NVLS");
  EXPECT_EQ(choices[1].protocol, "Simple");
  EXPECT_EQ(choices[1].bytes, 1048576u);
  EXPECT_EQ(choices[2].algorithm, "NVLSTree");
  EXPECT_EQ(choices[2].protocol, "Simple");
  EXPECT_TRUE(parse_nccl_tuning("NCCL INFO Channel 00/24 : 0 1\n").empty());
}

// TRIAUDIT_FAIL_CASE=<rank>:<regex> makes one rank fail the matching cases (a test switch: the
// MPI agreement at the end of every case must keep every rank in step).
TEST(AllreduceAgreement, TheTestSwitch) {
  EXPECT_TRUE(forced_failure("1:bytes:8/", 1, "allreduce/out_of_place/fp32/algo:ring/bytes:8/"));
  EXPECT_FALSE(forced_failure("1:bytes:8/", 0, "allreduce/out_of_place/fp32/algo:ring/bytes:8/"));
  EXPECT_FALSE(forced_failure("1:bytes:16/", 1, "allreduce/out_of_place/fp32/algo:ring/bytes:8/"));
  EXPECT_FALSE(forced_failure("", 1, "anything"));
  EXPECT_FALSE(forced_failure(nullptr, 1, "anything"));
  EXPECT_FALSE(forced_failure("junk", 1, "anything"));
}

TEST(NcclTuning, TheProbesAnswersRoundTrip) {
  const std::string text =
      format_nccl_choice("auto", "fp32", 1048576, "NVLS/Simple") + format_nccl_choice("ring", "bf16", 8, "Ring/LL");
  const NcclChoices c = read_nccl_choices(text);
  ASSERT_EQ(c.size(), 2u);
  set_nccl_choices(c, "not recorded: test");
  EXPECT_EQ(nccl_choice_label("auto", "fp32", 1048576, 8), "NCCL chose NVLS/Simple");
  EXPECT_EQ(nccl_choice_label("ring", "bf16", 8, 8), "NCCL chose Ring/LL");
  EXPECT_EQ(nccl_choice_label("ring", "bf16", 16, 8), "not recorded: test");
  EXPECT_EQ(nccl_choice_label("ring", "bf16", 8, 1), "");  // one rank: nothing to choose
}

// NVLS where NCCL offers it (src/transport/nvls.cc, ncclNvlsInit), a plain reason elsewhere.
TEST(Nvls, OfferedOnlyWhereNcclWouldUseIt) {
  NvlsFacts f;
  f.collective = "allgather";
  f.collective_has_nvls = true;
  f.ranks = 8;
  f.multicast_supported = 1;
  EXPECT_EQ(nvls_unavailable_reason(f), "");
  NvlsFacts none = f;
  none.multicast_supported = 0;
  none.device_without_multicast = 3;
  const std::string why = nvls_unavailable_reason(none);
  EXPECT_NE(why.find("GPU 3"), std::string::npos) << why;
  EXPECT_NE(why.find("CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED"), std::string::npos) << why;
  EXPECT_NE(why.find("NVLS multicast support is not available"), std::string::npos) << why;
  NvlsFacts off = f;
  off.nvls_enable = "0";
  EXPECT_EQ(nvls_unavailable_reason(off), "NCCL_NVLS_ENABLE=0 turns NVLS off");
  NvlsFacts forced = none;
  forced.nvls_enable = "1";  // NCCL assumes support without asking the driver
  EXPECT_EQ(nvls_unavailable_reason(forced), "");
  NvlsFacts one = f;
  one.ranks = 1;
  EXPECT_NE(nvls_unavailable_reason(one).find("2 or more GPUs"), std::string::npos);
  NvlsFacts bcast = f;
  bcast.collective = "broadcast";
  bcast.collective_has_nvls = false;
  EXPECT_NE(nvls_unavailable_reason(bcast).find("no NVLS algorithm for broadcast"), std::string::npos);
  NvlsFacts unknown = f;
  unknown.multicast_supported = -1;
  unknown.unknown_why = "the driver's cuDeviceGetAttribute is not reachable";
  EXPECT_NE(nvls_unavailable_reason(unknown).find("unknown (the driver's"), std::string::npos);
}
