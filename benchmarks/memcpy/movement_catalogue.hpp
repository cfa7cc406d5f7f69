// The catalogue of the movement corner, as plain data: which copies exist, how their bytes are
// counted, which are timed on the host, and the size sweep. Pure host code, unit-tested.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace triaudit {

struct CopyKind {
  std::string direction;  // h2d, d2h, bidir, d2d
  std::string memory;     // pageable, pinned, registered, write_combined, zero_copy, copy_engine, sm_kernel
};

// Every copy the suite measures, in catalogue order.
const std::vector<CopyKind>& copy_kinds();

// Pageable copies are staged through the driver synchronously: timed on the host around
// completed cudaMemcpy calls. Everything else: CUDA events with the stream held.
bool copy_is_host_timed(const CopyKind& k);

// Bytes credited to one operation: the size once per direction (bidir: twice the size, one
// copy each way). A device-to-device copy counts its bytes once (its DRAM traffic is read +
// write = twice that), as nvbandwidth and cudaMemcpy benchmarks do.
std::uint64_t copy_bytes_counted(const CopyKind& k, std::uint64_t size);

// Zero-copy reads cross the bus element by element: measured only up to this size.
constexpr std::uint64_t kZeroCopyMaxBytes = 64ULL << 20;

bool copy_applies_to_size(const CopyKind& k, std::uint64_t size);

// Sizes from `lo` to `hi` multiplying by `step` (2 or 4), all powers of two.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, unsigned step);

// Several copies per timed region for small sizes, one for large ones.
int copies_per_region(std::uint64_t size);

}  // namespace triaudit
