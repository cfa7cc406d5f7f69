#include "movement_catalogue.hpp"

#include <algorithm>
#include <stdexcept>

#include "sizes.hpp"

namespace triaudit {

const std::vector<CopyKind>& copy_kinds() {
  static const std::vector<CopyKind> kinds = {
      {"h2d", "pageable"},  {"h2d", "pinned"},    {"h2d", "registered"},  {"h2d", "write_combined"},
      {"h2d", "zero_copy"}, {"d2h", "pageable"},  {"d2h", "pinned"},      {"d2h", "registered"},
      {"bidir", "pinned"},  {"d2d", "copy_engine"}, {"d2d", "sm_kernel"},
  };
  return kinds;
}

bool copy_is_host_timed(const CopyKind& k) { return k.memory == "pageable"; }

std::uint64_t copy_bytes_counted(const CopyKind& k, std::uint64_t size) {
  return k.direction == "bidir" ? 2 * size : size;
}

bool copy_applies_to_size(const CopyKind& k, std::uint64_t size) {
  return k.memory != "zero_copy" || size <= kZeroCopyMaxBytes;
}

std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, unsigned step) {
  if (step != 2 && step != 4) throw std::invalid_argument("size step must be 2 or 4");
  std::vector<std::uint64_t> out;
  const auto all = power_of_two_sweep(lo, hi);
  for (std::size_t i = 0; i < all.size(); i += (step == 4 ? 2 : 1)) out.push_back(all[i]);
  return out;
}

int copies_per_region(std::uint64_t size) {
  // At most 32: the copies are queued behind a held stream, and a bidirectional copy is six
  // queue entries (two copies, two event records, two waits); 32 x 6 stays far inside the
  // device's launch queue, so enqueueing never blocks on a stream that cannot move yet.
  return static_cast<int>(std::clamp<std::uint64_t>((64ULL << 20) / std::max<std::uint64_t>(size, 1), 1, 32));
}

}  // namespace triaudit
