// NCCL broadcast, as nccl-tests' src/broadcast.cu measures it: the root's `count` elements reach
// every rank. The root is --root (0 by default), part of every case's name.
#include "collective.hpp"

#if TRIAUDIT_WITH_NCCL
#include "nccl_call.hpp"
#endif

namespace triaudit {
namespace {

// nccl-tests' BroadcastGetCollByteCount: send = recv = count, in place in one buffer.
BufferCounts counts(std::uint64_t count, int, int) { return {count, count, count, 0, 0}; }
// BroadcastGetBw: algbw = count x size / time, busbw = algbw (factor 1).
double algbw_bytes(std::uint64_t param, int elem_bytes, int) { return static_cast<double>(param) * elem_bytes; }
double bus_factor(int) { return 1.0; }

#if TRIAUDIT_WITH_NCCL
void enqueue(const NcclCallArgs& a) {
  TRIAUDIT_NCCL(ncclBroadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream));
}
#endif

CollectiveSpec describe() {
  CollectiveSpec c;
  c.name = "broadcast";
  c.nccl_name = "Broadcast";
  c.summary = "NCCL broadcast: algbw and busbw as nccl-tests define them, every element checked";
  c.nccl_call = "ncclBroadcast";
  c.output = {OutputSource::kRoot, false};
  c.counts = counts;
  c.algbw_bytes = algbw_bytes;
  c.bus_factor = bus_factor;
  c.bus_factor_formula = "1";
  c.types = {"fp32", "bf16", "fp16"};  // a copy: the type changes only the element count
  c.default_types = {"fp32"};
  c.modes = c.default_modes = {"out_of_place", "in_place", "graph"};
  c.algos = c.default_algos = {"ring", "auto"};  // NCCL's broadcast has Ring only
  c.has_root = true;
#if TRIAUDIT_WITH_NCCL
  c.enqueue = enqueue;
#endif
  return c;
}

const CollectiveSpec kBroadcast = describe();
const CollectiveRegistration kRegistered(kBroadcast);

}  // namespace
}  // namespace triaudit
