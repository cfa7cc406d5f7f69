#include <gtest/gtest.h>

#include <map>
#include <set>

#include "p2p/p2p_copy_split.hpp"
#include "p2p_catalogue.hpp"
#include "stream_latch.hpp"

using namespace triaudit;

namespace {
std::map<std::string, std::string> as_map(const ContextEntries& e) { return {e.begin(), e.end()}; }
}  // namespace

TEST(P2pCatalogue, NamesAsTheReportReadsThem) {
  EXPECT_EQ((P2pCase{{"ce", "uni", false}, 0, 1, 536870912}).name(), "p2p/ce/uni/src:0/dst:1/bytes:536870912");
  EXPECT_EQ((P2pCase{{"sm_read", "bidir", false}, 3, 2, 8192}).name(), "p2p/sm_read/bidir/src:3/dst:2/bytes:8192");
  EXPECT_EQ((P2pCase{{"staged", "uni", false}, 1, 0, 4096}).name(), "p2p/staged/uni/src:1/dst:0/bytes:4096");
  // Back-to-back small copies, the time per copy: named for what they are, not "latency" (nvbandwidth's
  // latency is a pointer chase; the Python readers read the old name as this one, legacy_names.py).
  EXPECT_EQ((P2pCase{{"sm_write", "uni", true}, 0, 7, 4}).name(), "p2p/small_copy/sm_write/src:0/dst:7/bytes:4");
}

// --tests=latency, the old word, still selects the small copies.
TEST(P2pCatalogue, TheOldTestWordStillSelectsTheSmallCopies) {
  P2pOptions o;
  o.max_gpus = 2;
  o.tests = {"latency"};
  const auto cases = p2p_catalogue(o);
  ASSERT_EQ(cases.size(), 2u * 2u * 3u);  // ce and sm_write, 2 ordered pairs, 3 sizes
  for (const auto& c : cases) EXPECT_TRUE(c.kind.small_copy) << c.name();
}

TEST(P2pCatalogue, SizesEndAtNvbandwidthsBufferAndStepByFour) {
  const auto s = p2p_sizes(8ULL << 10, 512ULL << 20);
  ASSERT_EQ(s.size(), 9u);
  EXPECT_EQ(s.front(), 8192u);
  EXPECT_EQ(s.back(), 536870912u);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], 4 * s[i - 1]);
  // A top that is not a power of two is rounded down; the bottom bounds the sweep.
  EXPECT_EQ(p2p_sizes(1ULL << 20, 1000000000ULL),
            (std::vector<std::uint64_t>{2097152, 8388608, 33554432, 134217728, 536870912}));
  EXPECT_EQ(p2p_sizes(4096, 4096), (std::vector<std::uint64_t>{4096}));
  EXPECT_THROW(p2p_sizes(8, 4096), std::invalid_argument);     // below one 16-byte vector
  EXPECT_THROW(p2p_sizes(8192, 4096), std::invalid_argument);  // min above max
}

TEST(P2pCatalogue, SmallCopySizesAreSmall) {
  EXPECT_EQ(p2p_small_copy_sizes(), (std::vector<std::uint64_t>{4, 256, 4096}));
}

TEST(P2pCatalogue, EveryOrderedPairOfTheFixedGpuCount) {
  P2pOptions o;
  o.max_gpus = 4;
  o.min_bytes = o.max_bytes = 1 << 20;
  o.tests = {"ce"};
  o.directions = {"uni"};
  const auto cases = p2p_catalogue(o);
  ASSERT_EQ(cases.size(), 12u);  // 4 x 3 ordered pairs, one size
  std::set<std::pair<int, int>> pairs;
  for (const auto& c : cases) {
    EXPECT_NE(c.src, c.dst);
    pairs.insert({c.src, c.dst});
  }
  EXPECT_EQ(pairs.size(), 12u);
}

