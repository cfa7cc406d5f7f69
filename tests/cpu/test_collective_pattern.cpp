// The collectives' inputs and expected outputs (kernels/collectives/pattern.hpp), checked against
// each collective's definition (NCCL's nccl.h): every rank's inputs are made with input_value, the
// collective is carried out here element by element, and every output element must equal what
// expected_value says, for 1, 2, 3 and 8 ranks and blocks of 1, 5 and 64 elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "collective.hpp"
#include "collectives/pattern.hpp"

using namespace triaudit;

namespace {

using Inputs = std::function<int(int rank, std::uint64_t i)>;

// One collective carried out by its definition: output element k of `rank`, for `ranks` ranks
// whose inputs are `in`, each NCCL call given `block` elements.
struct Definition {
  const char* name;
  OutputRule rule;
  std::uint64_t (*out_elements)(std::uint64_t block, int ranks);
  int (*output)(const Inputs& in, int rank, std::uint64_t k, std::uint64_t block, int ranks, int root);
};

const Definition kDefinitions[] = {
    // ncclAllReduce: every rank gets the sum over ranks of each element.
    {"allreduce",
     {OutputSource::kSumOfRanks, false},
     [](std::uint64_t b, int) { return b; },
     [](const Inputs& in, int, std::uint64_t k, std::uint64_t, int ranks, int) {
       int s = 0;
       for (int q = 0; q < ranks; ++q) s += in(q, k);
       return s;
     }},
    // ncclReduceScatter: rank r gets the sum of block r (recvcount elements from r x recvcount).
    {"reduce_scatter",
     {OutputSource::kSumOfRanks, true},
     [](std::uint64_t b, int) { return b; },
     [](const Inputs& in, int rank, std::uint64_t k, std::uint64_t b, int ranks, int) {
       int s = 0;
       for (int q = 0; q < ranks; ++q) s += in(q, static_cast<std::uint64_t>(rank) * b + k);
       return s;
     }},
    // ncclAllGather: data from rank i lands at recvbuff + i x sendcount.
    {"allgather",
     {OutputSource::kBlockOwner, false},
     [](std::uint64_t b, int ranks) { return b * ranks; },
     [](const Inputs& in, int, std::uint64_t k, std::uint64_t b, int, int) {
       return in(static_cast<int>(k / b), k % b);
     }},
    // ncclAlltoAll: data for rank j is taken from sendbuff + j x count; from rank i it lands at
    // recvbuff + i x count.
    {"alltoall",
     {OutputSource::kBlockOwner, true},
     [](std::uint64_t b, int ranks) { return b * ranks; },
     [](const Inputs& in, int rank, std::uint64_t k, std::uint64_t b, int, int) {
       return in(static_cast<int>(k / b), static_cast<std::uint64_t>(rank) * b + k % b);
     }},
    // ncclBroadcast: every rank gets the root's buffer.
    {"broadcast",
     {OutputSource::kRoot, false},
     [](std::uint64_t b, int) { return b; },
     [](const Inputs& in, int, std::uint64_t k, std::uint64_t, int, int root) { return in(root, k); }},
};

}  // namespace

TEST(CollectivePattern, ExpectedValuesFollowEachCollectivesDefinition) {
  for (const Definition& d : kDefinitions)
    for (int ranks : {1, 2, 3, 8})
      for (std::uint64_t block : {1ULL, 5ULL, 64ULL})
        for (int root : {0, ranks - 1}) {
          const OutputLayout layout{d.rule, block, ranks, root};
          const Inputs in = [&](int q, std::uint64_t i) { return input_value(layout, q, i); };
          std::uint64_t checked = 0;
          for (int r = 0; r < ranks; ++r)
            for (std::uint64_t k = 0; k < d.out_elements(block, ranks); ++k, ++checked)
              ASSERT_EQ(expected_value(layout, r, k), d.output(in, r, k, block, ranks, root))
                  << d.name << " ranks " << ranks << " block " << block << " rank " << r << " element " << k;
          EXPECT_GT(checked, 0u);
        }
}

// Reductions keep allreduce's inputs (small integers, sums exact in BF16); copies move integers
// from -256 to 255, which FP32, BF16 (8 significant bits: every integer up to 256) and FP16 hold.
TEST(CollectivePattern, EveryValueIsExactInEachElementType) {
  for (int ranks : {1, 2, 8, 64})
    for (std::uint64_t i = 0; i < 4096; ++i)
      for (int r = 0; r < ranks; r += (ranks > 8 ? 7 : 1)) {
        const int v = copy_value(r, i);
        ASSERT_GE(v, -256);
        ASSERT_LE(v, 255);
        const OutputLayout sum{{OutputSource::kSumOfRanks, false}, 1, ranks, 0};
        ASSERT_LE(std::abs(expected_value(sum, r, i)), 256);
      }
}

// A block in the wrong place must not pass: another rank's block at the same offset differs in
// every element; the same rank's block shifted by 1..63 elements differs in almost every element.
TEST(CollectivePattern, CopiesCatchAMisplacedBlock) {
  for (int r = 0; r < 8; ++r)
    for (int q = 0; q < 8; ++q)
      for (std::uint64_t i = 0; i < 256 && q != r; ++i)
        ASSERT_NE(copy_value(r, i), copy_value(q, i)) << r << " " << q << " " << i;
  for (std::uint64_t shift = 1; shift < 64; ++shift) {
    int same = 0;
    for (std::uint64_t i = 0; i < 64; ++i) same += copy_value(3, 1000 + i) == copy_value(3, 1000 + i + shift);
    EXPECT_LE(same, 3) << "shift " << shift;
  }
  std::set<int> distinct;
  for (std::uint64_t i = 0; i < 4096; ++i) distinct.insert(copy_value(0, i));
  EXPECT_GT(distinct.size(), 500u) << "copies must not be mostly one value";
}

// nccl-tests' (count/nranks) & -(16/eltSize): whole 16-byte units per rank.
TEST(CollectivePattern, NcclTestsRankChunk) {
  EXPECT_EQ(nccl_tests_rank_chunk(1024, 4, 8), 128u);
  EXPECT_EQ(nccl_tests_rank_chunk(1000, 4, 3), 332u);  // 333 rounded down to a multiple of 4
  EXPECT_EQ(nccl_tests_rank_chunk(1000, 2, 3), 328u);  // 333 rounded down to a multiple of 8
  EXPECT_EQ(nccl_tests_rank_chunk(2, 4, 8), 0u);       // 8 bytes over 8 ranks: nothing per rank
  EXPECT_EQ(nccl_tests_rank_chunk(16, 4, 1), 16u);
  EXPECT_EQ(nccl_tests_rank_chunk(7, 4, 1), 4u);
  EXPECT_EQ(nccl_tests_rank_chunk(100, 4, 0), 0u);
}
