// NCCL allgather, as nccl-tests' src/all_gather.cu measures it: every rank sends c elements
// (count / ranks in whole 16-byte units) and receives every rank's, rank i's at i x c.
#include "collective.hpp"

#if TRIAUDIT_WITH_NCCL
#include "nccl_call.hpp"
#endif

namespace triaudit {
namespace {

// nccl-tests' AllGatherGetCollByteCount; in place, a rank sends from its own block.
BufferCounts counts(std::uint64_t count, int elem_bytes, int ranks) {
  const std::uint64_t c = nccl_tests_rank_chunk(count, elem_bytes, ranks);
  return {c, c * static_cast<std::uint64_t>(ranks), c, c, 0};
}
// AllGatherGetBw: algbw = c x size x n / time (the bytes each rank receives), busbw = algbw x (n-1)/n.
double algbw_bytes(std::uint64_t param, int elem_bytes, int ranks) {
  return static_cast<double>(param) * elem_bytes * ranks;
}
double bus_factor(int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; }

#if TRIAUDIT_WITH_NCCL
void enqueue(const NcclCallArgs& a) { TRIAUDIT_NCCL(ncclAllGather(a.send, a.recv, a.count, a.type, a.comm, a.stream)); }
#endif

CollectiveSpec describe() {
  CollectiveSpec c;
  c.name = "allgather";
  c.nccl_name = "AllGather";
  c.summary = "NCCL allgather: algbw and busbw as nccl-tests define them, every element checked";
  c.nccl_call = "ncclAllGather";
  c.output = {OutputSource::kBlockOwner, false};
  c.counts = counts;
  c.algbw_bytes = algbw_bytes;
  c.bus_factor = bus_factor;
  c.bus_factor_formula = "(n-1)/n";
  // A copy: the type changes only the element count (nccl-tests' 16-byte rounding).
  c.types = {"fp32", "bf16", "fp16"};
  c.default_types = {"fp32"};
  c.modes = c.default_modes = {"out_of_place", "in_place", "graph"};
  c.algos = c.default_algos = {"ring", "nvls", "auto"};
  c.has_nvls = true;
#if TRIAUDIT_WITH_NCCL
  c.enqueue = enqueue;
#endif
  return c;
}

const CollectiveSpec kAllGather = describe();
const CollectiveRegistration kRegistered(kAllGather);

}  // namespace
}  // namespace triaudit
