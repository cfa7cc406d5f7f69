// Every cuBLASLt precision and every ladder level, verified on small and odd shapes against the
// FP64 reference; the check itself must catch a wrong result.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "gemm/cublaslt_gemm.hpp"
#include "gemm/gemm_check.hpp"
#include "gemm/ladder/ladder.cuh"

using namespace triaudit;

namespace {

// When a ladder level fails, one GPU session has minutes to find out why: compare every element
// of D (small shapes) with its FP64 dot product and print where the wrong ones are, as counts
// over the tile structure (rows mod 128 in bands of 16, columns mod 256 in bands of 32), plus
// the usual culprits: never written (NaN poison), zero, the transpose of the right answer.
std::string diagnose(const GemmBuffers& buf, cudaStream_t s) {
  const GemmShape& sh = buf.shape;
  const std::uint64_t count = sh.m * sh.n;
  if (count > (1u << 20)) return "(shape too large for a full diagnosis)";
  std::vector<std::uint32_t> rows(count), cols(count);
  for (std::uint64_t e = 0; e < count; ++e) {
    rows[e] = static_cast<std::uint32_t>(e % sh.m);
    cols[e] = static_cast<std::uint32_t>(e / sh.m);
  }
  DeviceBuffer<std::uint32_t> drows(count), dcols(count);
  DeviceBuffer<double> ref(count), absref(count), got(count);
  TRIAUDIT_CUDA(cudaMemcpy(drows.data(), rows.data(), count * 4, cudaMemcpyHostToDevice));
  TRIAUDIT_CUDA(cudaMemcpy(dcols.data(), cols.data(), count * 4, cudaMemcpyHostToDevice));
  const kernels::Samples smp{drows.data(), dcols.data(), static_cast<int>(count)};
  if (!kernels::gemm_reference_samples(buf.a(0), buf.b(0), buf.d(0), buf.ab, buf.cd, sh.m, sh.n, sh.k, sh.transa, smp,
                                       ref.data(), absref.data(), got.data(), s))
    return "(no reference for these types)";
  std::vector<double> r(count), ar(count), g(count);
  TRIAUDIT_CUDA(cudaStreamSynchronize(s));
  TRIAUDIT_CUDA(cudaMemcpy(r.data(), ref.data(), count * 8, cudaMemcpyDeviceToHost));
  TRIAUDIT_CUDA(cudaMemcpy(ar.data(), absref.data(), count * 8, cudaMemcpyDeviceToHost));
  TRIAUDIT_CUDA(cudaMemcpy(g.data(), got.data(), count * 8, cudaMemcpyDeviceToHost));
  auto bad = [&](std::uint64_t e, double v) { return !(std::fabs(v - r[e]) <= 2e-2 * ar[e] + 1e-30); };
  std::uint64_t wrong = 0, nan = 0, zero = 0, transposed = 0;
  int map[8][8] = {};
  std::ostringstream first;
  for (std::uint64_t e = 0; e < count; ++e) {
    if (!bad(e, g[e])) continue;
    ++wrong;
    if (std::isnan(g[e])) ++nan;
    if (g[e] == 0.0) ++zero;
    const std::uint64_t i = e % sh.m, j = e / sh.m;
    if (sh.m == sh.n) {  // does D(i,j) hold what D(j,i) should?
      const std::uint64_t t = j + i * sh.m;
      if (std::fabs(g[e] - r[t]) <= 2e-2 * ar[t]) ++transposed;
    }
    ++map[(i % 128) / 16][(j % 256) / 32];
    if (wrong <= 4) first << " (" << i << "," << j << "): got " << g[e] << " want " << r[e] << ";";
  }
  std::ostringstream os;
  os << wrong << " of " << count << " elements wrong (" << nan << " never written, " << zero << " zero, " << transposed
     << " equal to the transposed answer);" << first.str()
     << "\n  wrong per band, rows (i mod 128)/16 down, cols (j mod 256)/32 across:";
  for (auto& row : map) {
    os << "\n   ";
    for (int c : row) os << " " << c;
  }
  return os.str();
}

int cc() {
  int dev = 0, major = 0, minor = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major * 10 + minor;
}
}  // namespace

TEST(CublasLt, EveryPrecisionOnSmallAndOddShapes) {
  Stream s;
  LtHandle lt;
  const std::size_t ws_bytes = lt_workspace_bytes(cc());
  DeviceBuffer<unsigned char> ws(ws_bytes);
  for (const PrecisionInfo& p : gemm_precisions()) {
    if (!precision_supported(p.precision, cc(), nullptr)) continue;
    for (GemmShape shape : {GemmShape{256, 256, 256, "t", true}, GemmShape{384, 128, 512, "t", false},
                            GemmShape{1000, 520, 776, "t", true}, GemmShape{16, 4096, 4096, "t", true}}) {
      if (p.tn_only && !shape.transa) continue;
      const LtTypes t = lt_types(p.precision);
      GemmBuffers buf(t.ab_elem, t.cd_elem, shape, 1, s);
      LtGemm g(lt, p.precision, shape, ws_bytes);
      try {
        g.autotune(buf, ws.data(), s, 1);
      } catch (const SkipCase& e) {
        continue;  // e.g. FP8 alignment rules for this shape: reported as a skip by the benchmark
      }
      g.run(buf.a(0), buf.b(0), buf.d(0), ws.data(), s);
      const GemmCheck c = check_gemm(buf, 0, p.bound, s);
      EXPECT_TRUE(c.ok()) << p.name << " " << shape.m << "x" << shape.n << "x" << shape.k << ": " << c.describe();
    }
  }
}

