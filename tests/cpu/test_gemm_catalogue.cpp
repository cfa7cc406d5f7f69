#include <gtest/gtest.h>

#include <set>

#include "gemm_catalogue.hpp"

using namespace triaudit;

TEST(GemmCatalogue, FlopAndByteCounts) {
  EXPECT_DOUBLE_EQ(gemm_flops(8192, 8192, 8192), 2.0 * 8192.0 * 8192.0 * 8192.0);
  // BF16 4096^3: reads A and B (2 x 32 MiB), writes D (32 MiB): 1365.3 FLOP/B (the seed's "1300+").
  EXPECT_DOUBLE_EQ(gemm_min_bytes(4096, 4096, 4096, 2, 2), 3.0 * 4096 * 4096 * 2);
  EXPECT_NEAR(gemm_intensity(4096, 4096, 4096, 2, 2), 1365.33, 0.01);
  // Decode: one token through a 4096x4096 projection is bandwidth-bound, ~1 FLOP/B.
  EXPECT_NEAR(gemm_intensity(1, 4096, 4096, 2, 2), 1.0, 0.01);
  // FP8 in, BF16 out; INT8 in, INT32 out.
  EXPECT_DOUBLE_EQ(gemm_min_bytes(16, 16, 16, 1, 4), 16.0 * 16 * 2 + 16.0 * 16 * 4);
}

TEST(GemmCatalogue, PrecisionSupportPerComputeCapability) {
  std::string why;
  EXPECT_TRUE(precision_supported(GemmPrecision::FP8, 89, &why));
  EXPECT_TRUE(precision_supported(GemmPrecision::FP8, 90, &why));
  EXPECT_FALSE(precision_supported(GemmPrecision::FP8, 80, &why));
  EXPECT_NE(why.find("8.9"), std::string::npos) << why;
  EXPECT_NE(why.find("8.0"), std::string::npos) << why;
  EXPECT_TRUE(precision_supported(GemmPrecision::BF16, 80, nullptr));
  EXPECT_FALSE(precision_supported(GemmPrecision::BF16, 75, nullptr));
  EXPECT_TRUE(fp64_has_tensor_cores(80));
  EXPECT_TRUE(fp64_has_tensor_cores(90));
  EXPECT_FALSE(fp64_has_tensor_cores(89));  // RTX 40 / L40S: FP64 on CUDA cores at 1/64 rate
  EXPECT_FALSE(fp64_has_tensor_cores(120));
}

TEST(GemmCatalogue, BoundsOrderedByPrecision) {
  const auto& fp32 = precision_info(GemmPrecision::FP32).bound;
  const auto& tf32 = precision_info(GemmPrecision::TF32).bound;
  const auto& bf16 = precision_info(GemmPrecision::BF16).bound;
  const auto& fp16 = precision_info(GemmPrecision::FP16).bound;
  const auto& fp8 = precision_info(GemmPrecision::FP8).bound;
  EXPECT_LT(precision_info(GemmPrecision::FP64).bound.eps_acc, fp32.eps_acc);
  // FP32 accumulation sets eps_acc, whatever the inputs (the rule's point): FP32, FP16, BF16 alike.
  EXPECT_EQ(fp32.eps_acc, bf16.eps_acc);
  EXPECT_EQ(fp16.eps_acc, bf16.eps_acc);
  EXPECT_LE(bf16.eps_acc, 0x1p-16);
  // The output's rounding sets eps_out: FP32 < FP16 < BF16.
  EXPECT_LT(fp32.eps_out, fp16.eps_out);
  EXPECT_LT(fp16.eps_out, bf16.eps_out);
  EXPECT_LE(tf32.eps_acc, 0x1p-13);
  EXPECT_LE(bf16.eps_out, fp8.eps_out);
  EXPECT_TRUE(precision_info(GemmPrecision::INT8).bound.exact());
  EXPECT_FALSE(bf16.exact());
  EXPECT_STREQ(precision_info(GemmPrecision::INT8).counter, "ops");
  EXPECT_TRUE(precision_info(GemmPrecision::FP8).tn_only);
  EXPECT_EQ(precision_by_name("bf16").precision, GemmPrecision::BF16);
  EXPECT_THROW(precision_by_name("fp4"), std::invalid_argument);
}