TEST(P2pCatalogue, DefaultCatalogueHoldsEveryTestDirectionAndTheSmallCopies) {
  const auto cases = p2p_catalogue(P2pOptions{});
  std::map<std::string, int> per_kind;
  std::set<std::string> names;
  for (const auto& c : cases) {
    ++per_kind[c.kind.small_copy ? "small_copy/" + c.kind.test : c.kind.test + "/" + c.kind.direction];
    names.insert(c.name());
  }
  EXPECT_EQ(names.size(), cases.size());  // no name twice
  for (const char* k : {"ce/uni", "ce/bidir", "ce_read/uni", "ce_read/bidir", "sm_read/uni", "sm_read/bidir",
                        "sm_write/uni", "sm_write/bidir"})
    EXPECT_EQ(per_kind[k], 56 * 9) << k;  // 8 x 7 pairs, 9 sizes
  EXPECT_EQ(per_kind["small_copy/ce"], 56 * 3);
  EXPECT_EQ(per_kind["small_copy/sm_write"], 56 * 3);
  EXPECT_EQ(per_kind.count("staged/uni"), 0u);  // only with --staged
  // Consecutive cases share a pair: sizes are innermost.
  EXPECT_EQ(cases[0].src, cases[8].src);
  EXPECT_EQ(cases[0].dst, cases[8].dst);
  EXPECT_EQ(cases[0].bytes, 8192u);
  EXPECT_EQ(cases[8].bytes, 536870912u);
}

TEST(P2pCatalogue, StagedOnlyWhenAskedAndOnlyOneWay) {
  P2pOptions o;
  o.max_gpus = 2;
  o.min_bytes = o.max_bytes = 1 << 20;
  o.tests = {"ce"};
  o.staged = true;
  std::set<std::string> names;
  for (const auto& c : p2p_catalogue(o)) names.insert(c.name());
  EXPECT_EQ(names.count("p2p/staged/uni/src:0/dst:1/bytes:1048576"), 1u);
  EXPECT_EQ(names.count("p2p/staged/uni/src:1/dst:0/bytes:1048576"), 1u);
  for (const auto& n : names) EXPECT_EQ(n.find("staged/bidir"), std::string::npos) << n;
}

TEST(P2pCatalogue, RegionsFitBehindOneHold) {
  for (const P2pKind& k :
       {P2pKind{"ce", "uni", false}, P2pKind{"sm_read", "bidir", false}, P2pKind{"staged", "uni", false},
        P2pKind{"ce", "uni", true}, P2pKind{"sm_write", "uni", true}})
    for (std::uint64_t bytes : {4ULL, 4096ULL, 8192ULL, 1ULL << 20, 16ULL << 20, 512ULL << 20}) {
      const int ops = p2p_ops_per_region(k, bytes), untimed = p2p_untimed_ops(k, bytes);
      EXPECT_GE(ops, 1);
      EXPECT_LE((ops + untimed) * p2p_queue_entries(k) + 2, StreamLatch::kMaxQueuedEntries) << k.test << " " << bytes;
    }
  EXPECT_EQ(p2p_ops_per_region({"ce", "uni", true}, 4), 100);
  EXPECT_EQ(p2p_ops_per_region({"ce", "uni", false}, 512ULL << 20), 1);
  EXPECT_EQ(p2p_ops_per_region({"ce", "uni", false}, 1ULL << 20), 32);
  EXPECT_EQ(p2p_untimed_ops({"ce", "uni", false}, 16ULL << 20), 4);
  EXPECT_EQ(p2p_untimed_ops({"ce", "uni", false}, 32ULL << 20), 1);
  EXPECT_EQ(p2p_queue_entries({"ce", "bidir", false}), 5);
}

TEST(P2pCatalogue, DeviceMemoryPerEnd) {
  EXPECT_EQ(p2p_device_bytes({"ce", "uni", false}, 1000), 1000u);
  // Source and destination of twice the size at each end (the interfering copy is 2x).
  EXPECT_EQ(p2p_device_bytes({"sm_write", "bidir", false}, 1000), 4000u);
}

TEST(P2pCatalogue, PairsBeyondTheVisibleGpusSkipWithTheReason) {
  EXPECT_EQ(pair_visibility_skip(0, 1, 1), std::optional<std::string>("needs 2 GPUs, 1 visible"));
  EXPECT_EQ(pair_visibility_skip(2, 0, 2), std::optional<std::string>("GPU 2 not visible (2 visible: 0-1)"));
  EXPECT_EQ(pair_visibility_skip(0, 5, 4), std::optional<std::string>("GPU 5 not visible (4 visible: 0-3)"));
  EXPECT_EQ(pair_visibility_skip(1, 0, 2), std::nullopt);
}

