// The soak's device check: every tile of an output hashed (tile_hash.hpp), each hash compared
// with the expected one, the tiles that differ recorded, and the data of the first few kept
// aside, so the host can say which elements changed and judge them against the FP64 reference.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "soak/tile_hash.hpp"

namespace triaudit::kernels {

constexpr int kVerdictTiles = 8;        // differing tiles named per checked operation
constexpr unsigned kHashThreads = 256;  // threads per tile (tile_thread_hash's `threads`)

// What one checked operation came to. Device memory, zeroed before the check.
struct HashVerdict {
  unsigned long long combined;  // XOR of every tile's hash: the output's hash
  unsigned int differing;       // tiles whose hash is not the expected one
  unsigned int pad;
  unsigned long long tile[kVerdictTiles];  // the first differing tiles (as the blocks met them)
  unsigned long long got[kVerdictTiles];   // and their hashes
};

// One kept tile: which operation and tile, then its elements column by column.
struct QuarantineEntry {
  unsigned long long item, tile;
};
// Slots for the data of differing tiles (device memory). `used` counts the slots taken (it may
// pass `slots`: the later tiles are named in the verdict, not kept).
struct QuarantineView {
  void* data = nullptr;  // slots x slot_bytes
  QuarantineEntry* entries = nullptr;
  unsigned int* used = nullptr;
  unsigned int slots = 0;
  std::uint64_t slot_bytes = 0;
};

// Hashes every tile of `data` (device memory, laid out as `l`): the hashes into `tile_hashes`
// when not null; against `expected` when not null (differing tiles into `verdict`, their data
// into `quarantine` when it has slots); the combined hash into verdict->combined. `item`: the
// operation's sequence number, kept with a quarantined tile. One block per tile.
void hash_tiles(const void* data, const HashLayout& l, const std::uint64_t* expected, std::uint64_t* tile_hashes,
                HashVerdict* verdict, const QuarantineView& quarantine, std::uint64_t item, cudaStream_t stream);

}  // namespace triaudit::kernels