TEST(GemmCatalogue, ShapeLists) {
  const auto sq = square_shapes(16384);
  EXPECT_EQ(sq.size(), 14u);  // 256 .. 16384, NN and TN
  EXPECT_EQ(sq.back().m, 16384u);
  const auto llm = llm_shapes();
  EXPECT_EQ(llm.size(), 24u);  // 2 models x 4 layers x 3 token counts
  std::set<std::uint64_t> tokens;
  for (const auto& s : llm) {
    tokens.insert(s.tokens);
    EXPECT_EQ(s.n, s.tokens);  // PyTorch's F.linear reaches cuBLAS as TN with n = tokens
    EXPECT_TRUE(s.transa);
  }
  EXPECT_EQ(tokens, (std::set<std::uint64_t>{1, 16, 4096}));
  // m = out_features, k = in_features, A = the weight: Llama-2-70B's MLP down projection 28672 -> 8192.
  bool has_70b_mlp = false;
  for (const auto& s : llm) has_70b_mlp |= s.family == "llama2-70b-mlp_down" && s.m == 8192 && s.k == 28672;
  EXPECT_TRUE(has_70b_mlp);
  std::set<std::uint64_t> mis;
  for (const auto& s : misaligned_shapes()) mis.insert(s.m);
  EXPECT_TRUE(mis.count(8191) && mis.count(8193) && mis.count(4095));
  EXPECT_GE(ceiling_shapes().size(), 8u);
}

TEST(GemmCatalogue, Names) {
  EXPECT_EQ(gemm_case_name("cublaslt", GemmPrecision::BF16, {8192, 8192, 8192, "square", true}),
            "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192");
  // LLM layers are named by the layer and the tokens, so a reader sees what ran.
  GemmShape qkv{12288, 16, 4096, "llama2-7b-qkv", true};
  qkv.tokens = 16;
  EXPECT_EQ(gemm_case_name("cublaslt", GemmPrecision::FP8, qkv), "gemm/cublaslt/fp8e4m3/llm:llama2-7b-qkv/tokens:16");
}

TEST(GemmCatalogue, Fp8FastAccumulationIsItsOwnCase) {
  const auto& fast = precision_info(GemmPrecision::FP8FastAccum);
  const auto& fp8 = precision_info(GemmPrecision::FP8);
  EXPECT_STREQ(fast.name, "fp8e4m3fast");
  EXPECT_EQ(fast.min_cc, fp8.min_cc);
  EXPECT_TRUE(fast.tn_only);
  EXPECT_GE(fast.bound.eps_acc, fp8.bound.eps_acc);  // no periodic promotion: no tighter bound than plain FP8
  EXPECT_EQ(&precision_by_name("fp8e4m3fast"), &fast);
}

// Rotated operands must exceed three L2s at every shape, so no "cold" GEMM is timed from L2.
// L2 sizes as the devices report them: A100 40 MiB, H200 60 MiB, RTX 4090 72 MiB.
TEST(GemmCatalogue, RotationReachesThreeL2sAtEveryShape) {
  for (std::uint64_t l2 : {40ULL << 20, 60ULL << 20, 72ULL << 20})
    for (const PrecisionInfo& p : gemm_precisions()) {
      std::vector<GemmShape> shapes = square_shapes(16384);
      for (const auto& s : llm_shapes()) shapes.push_back(s);
      for (const auto& s : misaligned_shapes()) shapes.push_back(s);
      for (const GemmShape& s : shapes) {
        const std::uint64_t per_set = operand_set_bytes(s, p.a_bytes, p.c_bytes);
        const int sets = rotation_sets(per_set, l2);
        EXPECT_GE(static_cast<std::uint64_t>(sets) * per_set, 3 * l2)
            << p.name << " m:" << s.m << " n:" << s.n << " k:" << s.k << " l2:" << (l2 >> 20) << " MiB";
        EXPECT_GE(sets, 1);
      }
    }
  // BF16 256^3 is 384 KiB per set: 480 sets on an H200 (the old cap of 16 left 6 MiB, all in L2).
  EXPECT_EQ(rotation_sets(operand_set_bytes({256, 256, 256, "square", true}, 2, 2), 60ULL << 20), 480);
  // One set is enough once a set alone is three L2s.
  EXPECT_EQ(rotation_sets(operand_set_bytes({16384, 16384, 16384, "square", true}, 2, 2), 60ULL << 20), 1);
}

TEST(GemmCatalogue, OperandSetsAreAlignedSlices) {
  // Each matrix of a set starts on a 256-byte boundary (cuBLASLt and TMA need 16 bytes).
  EXPECT_EQ(operand_set_bytes({1, 1, 1, "llm", true}, 1, 2), 3 * 256u);
  EXPECT_EQ(aligned_matrix_bytes(4095, 4095, 2) % 256, 0u);
}

// Regions are sized by time, not FLOPs: a 2048^3 BF16 GEMM (~25 us on an H100) was timed alone.
TEST(GemmCatalogue, RegionsHoldHalfAMillisecond) {
  EXPECT_EQ(gemms_per_region(25e-6), 20);  // 0.5 ms
  EXPECT_EQ(gemms_per_region(1.4e-3), 1);  // 8192^3: one is enough
  EXPECT_EQ(gemms_per_region(2e-6), 31);   // the hold's queue caps it
  EXPECT_EQ(gemms_per_region(0.0), 1);
  EXPECT_GE(gemms_per_region(25e-6) * 25e-6, kMinRegionSeconds);
}