TEST(P2pTopology, NvmlP2pStatusInWords) {
  EXPECT_EQ(p2p_status_words(0), "ok");
  EXPECT_EQ(p2p_status_words(1), "chipset not supported");
  EXPECT_EQ(p2p_status_words(2), "GPU not supported");
  EXPECT_EQ(p2p_status_words(3), "topology not supported");
  EXPECT_EQ(p2p_status_words(4), "disabled by regkey");
  EXPECT_EQ(p2p_status_words(5), "not supported");
  EXPECT_EQ(p2p_status_words(6), "unknown");
  EXPECT_EQ(p2p_status_words(42), "status 42");
}

TEST(P2pTopology, CommonAncestorInNvidiaSmiWords) {
  EXPECT_EQ(topology_level_name(0), std::optional<std::string>("PIX"));
  EXPECT_EQ(topology_level_name(10), std::optional<std::string>("PIX"));
  EXPECT_EQ(topology_level_name(20), std::optional<std::string>("PXB"));
  EXPECT_EQ(topology_level_name(30), std::optional<std::string>("PHB"));
  EXPECT_EQ(topology_level_name(40), std::optional<std::string>("NODE"));
  EXPECT_EQ(topology_level_name(50), std::optional<std::string>("SYS"));
  EXPECT_EQ(topology_level_name(35), std::nullopt);
}

TEST(P2pTopology, NvLinksCountedAsNvidiaSmiDoes) {
  const std::string a = "0000:07:00.0", b = "0000:0f:00.0", c = "0000:47:00.0";
  // 4 x A100 with NV4 between every pair (links wired directly).
  GpuNvLinks ga{true, "", 12, 12, {{b, 4}, {c, 4}}, 0}, gb{true, "", 12, 12, {{a, 4}, {c, 4}}, 0};
  EXPECT_EQ(nvlinks_between(ga, a, gb, b), 4u);
  // HGX H100/H200: every link goes to an NVSwitch; nvidia-smi shows NV18 between every pair.
  GpuNvLinks sa{true, "", 18, 18, {}, 18}, sb{true, "", 18, 18, {}, 18};
  EXPECT_EQ(nvlinks_between(sa, a, sb, b), 18u);
  // A GPU with two links down behind the switches: the pair gets the fewer links.
  sb.to_switch = 16;
  EXPECT_EQ(nvlinks_between(sa, a, sb, b), 16u);
  // A switched GPU and an unlinked one; and a side NVML cannot read: the other side's view counts.
  EXPECT_EQ(nvlinks_between(sa, a, GpuNvLinks{true, "", 0, 0, {}, 0}, b), 0u);
  EXPECT_EQ(nvlinks_between(GpuNvLinks{false, "NOT_SUPPORTED", 0, 0, {}, 0}, a, gb, b), 4u);

  EXPECT_EQ(link_name(12, 50, ""), "NV12");
  EXPECT_EQ(link_name(0, 30, ""), "PHB");
  EXPECT_EQ(link_name(0, std::nullopt, "NOT_SUPPORTED"), "unknown (NVML: NOT_SUPPORTED)");
  EXPECT_EQ(link_name(0, 35, ""), "unknown (NVML: topology level 35)");
  EXPECT_EQ(nvlink_links_text(ga), "12/12");
  EXPECT_EQ(nvlink_links_text(GpuNvLinks{false, "FUNCTION_NOT_FOUND", 0, 0, {}, 0}),
            "unknown (NVML: FUNCTION_NOT_FOUND)");
}

TEST(P2pTopology, CpuListsInSysfsForm) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5, 3, 4}), "3-5");
  EXPECT_EQ(format_cpu_list({}), "");
  std::vector<int> expect;
  for (int c = 0; c < 64; ++c) expect.push_back(c);
  for (int c = 128; c < 192; ++c) expect.push_back(c);
  EXPECT_EQ(cpus_of_mask({~0ULL, 0ULL, ~0ULL}), expect);
  EXPECT_EQ(format_cpu_list(cpus_of_mask({~0ULL, 0ULL, ~0ULL})), "0-63,128-191");
  EXPECT_EQ(cpus_of_mask({0x5ULL}), (std::vector<int>{0, 2}));
}

