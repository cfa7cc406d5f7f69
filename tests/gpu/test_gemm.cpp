// Every cuBLASLt precision and every ladder level, verified on small and odd shapes against the
// FP64 reference; the check itself must catch a wrong result.
#include <gtest/gtest.h>

#include "common/cuda_raii.hpp"
#include "gemm/cublaslt_gemm.hpp"
#include "gemm/gemm_check.hpp"
#include "gemm/ladder/ladder.cuh"

using namespace triaudit;

namespace {
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
        g.autotune(buf.a(0), buf.b(0), buf.d(0), ws.data(), s);
      } catch (const SkipCase& e) {
        continue;  // e.g. FP8 alignment rules for this shape: reported as a skip by the benchmark
      }
      g.run(buf.a(0), buf.b(0), buf.d(0), ws.data(), s);
      const GemmCheck c = check_gemm(buf, 0, p.tolerance, s);
      EXPECT_TRUE(c.ok()) << p.name << " " << shape.m << "x" << shape.n << "x" << shape.k << ": " << c.describe();
    }
  }
}

TEST(Ladder, EveryLevelMatchesTheReference) {
  Stream s;
  int count = 0;
  const kernels::LadderLevel* levels = kernels::ladder_levels(&count);
  for (int l = 0; l < count; ++l)
    for (GemmShape shape : {GemmShape{256, 256, 256, "t", true}, GemmShape{512, 384, 640, "t", true},
                            GemmShape{200, 136, 72, "t", true}, GemmShape{1000, 1000, 1000, "t", true},
                            GemmShape{1024, 2048, 4096, "t", true},
                            // 18 M-tiles of 128: level 5's grouped order has a full group of 16 and a rest of 2.
                            GemmShape{2304, 520, 256, "t", true}}) {
      if (!kernels::ladder_unsupported(l, shape.m, shape.n, shape.k, cc()).empty()) continue;
      const GemmPrecision p = levels[l].bf16 ? GemmPrecision::BF16 : GemmPrecision::FP32;
      const LtTypes t = lt_types(p);
      GemmBuffers buf(t.ab_elem, t.cd_elem, shape, 1, s);
      kernels::ladder_gemm(l, buf.a(0), buf.b(0), buf.d(0), shape.m, shape.n, shape.k, s);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess) << levels[l].name;
      const GemmCheck c = check_gemm(buf, 0, precision_info(p).tolerance, s);
      EXPECT_TRUE(c.ok()) << levels[l].name << " " << shape.m << "x" << shape.n << "x" << shape.k << ": " << c.describe();
    }
}

TEST(GemmCheck, CatchesAWrongResult) {
  Stream s;
  const GemmShape shape{256, 256, 256, "t", true};
  GemmBuffers buf(kernels::ElemType::F32, kernels::ElemType::F32, shape, 1, s);
  EXPECT_FALSE(check_gemm(buf, 0, 1e-5, s).ok());  // D still holds the NaN poison
  kernels::ladder_gemm(1, buf.a(0), buf.b(0), buf.d(0), shape.m, shape.n, shape.k, s);
  EXPECT_TRUE(check_gemm(buf, 0, 1e-5, s).ok());
  const float wrong = 1e3f;
  ASSERT_EQ(cudaMemcpy(buf.d(0), &wrong, sizeof wrong, cudaMemcpyHostToDevice), cudaSuccess);  // D(0,0) is sampled
  EXPECT_FALSE(check_gemm(buf, 0, 1e-5, s).ok());
}
