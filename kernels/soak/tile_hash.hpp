// The soak's bit-for-bit check of an output: a 64-bit hash per tile of a column-major matrix (a
// buffer is a matrix of one column), computed on the device after every operation and compared
// with the expected tile hashes; the tiles' hashes XOR-ed together are the output's hash.
//
// The hash of one element is mix64(position * kPositionMultiplier + bits): `bits` are the
// element's raw bits (2- or 4-byte elements, zero-extended), `position` its column-major index
// row + col * rows. For a fixed position the argument is a different 64-bit number for every
// value of `bits`, and mix64 (SplitMix64's finaliser) is a bijection, so an element that changes
// in any bit always changes its contribution; a tile's hash is the XOR of its elements'
// contributions, so one changed element always changes its tile's hash (no probability about
// it), and several changed elements cancel out with probability 2^-64. XOR does not depend on
// the order the threads combine in: the device's hash equals this host definition bit for bit,
// on every GPU. Shared by the kernel (tile_hash.cu) and the host reference
// (tile_hash_reference.hpp), so both compute one function.
#pragma once
#include <cstdint>

#include "common/host_device.hpp"
#include "common/random_values.hpp"

namespace triaudit {

constexpr std::uint64_t kPositionMultiplier = 0xD6E8FEB86659FD93ULL;  // odd: positions stay apart

TRIAUDIT_HD inline std::uint64_t element_hash(std::uint64_t position, std::uint32_t bits) {
  return mix64(position * kPositionMultiplier + bits);
}

// Where the tiles of an output lie: `rows` x `cols` elements, column-major with leading
// dimension `ld` (>= rows), tiles of tile_rows x tile_cols (the last row and column of tiles
// may be partial). Tile t is (t % tiles_m, t / tiles_m): tiles run down the columns, as the data.
struct HashLayout {
  std::uint64_t rows = 0, cols = 0, ld = 0;
  int elem_bytes = 4;  // 2 (BF16, FP16) or 4 (FP32, 32-bit words)
  std::uint32_t tile_rows = 128, tile_cols = 128;

  TRIAUDIT_HD std::uint64_t tiles_m() const { return (rows + tile_rows - 1) / tile_rows; }
  TRIAUDIT_HD std::uint64_t tiles_n() const { return (cols + tile_cols - 1) / tile_cols; }
  TRIAUDIT_HD std::uint64_t tiles() const { return tiles_m() * tiles_n(); }
  TRIAUDIT_HD std::uint64_t first_row(std::uint64_t tile) const { return (tile % tiles_m()) * tile_rows; }
  TRIAUDIT_HD std::uint64_t first_col(std::uint64_t tile) const { return (tile / tiles_m()) * tile_cols; }
  // The tile's height and width (smaller at the bottom and right edges).
  TRIAUDIT_HD std::uint64_t height(std::uint64_t tile) const {
    const std::uint64_t r = first_row(tile);
    return rows - r < tile_rows ? rows - r : tile_rows;
  }
  TRIAUDIT_HD std::uint64_t width(std::uint64_t tile) const {
    const std::uint64_t c = first_col(tile);
    return cols - c < tile_cols ? cols - c : tile_cols;
  }
};

// A matrix of `rows` x `cols` elements, tiles of 128 x 128.
inline HashLayout matrix_layout(std::uint64_t rows, std::uint64_t cols, int elem_bytes) {
  HashLayout l;
  l.rows = rows;
  l.cols = cols;
  l.ld = rows;
  l.elem_bytes = elem_bytes;
  return l;
}

// A buffer of `words` 32-bit words, tiles of 2^18 words (1 MiB).
inline HashLayout buffer_layout(std::uint64_t words) {
  HashLayout l;
  l.rows = words;
  l.cols = 1;
  l.ld = words;
  l.elem_bytes = 4;
  l.tile_rows = 1u << 18;
  l.tile_cols = 1;
  return l;
}

// The raw bits of element (row, col), zero-extended.
TRIAUDIT_HD inline std::uint32_t element_bits(const void* data, const HashLayout& l, std::uint64_t row,
                                              std::uint64_t col) {
  const std::uint64_t i = row + col * l.ld;
  if (l.elem_bytes == 2) return static_cast<const std::uint16_t*>(data)[i];
  return static_cast<const std::uint32_t*>(data)[i];
}

// What thread `thread` of `threads` hashes of tile `tile` (the kernel's loop, shared so the host
// can check that the threads together visit every element once: an element seen twice would
// cancel out of the XOR). Down each column, consecutive threads on consecutive rows.
TRIAUDIT_HD inline std::uint64_t tile_thread_hash(const void* data, const HashLayout& l, std::uint64_t tile,
                                                  unsigned thread, unsigned threads) {
  const std::uint64_t r0 = l.first_row(tile), c0 = l.first_col(tile);
  const auto height = static_cast<unsigned>(l.height(tile)), width = static_cast<unsigned>(l.width(tile));
  std::uint64_t h = 0;
  for (unsigned c = 0; c < width; ++c)
    for (unsigned r = thread; r < height; r += threads)
      h ^= element_hash((r0 + r) + (c0 + c) * l.rows, element_bits(data, l, r0 + r, c0 + c));
  return h;
}

}  // namespace triaudit
