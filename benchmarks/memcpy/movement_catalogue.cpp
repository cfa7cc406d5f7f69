#include "movement_catalogue.hpp"

#include <algorithm>
#include <stdexcept>

#include "latch_budget.hpp"
#include "region_plan.hpp"
#include "sizes.hpp"

namespace triaudit {

const std::vector<CopyKind>& copy_kinds() {
  static const std::vector<CopyKind> kinds = {
      {"h2d", "pageable"},  {"h2d", "pinned"},      {"h2d", "registered"}, {"h2d", "write_combined"},
      {"h2d", "zero_copy"}, {"d2h", "pageable"},    {"d2h", "pinned"},     {"d2h", "registered"},
      {"bidir", "pinned"},  {"d2d", "copy_engine"}, {"d2d", "sm_kernel"},
  };
  return kinds;
}

bool copy_is_host_timed(const CopyKind& k) { return k.memory == "pageable"; }

std::uint64_t copy_bytes_counted(const CopyKind&, std::uint64_t size) { return size; }

int copy_queue_entries(const CopyKind& k) { return k.direction == "bidir" ? 5 : 1; }

bool copy_flushes_l2(const CopyKind& k) { return k.direction == "d2d"; }

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

int untimed_copies_in_region(const CopyKind& k, std::uint64_t size) {
  // Host-timed copies have no hold; a copy after an L2 flush must be the first thing after it
  // (a warm-up copy would fill the L2 again, or leave dirty lines for the timed one to write back).
  if (copy_is_host_timed(k) || copy_flushes_l2(k)) return 0;
  return size <= (16ULL << 20) ? 4 : 1;
}

int copies_per_region(const CopyKind& k, std::uint64_t size) {
  if (copy_is_host_timed(k) || copy_flushes_l2(k)) return 1;
  constexpr int kQueue = kLatchEntriesForOps;
  const int fit = kQueue / copy_queue_entries(k) - untimed_copies_in_region(k, size);
  const std::uint64_t by_size = (64ULL << 20) / std::max<std::uint64_t>(size, 1);
  return static_cast<int>(
      std::clamp<std::uint64_t>(by_size, 1, static_cast<std::uint64_t>(std::max(1, std::min(32, fit)))));
}

}  // namespace triaudit

namespace triaudit {

CopyRegionPlan copy_region_plan(const CopyKind& k, std::uint64_t size, std::uint64_t l2_bytes) {
  CopyRegionPlan p;
  p.min_ops = copies_per_region(k, size);
  if (!copy_flushes_l2(k)) return p;
  const int most = kLatchEntriesForOps / copy_queue_entries(k) - untimed_copies_in_region(k, size);
  p.sets = cold_rotation_sets(2 * size, l2_bytes);
  p.min_ops = std::clamp(ops_for_writeback_residual(l2_bytes, size, 2 * size), 1, std::max(1, most));
  return p;
}

}  // namespace triaudit
