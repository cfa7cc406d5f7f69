// The soak's device check (kernels/soak/tile_hash.cu) against its host reference: the same tile
// hashes bit for bit, the differing tile named and its data kept when one bit of the output is
// flipped, nothing named when the output is what it must be.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/cuda_raii.hpp"
#include "soak/tile_hash.cuh"
#include "soak/tile_hash_reference.hpp"

using namespace triaudit;

namespace {

struct Checked {
  std::vector<std::uint64_t> tiles;
  kernels::HashVerdict verdict{};
  unsigned kept = 0;
  std::vector<kernels::QuarantineEntry> entries;
  std::vector<std::uint16_t> kept_data;
};

// Hashes `host` (16-bit elements laid out as `l`) on the device, against `expected` when given.
Checked check_on_device(const std::vector<std::uint16_t>& host, const HashLayout& l,
                        const std::vector<std::uint64_t>* expected) {
  Stream s;
  DeviceBuffer<std::uint16_t> data(host.size());
  DeviceBuffer<std::uint64_t> out(l.tiles()), want(l.tiles());
  DeviceBuffer<kernels::HashVerdict> verdict(1);
  DeviceBuffer<unsigned char> qdata(2 * 128 * 128 * 2);
  DeviceBuffer<kernels::QuarantineEntry> qentries(2);
  DeviceBuffer<unsigned> used(1);
  TRIAUDIT_CUDA(cudaMemcpy(data.data(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  if (expected) TRIAUDIT_CUDA(cudaMemcpy(want.data(), expected->data(), expected->size() * 8, cudaMemcpyHostToDevice));
  TRIAUDIT_CUDA(cudaMemset(verdict.data(), 0, sizeof(kernels::HashVerdict)));
  TRIAUDIT_CUDA(cudaMemset(used.data(), 0, sizeof(unsigned)));
  const kernels::QuarantineView q{qdata.data(), qentries.data(), used.data(), 2, 128 * 128 * 2};
  kernels::hash_tiles(data.data(), l, expected ? want.data() : nullptr, out.data(), verdict.data(), q, 42, s);
  TRIAUDIT_CUDA(cudaGetLastError());
  s.synchronize();
  Checked c;
  c.tiles.resize(l.tiles());
  TRIAUDIT_CUDA(cudaMemcpy(c.tiles.data(), out.data(), c.tiles.size() * 8, cudaMemcpyDeviceToHost));
  TRIAUDIT_CUDA(cudaMemcpy(&c.verdict, verdict.data(), sizeof c.verdict, cudaMemcpyDeviceToHost));
  TRIAUDIT_CUDA(cudaMemcpy(&c.kept, used.data(), sizeof c.kept, cudaMemcpyDeviceToHost));
  c.entries.resize(2);
  TRIAUDIT_CUDA(
      cudaMemcpy(c.entries.data(), qentries.data(), 2 * sizeof(kernels::QuarantineEntry), cudaMemcpyDeviceToHost));
  c.kept_data.resize(128 * 128);
  TRIAUDIT_CUDA(cudaMemcpy(c.kept_data.data(), qdata.data(), 128 * 128 * 2, cudaMemcpyDeviceToHost));
  return c;
}

std::vector<std::uint16_t> random_bf16(std::size_t n) {
  std::mt19937 gen(5);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = static_cast<std::uint16_t>(gen());
  return v;
}

}  // namespace

TEST(TileHashDevice, EqualsTheHostReferenceWithPartialTiles) {
  const HashLayout l = matrix_layout(1000, 777, 2);  // partial tiles at the bottom and the right
  const auto v = random_bf16(1000 * 777);
  const Checked c = check_on_device(v, l, nullptr);
  const auto host = tile_hashes_host(v.data(), l);
  EXPECT_EQ(c.tiles, host);
  EXPECT_EQ(c.verdict.combined, combine_tile_hashes(host));
  EXPECT_EQ(c.verdict.differing, 0u);
}

TEST(TileHashDevice, AFlippedBitIsNamedAndKept) {
  const HashLayout l = matrix_layout(512, 512, 2);
  auto v = random_bf16(512 * 512);
  const auto expected = tile_hashes_host(v.data(), l);
  EXPECT_EQ(check_on_device(v, l, &expected).verdict.differing, 0u);
  const std::uint64_t row = 300, col = 140;  // tile (2, 1) = 2 + 1 * 4 = 6
  v[row + col * 512] ^= 0x0001;              // the lowest mantissa bit
  const Checked c = check_on_device(v, l, &expected);
  ASSERT_EQ(c.verdict.differing, 1u);
  EXPECT_EQ(c.verdict.tile[0], 6u);
  EXPECT_EQ(c.verdict.got[0], tile_hash_host(v.data(), l, 6));
  ASSERT_EQ(c.kept, 1u);
  EXPECT_EQ(c.entries[0].item, 42u);
  EXPECT_EQ(c.entries[0].tile, 6u);
  // The kept tile holds the changed data, column by column.
  EXPECT_EQ(c.kept_data[(row - 256) + (col - 128) * 128], v[row + col * 512]);
}
