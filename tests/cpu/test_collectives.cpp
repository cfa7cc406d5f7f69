// Every collective the harness measures, against nccl-tests' published formulas: one row per
// collective, transcribed from nccl-tests' src/<collective>.cu (NVIDIA/nccl-tests at 2becba8:
// getCollByteCount and getBw), and NCCL's definition of its result (nccl.h). For 1, 2, 3 and 8
// ranks and 2- and 4-byte elements: the buffer counts, algbw and busbw, and every output
// element's expected value against the collective carried out here on the harness's inputs.
// A new collective adds its row to kRows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "collective.hpp"
#include "collectives/pattern.hpp"

using namespace triaudit;

namespace {

using Inputs = std::function<int(int rank, std::uint64_t i)>;

struct Counts {  // nccl-tests' getCollByteCount outputs, in its argument order
  std::size_t send, recv, param, send_in_place, recv_in_place;
};

struct Row {
  const char* name;
  // getCollByteCount(&sendcount, &recvcount, &paramcount, &sendInplaceOffset, &recvInplaceOffset, count, eltSize,
  // nranks)
  Counts (*byte_count)(std::size_t count, std::size_t elt, int nranks);
  // getBw: baseBw = <bytes> / 1.0E9 / sec (this is <bytes>), busBw = baseBw * factor
  double (*base_bytes)(std::size_t count, int typesize, int nranks);
  double (*factor)(int nranks);
  // NCCL's definition: output element k of `rank`, from every rank's inputs.
  int (*output)(const Inputs& in, int rank, std::uint64_t k, const Counts& n, int nranks, int root);
};

const Row kRows[] = {
    {"allreduce",  // src/all_reduce.cu; ncclAllReduce: every rank gets the sum over ranks
     [](std::size_t count, std::size_t, int) { return Counts{count, count, count, 0, 0}; },
     [](std::size_t count, int typesize, int) { return static_cast<double>(count * typesize); },
     [](int nranks) { return static_cast<double>(2 * (nranks - 1)) / static_cast<double>(nranks); },
     [](const Inputs& in, int, std::uint64_t k, const Counts&, int nranks, int) {
       int s = 0;
       for (int q = 0; q < nranks; ++q) s += in(q, k);
       return s;
     }},
    {"allgather",  // src/all_gather.cu; ncclAllGather: rank i's data lands at recvbuff + i x sendcount
     [](std::size_t count, std::size_t elt, int nranks) {
       const std::size_t base = (count / nranks) & -(16 / elt);
       return Counts{base, base * nranks, base, base, 0};
     },
     [](std::size_t count, int typesize, int nranks) { return static_cast<double>(count * typesize * nranks); },
     [](int nranks) { return static_cast<double>(nranks - 1) / static_cast<double>(nranks); },
     [](const Inputs& in, int, std::uint64_t k, const Counts& n, int, int) {
       return in(static_cast<int>(k / n.send), k % n.send);
     }},
    {"reduce_scatter",  // src/reduce_scatter.cu; ncclReduceScatter: rank r gets the sum of block r
     [](std::size_t count, std::size_t elt, int nranks) {
       const std::size_t base = (count / nranks) & -(16 / elt);
       return Counts{base * nranks, base, base, 0, base};
     },
     [](std::size_t count, int typesize, int nranks) { return static_cast<double>(count * typesize * nranks); },
     [](int nranks) { return static_cast<double>(nranks - 1) / static_cast<double>(nranks); },
     [](const Inputs& in, int rank, std::uint64_t k, const Counts& n, int nranks, int) {
       int s = 0;
       for (int q = 0; q < nranks; ++q) s += in(q, rank * n.recv + k);
       return s;
     }},
    {"alltoall",  // src/alltoall.cu; ncclAlltoAll: block j of rank i's sendbuff lands at recvbuff + i x count on j
     [](std::size_t count, std::size_t elt, int nranks) {
       const std::size_t param = (count / nranks) & -(16 / elt);
       return Counts{nranks * param, nranks * param, param, 0, 0};
     },
     [](std::size_t count, int typesize, int nranks) { return static_cast<double>(count * nranks * typesize); },
     [](int nranks) { return static_cast<double>(nranks - 1) / static_cast<double>(nranks); },
     [](const Inputs& in, int rank, std::uint64_t k, const Counts& n, int, int) {
       return in(static_cast<int>(k / n.param), rank * n.param + k % n.param);
     }},
    {"broadcast",  // src/broadcast.cu; ncclBroadcast: every rank gets the root's buffer
     [](std::size_t count, std::size_t, int) { return Counts{count, count, count, 0, 0}; },
     [](std::size_t count, int typesize, int) { return static_cast<double>(count * typesize); },
     [](int) { return 1.0; },
     [](const Inputs& in, int, std::uint64_t k, const Counts&, int, int root) { return in(root, k); }},
};

constexpr std::size_t kCounts[] = {1, 2, 7, 8, 100, 1000, 1024, 4096, 12345, 1u << 20};

}  // namespace

TEST(Collectives, EveryRowIsRegisteredAndEveryRegisteredOneHasARow) {
  for (const Row& row : kRows) EXPECT_NE(find_collective(row.name), nullptr) << row.name;
  for (const CollectiveSpec* c : registered_collectives()) {
    bool found = false;
    for (const Row& row : kRows) found = found || c->name == row.name;
    EXPECT_TRUE(found) << c->name << " has no row of nccl-tests' formulas here";
  }
  EXPECT_EQ(registered_collectives().size(), std::size(kRows));
}

