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

// Bytes credited to one operation: the size of the measured copy. A device-to-device copy
// counts its bytes once (its DRAM traffic is read + write = twice that), as nvbandwidth and
// cudaMemcpy benchmarks do. A bidirectional copy reports the measured direction while the other
// direction runs (nvbandwidth's per-direction figure); both together are a separate counter.
std::uint64_t copy_bytes_counted(const CopyKind& k, std::uint64_t size);
// The opposite-direction copy of a bidirectional case: twice as large, so it is still running
// when the measured copy ends (nvbandwidth's interfering copy).
inline std::uint64_t bidir_interfering_bytes(std::uint64_t size) { return 2 * size; }

// Queue entries one copy adds behind the stream hold (a bidirectional copy: fork record, wait,
// two copies, done record).
int copy_queue_entries(const CopyKind& k);

// Pageable copies: the host caches are flushed before each copy by writing this many bytes
// (bandwidthTest's FLUSH_SIZE), outside the timed region.
constexpr std::uint64_t kHostFlushBytes = 256ULL << 20;

// Device-to-device copies flush the L2 before every copy: up to about half the L2 they would
// otherwise run from it.
bool copy_flushes_l2(const CopyKind& k);

// Zero-copy reads cross the bus element by element: measured only up to this size.
constexpr std::uint64_t kZeroCopyMaxBytes = 64ULL << 20;

bool copy_applies_to_size(const CopyKind& k, std::uint64_t size);

// Sizes from `lo` to `hi` multiplying by `step` (2 or 4), all powers of two.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, unsigned step);

// Several copies per timed region for small sizes, one for large ones; one for pageable copies
// (each after a host-cache flush) and device copies (each after an L2 flush). A region and its
// warm-up copies fit behind one hold (StreamLatch::kMaxQueuedEntries = 128 entries).
int copies_per_region(const CopyKind& k, std::uint64_t size);
// How a copy case's regions are laid out: the (source, destination) sets its copies rotate through
// and the fewest copies per region (the harness then sizes regions to >= 0.5 ms of device time,
// region_plan.hpp). Device copies: the L2 flushed before each region, then copies back to back over
// rotating sets, each finding its source out of the L2, enough of them that the write-back left in
// the L2 at the region's end (half the L2: a copy's traffic is half writes) is at most 0.5 % of the
// region wherever the copy's traffic (read + write) exceeds the L2; one copy per region missed ~5 %
// at 256 MiB. Other kinds: one set, copies_per_region.
struct CopyRegionPlan {
  int sets = 1;
  int min_ops = 1;
};
CopyRegionPlan copy_region_plan(const CopyKind& k, std::uint64_t size, std::uint64_t l2_bytes);

// Copies queued behind the hold before the start event, so the copy engine is running when the
// timed copies begin (nvbandwidth queues warm-up copies the same way): 4 up to 16 MiB, 1 above;
// none for host-timed copies.
int untimed_copies_in_region(const CopyKind& k, std::uint64_t size);

}  // namespace triaudit
