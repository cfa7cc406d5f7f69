// NCCL reduce-scatter (sum), as nccl-tests' src/reduce_scatter.cu measures it: every rank sends
// n x c elements (c = count / ranks in whole 16-byte units) and receives the sum over ranks of
// its own block, rank r's the c elements from r x c.
#include "collective.hpp"

#if TRIAUDIT_WITH_NCCL
#include "nccl_call.hpp"
#endif

namespace triaudit {
namespace {

// nccl-tests' ReduceScatterGetCollByteCount; in place, a rank receives into its own block.
BufferCounts counts(std::uint64_t count, int elem_bytes, int ranks) {
  const std::uint64_t c = nccl_tests_rank_chunk(count, elem_bytes, ranks);
  return {c * static_cast<std::uint64_t>(ranks), c, c, 0, c};
}
// ReduceScatterGetBw: algbw = c x size x n / time (the bytes each rank sends), busbw = algbw x (n-1)/n.
double algbw_bytes(std::uint64_t param, int elem_bytes, int ranks) {
  return static_cast<double>(param) * elem_bytes * ranks;
}
double bus_factor(int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; }

#if TRIAUDIT_WITH_NCCL
void enqueue(const NcclCallArgs& a) {
  TRIAUDIT_NCCL(ncclReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream));
}
#endif

CollectiveSpec describe() {
  CollectiveSpec c;
  c.name = "reduce_scatter";
  c.nccl_name = "ReduceScatter";
  c.summary = "NCCL reduce-scatter (sum): algbw and busbw as nccl-tests define them, every element checked";
  c.nccl_call = "ncclReduceScatter";
  c.output = {OutputSource::kSumOfRanks, true};
  c.counts = counts;
  c.algbw_bytes = algbw_bytes;
  c.bus_factor = bus_factor;
  c.bus_factor_formula = "(n-1)/n";
  c.types = c.default_types = {"fp32", "bf16", "fp16"};  // a reduction: the arithmetic differs by type
  c.modes = c.default_modes = {"out_of_place", "in_place", "graph"};
  c.algos = c.default_algos = {"ring", "nvls", "auto"};
  c.has_nvls = true;
#if TRIAUDIT_WITH_NCCL
  c.enqueue = enqueue;
#endif
  return c;
}

const CollectiveSpec kReduceScatter = describe();
const CollectiveRegistration kRegistered(kReduceScatter);

}  // namespace
}  // namespace triaudit