// The decode shapes as PyTorch runs them (m = out_features, n = tokens) must be measured, not
// skipped: FP8 at "M = 1" used to be refused because the shape was the transpose of the real one.
TEST(CublasLt, DecodeLayersRunInEveryPrecisionTheModelUses) {
  Stream s;
  LtHandle lt;
  const std::size_t ws_bytes = lt_workspace_bytes(cc());
  DeviceBuffer<unsigned char> ws(ws_bytes);
  for (GemmPrecision p : {GemmPrecision::BF16, GemmPrecision::FP8}) {
    if (!precision_supported(p, cc(), nullptr)) continue;
    for (const GemmShape& shape : llm_shapes()) {
      if (shape.tokens > 16 || shape.family.rfind("llama2-7b", 0) != 0) continue;
      const LtTypes t = lt_types(p);
      GemmBuffers buf(t.ab_elem, t.cd_elem, shape, 1, s);
      LtGemm g(lt, p, shape, ws_bytes);
      EXPECT_NO_THROW(g.autotune(buf, ws.data(), s, 1))
          << precision_info(p).name << " " << shape.family << " tokens " << shape.tokens;
      g.run(buf.a(0), buf.b(0), buf.d(0), ws.data(), s);
      const GemmCheck c = check_gemm(buf, 0, precision_info(p).bound, s);
      EXPECT_TRUE(c.ok()) << precision_info(p).name << " " << shape.family << " tokens " << shape.tokens << ": "
                          << c.describe();
    }
  }
}

// One test per level, and CTest runs each level in its own process (gpu_ladder_level_N): a level
// whose kernel traps breaks the CUDA context, and must not take the other levels' verdicts with it.
class LadderLevel : public testing::TestWithParam<int> {};

TEST_P(LadderLevel, MatchesTheReferenceOnSmallAndOddShapes) {
  const int l = GetParam();
  int count = 0;
  const kernels::LadderLevel* levels = kernels::ladder_levels(&count);
  ASSERT_LT(l, count);
  Stream s;
  if (kernels::ladder_unsupported(l, 256, 256, 256, cc()).empty()) {
    ASSERT_EQ(kernels::ladder_launch_check(l), "") << levels[l].name;
  }
  int ran = 0;
  for (GemmShape shape :
       {GemmShape{256, 256, 256, "t", true}, GemmShape{512, 384, 640, "t", true}, GemmShape{200, 136, 72, "t", true},
        GemmShape{1000, 1000, 1000, "t", true}, GemmShape{1024, 2048, 4096, "t", true},
        // 18 M-tiles of 128: level 5's grouped order has a full group of 16 and a rest of 2.
        GemmShape{2304, 520, 256, "t", true}}) {
    if (!kernels::ladder_unsupported(l, shape.m, shape.n, shape.k, cc()).empty()) continue;
    const GemmPrecision p = levels[l].bf16 ? GemmPrecision::BF16 : GemmPrecision::FP32;
    const LtTypes t = lt_types(p);
    GemmBuffers buf(t.ab_elem, t.cd_elem, shape, 1, s);
    kernels::ladder_gemm(l, buf.a(0), buf.b(0), buf.d(0), shape.m, shape.n, shape.k, s);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << levels[l].name;
    const GemmCheck c = check_gemm(buf, 0, precision_info(p).bound, s);
    EXPECT_TRUE(c.ok()) << levels[l].name << " " << shape.m << "x" << shape.n << "x" << shape.k << ": " << c.describe()
                        << "\n  " << (c.ok() ? std::string() : diagnose(buf, s));
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << levels[l].name << ": " << kernels::ladder_unsupported(l, 256, 256, 256, cc());
}

INSTANTIATE_TEST_SUITE_P(Ladder, LadderLevel, testing::Range(0, 6));

TEST(GemmCheck, CatchesAWrongResult) {
  Stream s;
  const GemmShape shape{256, 256, 256, "t", true};
  const GemmBound& bound = precision_info(GemmPrecision::FP32).bound;
  GemmBuffers buf(kernels::ElemType::F32, kernels::ElemType::F32, shape, 1, s);
  EXPECT_FALSE(check_gemm(buf, 0, bound, s).ok());  // D still holds the NaN poison
  kernels::ladder_gemm(1, buf.a(0), buf.b(0), buf.d(0), shape.m, shape.n, shape.k, s);
  EXPECT_TRUE(check_gemm(buf, 0, bound, s).ok());
  const float wrong = 1e3f;
  ASSERT_EQ(cudaMemcpy(buf.d(0), &wrong, sizeof wrong, cudaMemcpyHostToDevice), cudaSuccess);  // D(0,0) is sampled
  EXPECT_FALSE(check_gemm(buf, 0, bound, s).ok());
}

// A launch that writes nothing must fail its check even when D still holds a correct result from
// an earlier launch (the ladder's re-check after timing followed cuBLASLt's writes to D(0)).
TEST(GemmCheck, ALaunchThatWritesNothingFailsAfterACorrectOne) {
  Stream s;
  const GemmShape shape{256, 256, 256, "t", true};
  const GemmBound& bound = precision_info(GemmPrecision::FP32).bound;
  GemmBuffers buf(kernels::ElemType::F32, kernels::ElemType::F32, shape, 1, s);
  const auto correct = [&] { kernels::ladder_gemm(1, buf.a(0), buf.b(0), buf.d(0), shape.m, shape.n, shape.k, s); };
  EXPECT_TRUE(launch_and_check(buf, 0, bound, correct, s).ok());
  EXPECT_FALSE(launch_and_check(buf, 0, bound, [] {}, s).ok());
}