// The selection uses the statistic the cases report (the mean), over every candidate's regions.
TEST(GemmCatalogue, TheFastestCandidateByMean) {
  std::vector<CandidateTiming> c(3);
  c[0] = {true, 0.030, 100, 10};  // 300 us mean
  c[1] = {true, 0.029, 100, 10};  // 290 us mean: the fastest
  c[2] = {false, 0.0, 0, 0};      // did not launch
  EXPECT_EQ(fastest_candidate(c), 1);
  EXPECT_TRUE(selection_done(c, 0.020, 3));
  EXPECT_FALSE(selection_done(c, 0.031, 3));  // 20 ms each is the floor, whatever one candidate has
  c[1].regions = 2;
  EXPECT_FALSE(selection_done(c, 0.020, 3));
  EXPECT_EQ(fastest_candidate({}), -1);
  EXPECT_FALSE(selection_done({{false, 0, 0, 0}}, 0.0, 0));
}

// The schedule autotune runs (run_selection), on a fake clock: the warm-up first on the heuristic's
// choice, then the candidates alternate round by round until each has its time and regions.
TEST(GemmCatalogue, SelectionWarmsUpThenAlternatesUntilEachHasItsShare) {
  std::vector<CandidateTiming> c(3);
  c[0].runs = c[2].runs = true;  // candidate 1 did not launch
  const double region_s[] = {0.004, 0.0, 0.003};
  double clock = 0;
  std::vector<int> order;
  run_selection(
      c, 2, 31, 0.1, 0.020, 3,
      [&](int i) {
        order.push_back(i);
        clock += region_s[i];
        return region_s[i];
      },
      [&] { return clock; });
  // 0.1 s of warm-up at 3 ms a region: 34 regions of candidate 2, none of them counted.
  std::size_t warm = 0;
  while (warm < order.size() && order[warm] == 2) ++warm;
  EXPECT_EQ(warm, 34u);
  for (std::size_t k = warm; k < order.size(); ++k) EXPECT_EQ(order[k], (k - warm) % 2 == 0 ? 0 : 2) << k;
  EXPECT_GE(c[0].seconds, 0.020);
  EXPECT_GE(c[2].seconds, 0.020);
  EXPECT_EQ(c[0].regions, c[2].regions);  // the same rounds for both
  EXPECT_EQ(c[1].regions, 0);
  EXPECT_EQ(c[0].gemms, 31LL * c[0].regions);
  // Candidate 2 needs 7 regions for 20 ms (3 ms each), candidate 0 five: both get seven rounds.
  EXPECT_EQ(c[2].regions, 7);
  EXPECT_EQ(fastest_candidate(c), 2);
  // Nothing runs when the first choice did not launch (no endless loop).
  std::vector<CandidateTiming> none(2);
  run_selection(none, 0, 31, 0.1, 0.02, 3, [&](int) { return 1.0; }, [&] { return 0.0; });
  EXPECT_EQ(none[0].regions, 0);
}

// mamf-finder's grid, --m_range 0 20480 256 --n 4096 --k 4096: np.arange(256, 20480, 256) (a start of
// 0 becomes the step; the stop is excluded), so M = 256 .. 20224, 79 shapes. torch.mm(A[M x K],
// B[K x N]) with B = randn(N, K).t() reaches cuBLAS (column-major) as C^T = B^T A^T: TN with
// cuBLAS's m = N = 4096, n = M (the one that varies), k = K.
TEST(GemmCatalogue, TheMamfGridIsMamfFindersGridAsCublasSeesIt) {
  const auto g = mamf_ceiling_shapes();
  ASSERT_EQ(g.size(), 79u);
  EXPECT_EQ(g.front().n, 256u);
  EXPECT_EQ(g.back().n, 20224u);
  for (std::size_t i = 0; i < g.size(); ++i) {
    EXPECT_TRUE(g[i].transa && g[i].m == 4096 && g[i].k == 4096) << i;
    EXPECT_EQ(g[i].n, 256u * (i + 1)) << i;
  }
}

// A case's operands and tuned algorithm are made once per case, whatever the repetitions: the
// sustained ceiling tuned again on every call, so its repetitions could time different algorithms.
TEST(GemmCatalogue, ACaseTunesOnceAcrossItsRepetitions) {
  struct Tuned {
    int* alive;
    int id;
    Tuned(int* a, int i) : alive(a), id(i) { ++*alive; }
    Tuned(Tuned&& o) noexcept : alive(o.alive), id(o.id) { o.alive = nullptr; }
    ~Tuned() {
      if (alive) --*alive;
    }
  };
  int made = 0, alive = 0;
  KeptForCase<Tuned> kept;
  auto make = [&] {
    EXPECT_EQ(alive, 0) << "the previous case's buffers are freed first";
    return Tuned(&alive, ++made);
  };
  for (int rep = 0; rep < 5; ++rep) EXPECT_EQ(kept.get("gemm/ceiling/bf16/sustained", make).id, 1);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(kept.get("gemm/ceiling/fp8e4m3/sustained", make).id, 2);
  EXPECT_EQ(alive, 1);
  kept.clear();
  EXPECT_EQ(alive, 0);
}