TEST(P2pTopology, ContextKeysTheReportReads) {
  std::vector<GpuTopology> gpus = {{"NVIDIA H200", "0000:19:00.0", "0", "0-63,128-191", "18/18"},
                                   {"NVIDIA H200", "0000:3b:00.0", "1", "64-127,192-255", "18/18"}};
  std::vector<std::vector<PairTopology>> pairs(2, std::vector<PairTopology>(2));
  pairs[0][1] = {"NV18", "yes"};
  pairs[1][0] = {"NV18", "no (NVML: disabled by regkey)"};
  const auto m = as_map(p2p_context_entries(gpus, pairs));
  EXPECT_EQ(m.at("p2p_gpu_count"), "2");
  EXPECT_EQ(m.at("gpu_0_name"), "NVIDIA H200");
  EXPECT_EQ(m.at("gpu_1_pci_bus_id"), "0000:3b:00.0");
  EXPECT_EQ(m.at("gpu_1_numa_node"), "1");
  EXPECT_EQ(m.at("gpu_0_cpu_affinity"), "0-63,128-191");
  EXPECT_EQ(m.at("gpu_1_nvlink_links"), "18/18");
  EXPECT_EQ(m.at("p2p_link_0_1"), "NV18");
  EXPECT_EQ(m.at("p2p_access_0_1"), "yes");
  EXPECT_EQ(m.at("p2p_access_1_0"), "no (NVML: disabled by regkey)");
  EXPECT_EQ(m.count("p2p_link_0_0"), 0u);
}

TEST(P2pEnergy, PairCountersAddUp) {
  const EnergyReading a{1000, ""}, b{2500, ""}, bad{std::nullopt, "NOT_SUPPORTED"};
  EXPECT_EQ(sum_energy(a, b).millijoules, std::optional<std::uint64_t>(3500));
  EXPECT_EQ(sum_energy(a, bad).millijoules, std::nullopt);
  EXPECT_EQ(sum_energy(a, bad).error, "NOT_SUPPORTED");
  EXPECT_EQ(sum_energy(bad, a).error, "NOT_SUPPORTED");
}

TEST(P2pKernel, CopySplitsIntoVectorsAndAWordTail) {
  EXPECT_EQ(kernels::p2p_copy_split(4).vectors, 0u);
  EXPECT_EQ(kernels::p2p_copy_split(4).tail_words, 1u);
  EXPECT_EQ(kernels::p2p_copy_split(8).tail_words, 2u);
  EXPECT_EQ(kernels::p2p_copy_split(256).vectors, 16u);
  EXPECT_EQ(kernels::p2p_copy_split(256).tail_words, 0u);
  EXPECT_EQ(kernels::p2p_copy_split(60).vectors, 3u);
  EXPECT_EQ(kernels::p2p_copy_split(60).tail_words, 3u);
  EXPECT_EQ(kernels::p2p_copy_split(60).tail_offset_words, 12u);
}

// The quick profile measures one ordered pair per link type, the first of each in catalogue order.
TEST(P2pCatalogue, OnePairPerLinkType) {
  const std::vector<std::vector<std::string>> nvswitch(8, std::vector<std::string>(8, "NV18"));
  EXPECT_FALSE(representative_pair_skip(0, 1, nvswitch).has_value());
  int measured = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      if (i != j && !representative_pair_skip(i, j, nvswitch)) ++measured;
  EXPECT_EQ(measured, 1);  // 1 of 56
  // Two PCIe switches: PIX inside each, SYS across.
  std::vector<std::vector<std::string>> pcie(4, std::vector<std::string>(4, "SYS"));
  pcie[0][1] = pcie[1][0] = pcie[2][3] = pcie[3][2] = "PIX";
  EXPECT_FALSE(representative_pair_skip(0, 1, pcie).has_value());
  EXPECT_FALSE(representative_pair_skip(0, 2, pcie).has_value());
  const auto why = representative_pair_skip(2, 3, pcie);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("GPU 0 -> GPU 1 is measured for it"), std::string::npos);
  EXPECT_TRUE(representative_pair_skip(3, 0, pcie).has_value());
}
