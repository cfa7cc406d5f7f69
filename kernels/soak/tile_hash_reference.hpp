// The host reference of the soak's tile hash (tile_hash.hpp): the same definition, element by
// element in plain loops. The unit tests check it against known vectors and against the
// properties the soak relies on; the device tests check the kernel against it.
#pragma once
#include <cstdint>
#include <vector>

#include "soak/tile_hash.hpp"

namespace triaudit {

// The hash of tile `tile` of `data` (host memory laid out as `l` says).
inline std::uint64_t tile_hash_host(const void* data, const HashLayout& l, std::uint64_t tile) {
  std::uint64_t h = 0;
  const std::uint64_t r0 = l.first_row(tile), c0 = l.first_col(tile);
  for (std::uint64_t c = c0; c < c0 + l.width(tile); ++c)
    for (std::uint64_t r = r0; r < r0 + l.height(tile); ++r)
      h ^= element_hash(r + c * l.rows, element_bits(data, l, r, c));
  return h;
}

// Every tile's hash, in tile order.
inline std::vector<std::uint64_t> tile_hashes_host(const void* data, const HashLayout& l) {
  std::vector<std::uint64_t> out(l.tiles());
  for (std::uint64_t t = 0; t < out.size(); ++t) out[t] = tile_hash_host(data, l, t);
  return out;
}

// The output's hash: its tiles' hashes XOR-ed (the same for any tiling of the same data).
inline std::uint64_t combine_tile_hashes(const std::vector<std::uint64_t>& tiles) {
  std::uint64_t h = 0;
  for (const std::uint64_t t : tiles) h ^= t;
  return h;
}

}  // namespace triaudit

#include <algorithm>
#include <thread>

namespace triaudit {

// Every tile's hash of a buffer whose word i is bits_of(i) (a generated input or the expected
// output of an exact operation), without materialising it; tiles spread over the host's cores.
template <typename BitsOf>
std::vector<std::uint64_t> generated_tile_hashes(const HashLayout& l, BitsOf bits_of) {
  std::vector<std::uint64_t> out(l.tiles());
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (std::uint64_t t = w; t < out.size(); t += threads) {
        std::uint64_t h = 0;
        const std::uint64_t r0 = l.first_row(t), c0 = l.first_col(t);
        for (std::uint64_t c = c0; c < c0 + l.width(t); ++c)
          for (std::uint64_t r = r0; r < r0 + l.height(t); ++r) {
            const std::uint64_t position = r + c * l.rows;
            h ^= element_hash(position, bits_of(position));
          }
        out[t] = h;
      }
    });
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace triaudit
