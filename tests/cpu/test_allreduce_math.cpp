#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "allreduce/allreduce_pattern.hpp"
#include "allreduce_math.hpp"

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

TEST(AllreduceMath, NcclTestsBandwidthDefinitions) {
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);  // one rank: busbw 0 by the formula
  EXPECT_DOUBLE_EQ(algbw(1e9, 0.01), 1e11);
  EXPECT_DOUBLE_EQ(busbw(1e9, 0.01, 8), 1.75e11);
  EXPECT_DOUBLE_EQ(busbw(1e9, 0.01, 1), 0.0);
}

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
  EXPECT_EQ(single_process_trap(env_of({})), "");
  EXPECT_EQ(single_process_trap(env_of({{"OMPI_COMM_WORLD_SIZE", "1"}})), "");
  const std::string msg = single_process_trap(env_of({{"OMPI_COMM_WORLD_SIZE", "8"}}));
  EXPECT_NE(msg.find("one of 8 processes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("triaudit_allreduce_mpi"), std::string::npos) << msg;
}

TEST(AllreduceMath, RankToDevice) {
  std::string err;
  EXPECT_EQ(device_for_local_rank(3, 8, 8, &err), 3);
  EXPECT_EQ(device_for_local_rank(0, 1, 8, &err), 0);
  EXPECT_EQ(device_for_local_rank(5, 9, 8, &err), -1);
  EXPECT_NE(err.find("9 ranks on this node but 8"), std::string::npos) << err;
  EXPECT_EQ(device_for_local_rank(0, 1, 0, &err), -1);
}

TEST(AllreduceMath, SizeSweep) {
  const auto s = allreduce_sizes(8, 1ULL << 30, 4);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 1ULL << 30);
  EXPECT_EQ(s.size(), 28u);
  EXPECT_EQ(allreduce_sizes(1, 16, 4).front(), 4u);  // at least one element
}
