// The soak's tile hash on the host (kernels/soak/tile_hash.hpp, tile_hash_reference.hpp): the
// known vectors (SplitMix64's published first output, and values an independent Python
// implementation gives: scripts/tests/soak_hash_reference.py holds the same numbers), the kernel's
// per-thread loop as a host function, and the properties the soak's verdicts rest on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "soak/tile_hash.hpp"
#include "soak/tile_hash_reference.hpp"

using namespace triaudit;

namespace {

// 16-bit values of a small column-major matrix, as the Python test builds them.
std::vector<std::uint16_t> sample_values(std::uint64_t n) {
  std::vector<std::uint16_t> v(n);
  for (std::uint64_t p = 0; p < n; ++p) v[p] = static_cast<std::uint16_t>((p * 2654435761ULL >> 7) & 0xffff);
  return v;
}

HashLayout layout(std::uint64_t rows, std::uint64_t cols, int elem_bytes, std::uint32_t tr, std::uint32_t tc) {
  HashLayout l = matrix_layout(rows, cols, elem_bytes);
  l.tile_rows = tr;
  l.tile_cols = tc;
  return l;
}

// Random BF16-like bits of a rows x cols matrix.
std::vector<std::uint16_t> random_matrix(std::uint64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = static_cast<std::uint16_t>(gen());
  return v;
}

}  // namespace

TEST(TileHash, KnownVectors) {
  // mix64(0) is SplitMix64's first output from state 0 (Vigna's splitmix64.c).
  EXPECT_EQ(element_hash(0, 0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(element_hash(1, 0), 0xa7b77319d39f7883ULL);
  EXPECT_EQ(element_hash(0, 1), 0x910a2dec89025cc1ULL);
  EXPECT_EQ(element_hash(12345, 0x3f80), 0xa1e8c64ee62a7eebULL);
}

TEST(TileHash, KnownTilesOfASmallMatrix) {
  // 3 x 5, tiles of 2 x 2: a partial last row and column of tiles; values as the Python test's.
  const auto v = sample_values(15);
  ASSERT_EQ(v[1], 28403);
  ASSERT_EQ(v[14], 4431);
  const HashLayout l = layout(3, 5, 2, 2, 2);
  ASSERT_EQ(l.tiles(), 6u);
  const std::vector<std::uint64_t> want = {0x0bb7ce4d8bf3a45cULL, 0x058590d783b07a3dULL, 0xeb3668e20f422af4ULL,
                                           0xc001efe0437cc887ULL, 0xc4e0a4537fddd8caULL, 0x899c8bc7c70fafb0ULL};
  EXPECT_EQ(tile_hashes_host(v.data(), l), want);
  EXPECT_EQ(combine_tile_hashes(want), 0x6879f60cfcaf4b68ULL);
  // One 128 x 128 tile holding all of it: the same combined hash (XOR does not see the tiling).
  EXPECT_EQ(tile_hashes_host(v.data(), matrix_layout(3, 5, 2)), std::vector<std::uint64_t>{0x6879f60cfcaf4b68ULL});
}

TEST(TileHash, TheKernelsThreadsTogetherVisitEveryElementOnce) {
  // Tiles of 128 x 128 on a 300 x 260 matrix (partial tiles at both edges), and 1 MiB tiles of a
  // buffer whose length is not a whole number of them: the kernel's 256 threads, as it runs them.
  const auto m = random_matrix(300 * 260, 1);
  const HashLayout lm = matrix_layout(300, 260, 2);
  std::vector<std::uint32_t> words(3 * (1u << 18) + 1000);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2246822519u);
  const HashLayout lb = buffer_layout(words.size());
  for (const auto& [data, l] : {std::pair<const void*, HashLayout>{m.data(), lm}, {words.data(), lb}})
    for (std::uint64_t t = 0; t < l.tiles(); ++t) {
      std::uint64_t h = 0;
      for (unsigned thread = 0; thread < 256; ++thread) h ^= tile_thread_hash(data, l, t, thread, 256);
      ASSERT_EQ(h, tile_hash_host(data, l, t)) << "tile " << t;
    }
}

TEST(TileHash, EverySingleBitFlipChangesItsTileAndOnlyItsTile) {
  const std::uint64_t rows = 256, cols = 384;  // 2 x 3 tiles of 128 x 128
  auto m = random_matrix(rows * cols, 7);
  const HashLayout l = matrix_layout(rows, cols, 2);
  const auto before = tile_hashes_host(m.data(), l);
  std::mt19937 gen(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint64_t p = gen() % (rows * cols);
    const int bit = trial % 16;  // every bit position, the sign and exponent included
    m[p] = static_cast<std::uint16_t>(m[p] ^ (1u << bit));
    const auto after = tile_hashes_host(m.data(), l);
    const std::uint64_t tile = (p % rows) / 128 + (p / rows) / 128 * l.tiles_m();
    for (std::uint64_t t = 0; t < l.tiles(); ++t)
      if (t == tile)
        EXPECT_NE(after[t], before[t]) << "element " << p << " bit " << bit;
      else
        EXPECT_EQ(after[t], before[t]) << "tile " << t << " changed by element " << p;
    m[p] = static_cast<std::uint16_t>(m[p] ^ (1u << bit));
  }
  EXPECT_EQ(tile_hashes_host(m.data(), l), before);  // every flip undone: the same hashes again
}

TEST(TileHash, SwappedElementsAndZeroedTilesAreSeen) {
  const std::uint64_t rows = 128, cols = 128;
  auto m = random_matrix(rows * cols, 3);
  const HashLayout l = matrix_layout(rows, cols, 2);
  const std::uint64_t h = tile_hash_host(m.data(), l, 0);
  std::swap(m[5], m[6]);  // the same values elsewhere: positions are in the hash
  EXPECT_NE(tile_hash_host(m.data(), l, 0), h);
  std::swap(m[5], m[6]);
  std::vector<std::uint16_t> zero(m.size(), 0), nan(m.size(), 0xffff);
  EXPECT_NE(tile_hash_host(zero.data(), l, 0), h);
  EXPECT_NE(tile_hash_host(nan.data(), l, 0), h);  // the poison left by a GEMM that wrote nothing
}

TEST(TileHash, FourByteElementsUseAllTheirBits) {
  std::vector<std::uint32_t> w(1000, 0x12345678u);
  const HashLayout l = buffer_layout(w.size());
  const std::uint64_t h = tile_hash_host(w.data(), l, 0);
  w[999] ^= 0x80000000u;  // the top bit of the last word
  EXPECT_NE(tile_hash_host(w.data(), l, 0), h);
}

TEST(TileHash, GeneratedBuffersHashLikeTheirMaterialisedCopy) {
  std::vector<std::uint32_t> w(5 * (1u << 18) + 17);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = pattern_word(0x50a4, i);
  const HashLayout l = buffer_layout(w.size());
  EXPECT_EQ(generated_tile_hashes(l, [](std::uint64_t i) { return pattern_word(0x50a4, i); }),
            tile_hashes_host(w.data(), l));
}
