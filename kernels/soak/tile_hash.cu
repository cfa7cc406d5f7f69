#include "soak/tile_hash.cuh"

namespace triaudit::kernels {
namespace {

constexpr unsigned kThreads = kHashThreads;

__global__ void __launch_bounds__(kThreads)
    hash_tiles_kernel(const void* data, HashLayout l, const std::uint64_t* expected, std::uint64_t* tile_hashes,
                      HashVerdict* verdict, QuarantineView q, std::uint64_t item) {
  const std::uint64_t tile = blockIdx.x;
  // Consecutive threads on consecutive rows: the loads are coalesced.
  std::uint64_t h = tile_thread_hash(data, l, tile, threadIdx.x, kThreads);
  for (int off = 16; off > 0; off /= 2) h ^= __shfl_xor_sync(0xffffffffu, h, off);
  __shared__ std::uint64_t warp_hash[kThreads / 32];
  __shared__ int slot;  // the quarantine slot this tile's data goes to; -1: none
  if (threadIdx.x % 32 == 0) warp_hash[threadIdx.x / 32] = h;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint64_t t = 0;
    for (unsigned w = 0; w < kThreads / 32; ++w) t ^= warp_hash[w];
    if (tile_hashes != nullptr) tile_hashes[tile] = t;
    atomicXor(&verdict->combined, static_cast<unsigned long long>(t));
    slot = -1;
    if (expected != nullptr && t != expected[tile]) {
      const unsigned n = atomicAdd(&verdict->differing, 1u);
      if (n < kVerdictTiles) {
        verdict->tile[n] = tile;
        verdict->got[n] = t;
      }
      if (q.data != nullptr) {
        const unsigned s = atomicAdd(q.used, 1u);
        if (s < q.slots) {
          q.entries[s] = {item, tile};
          slot = static_cast<int>(s);
        }
      }
    }
  }
  __syncthreads();
  if (slot < 0) return;
  // The tile's elements, column by column, into its slot.
  const std::uint64_t r0 = l.first_row(tile), c0 = l.first_col(tile);
  const auto height = static_cast<unsigned>(l.height(tile)), width = static_cast<unsigned>(l.width(tile));
  unsigned char* out = static_cast<unsigned char*>(q.data) + static_cast<std::uint64_t>(slot) * q.slot_bytes;
  for (unsigned c = 0; c < width; ++c)
    for (unsigned r = threadIdx.x; r < height; r += kThreads) {
      const std::uint64_t at = static_cast<std::uint64_t>(c) * height + r;
      const std::uint32_t bits = element_bits(data, l, r0 + r, c0 + c);
      if (l.elem_bytes == 2)
        reinterpret_cast<std::uint16_t*>(out)[at] = static_cast<std::uint16_t>(bits);
      else
        reinterpret_cast<std::uint32_t*>(out)[at] = bits;
    }
}

}  // namespace

void hash_tiles(const void* data, const HashLayout& l, const std::uint64_t* expected, std::uint64_t* tile_hashes,
                HashVerdict* verdict, const QuarantineView& quarantine, std::uint64_t item, cudaStream_t stream) {
  const std::uint64_t tiles = l.tiles();
  if (tiles == 0) return;
  hash_tiles_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(data, l, expected, tile_hashes, verdict,
                                                                           quarantine, item);
}

}  // namespace triaudit::kernels