TEST(Collectives, BufferCountsAreNcclTestsGetCollByteCount) {
  for (const Row& row : kRows) {
    const CollectiveSpec& c = *find_collective(row.name);
    for (int nranks : {1, 2, 3, 8})
      for (int elt : {2, 4})
        for (std::size_t count : kCounts) {
          const Counts want = row.byte_count(count, static_cast<std::size_t>(elt), nranks);
          const BufferCounts got = c.counts(count, elt, nranks);
          const std::string at = std::string(row.name) + " count " + std::to_string(count) + " elt " +
                                 std::to_string(elt) + " ranks " + std::to_string(nranks);
          EXPECT_EQ(got.send, want.send) << at;
          EXPECT_EQ(got.recv, want.recv) << at;
          EXPECT_EQ(got.param, want.param) << at;
          EXPECT_EQ(got.send_in_place_offset, want.send_in_place) << at;
          EXPECT_EQ(got.recv_in_place_offset, want.recv_in_place) << at;
        }
  }
}

// algbw and busbw as nccl-tests' getBw computes them from the count it passes (paramcount).
TEST(Collectives, BandwidthIsNcclTestsGetBw) {
  const double sec = 1.25e-3;
  for (const Row& row : kRows) {
    const CollectiveSpec& c = *find_collective(row.name);
    for (int nranks : {1, 2, 3, 8})
      for (int elt : {2, 4})
        for (std::size_t count : kCounts) {
          const std::size_t param = row.byte_count(count, static_cast<std::size_t>(elt), nranks).param;
          const double alg_gbs = row.base_bytes(param, elt, nranks) / 1.0E9 / sec;
          const double bus_gbs = alg_gbs * row.factor(nranks);
          const double ours_alg = c.algbw_bytes(param, elt, nranks) / sec;  // bytes/s
          const double ours_bus = ours_alg * c.bus_factor(nranks);
          EXPECT_DOUBLE_EQ(ours_alg / 1e9, alg_gbs) << row.name << " " << count << " " << nranks;
          EXPECT_DOUBLE_EQ(ours_bus / 1e9, bus_gbs) << row.name << " " << count << " " << nranks;
        }
  }
}

// What the device check compares: every element of every rank's receive buffer (nccl-tests'
// #wrong counts recvcount elements per rank) against the collective carried out here.
TEST(Collectives, ExpectedValuesAreTheCollectivesResult) {
  for (const Row& row : kRows) {
    const CollectiveSpec& c = *find_collective(row.name);
    for (int nranks : {1, 2, 3, 8})
      for (int elt : {2, 4})
        for (std::size_t count : std::initializer_list<std::size_t>{8, 64, 100, 256})
          for (int root : {0, nranks - 1}) {
            const BufferCounts n = c.counts(count, elt, nranks);
            const Counts want = row.byte_count(count, static_cast<std::size_t>(elt), nranks);
            const OutputLayout layout = output_layout(c, n, nranks, root);
            const Inputs in = [&](int q, std::uint64_t i) {
              EXPECT_LT(i, n.send) << row.name << ": an output taken from beyond the send buffer";
              return input_value(layout, q, i);
            };
            for (int r = 0; r < nranks; ++r)
              for (std::uint64_t k = 0; k < n.recv; ++k)
                ASSERT_EQ(expected_value(layout, r, k), row.output(in, r, k, want, nranks, root))
                    << row.name << " count " << count << " ranks " << nranks << " rank " << r << " element " << k;
          }
  }
}

// The catalogue's choices keep to what NCCL and nccl-tests offer for each collective.
TEST(Collectives, OfferedVariantsAreConsistent) {
  for (const CollectiveSpec* c : registered_collectives()) {
    auto subset = [](const std::vector<std::string>& some, const std::vector<std::string>& all) {
      for (const std::string& s : some)
        if (std::find(all.begin(), all.end(), s) == all.end()) return false;
      return !some.empty();
    };
    EXPECT_TRUE(subset(c->default_types, c->types)) << c->name;
    EXPECT_TRUE(subset(c->default_modes, c->modes)) << c->name;
    EXPECT_TRUE(subset(c->default_algos, c->algos)) << c->name;
    EXPECT_TRUE(subset(c->types, {"fp32", "bf16", "fp16"})) << c->name;
    EXPECT_TRUE(subset(c->modes, {"out_of_place", "in_place", "graph"})) << c->name;
    EXPECT_TRUE(subset(c->algos, {"ring", "tree", "nvls", "collnet", "auto"})) << c->name;
    const bool offers_nvls = std::find(c->algos.begin(), c->algos.end(), "nvls") != c->algos.end();
    EXPECT_EQ(offers_nvls, c->has_nvls) << c->name << ": NVLS offered exactly where NCCL has it";
    EXPECT_FALSE(c->nccl_name.empty() || c->summary.empty() || c->nccl_call.empty() || c->bus_factor_formula.empty())
        << c->name;
    EXPECT_EQ(c->enqueue, nullptr) << c->name << ": the CPU tests' descriptions are built without NCCL";
  }
}
