// NCCL allreduce (sum), as nccl-tests' src/all_reduce.cu measures it: every rank sends `count`
// elements and receives their sum over ranks. The harness (harness/) does the rest.
#include "collective.hpp"

#if TRIAUDIT_WITH_NCCL
#include "nccl_call.hpp"
#endif

namespace triaudit {
namespace {

// nccl-tests' AllReduceGetCollByteCount: send = recv = count, in place in one buffer.
BufferCounts counts(std::uint64_t count, int, int) { return {count, count, count, 0, 0}; }
// AllReduceGetBw: algbw = count x size / time, busbw = algbw x 2(n-1)/n.
double algbw_bytes(std::uint64_t param, int elem_bytes, int) { return static_cast<double>(param) * elem_bytes; }
double bus_factor(int n) { return n <= 0 ? 0.0 : 2.0 * (n - 1) / n; }

#if TRIAUDIT_WITH_NCCL
void enqueue(const NcclCallArgs& a) {
  TRIAUDIT_NCCL(ncclAllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream));
}
#endif

CollectiveSpec describe() {
  CollectiveSpec c;
  c.name = "allreduce";
  c.nccl_name = "AllReduce";
  c.summary = "NCCL allreduce (sum): algbw and busbw as nccl-tests define them, every element checked";
  c.nccl_call = "ncclAllReduce";
  c.output = {OutputSource::kSumOfRanks, false};
  c.counts = counts;
  c.algbw_bytes = algbw_bytes;
  c.bus_factor = bus_factor;
  c.bus_factor_formula = "2(n-1)/n";
  c.types = c.default_types = {"fp32", "bf16", "fp16"};
  c.modes = c.default_modes = {"out_of_place", "in_place", "graph"};
  c.algos = {"ring", "tree", "nvls", "collnet", "auto"};
  c.default_algos = {"ring", "auto"};
  c.has_nvls = true;
#if TRIAUDIT_WITH_NCCL
  c.enqueue = enqueue;
#endif
  return c;
}

const CollectiveSpec kAllReduce = describe();
const CollectiveRegistration kRegistered(kAllReduce);

}  // namespace
}  // namespace triaudit
