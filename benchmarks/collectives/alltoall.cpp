// NCCL all-to-all, as nccl-tests' src/alltoall.cu measures it: every rank sends block j of its
// n x c elements (c = count / ranks in whole 16-byte units) to rank j and receives rank i's block
// for it at i x c. Out of place only: NCCL has no in-place all-to-all (nccl-tests reports no
// #wrong in place). NCCL runs it as point-to-point transfers, with no NCCL_ALGO choice: only
// NCCL's own way (algo:auto) is offered.
#include "collective.hpp"

#if TRIAUDIT_WITH_NCCL
#include "nccl_call.hpp"
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#pragma weak ncclAlltoAll  // present from NCCL 2.28; an older library at run time lacks it
#endif
#endif

namespace triaudit {
namespace {

// nccl-tests' AlltoAllGetCollByteCount.
BufferCounts counts(std::uint64_t count, int elem_bytes, int ranks) {
  const std::uint64_t c = nccl_tests_rank_chunk(count, elem_bytes, ranks);
  return {c * static_cast<std::uint64_t>(ranks), c * static_cast<std::uint64_t>(ranks), c, 0, 0};
}
// AlltoAllGetBw: algbw = c x n x size / time, busbw = algbw x (n-1)/n.
double algbw_bytes(std::uint64_t param, int elem_bytes, int ranks) {
  return static_cast<double>(param) * ranks * elem_bytes;
}
double bus_factor(int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; }

#if TRIAUDIT_WITH_NCCL
// As nccl-tests: ncclAlltoAll where the NCCL in use has it (2.28+), else the grouped sends and
// receives it stands for.
bool nccl_has_alltoall() {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  static const bool yes = [] {
    int version = 0;
    return ncclGetVersion(&version) == ncclSuccess && version >= NCCL_VERSION(2, 28, 0) && ncclAlltoAll != nullptr;
  }();
  return yes;
#else
  return false;
#endif
}

void enqueue(const NcclCallArgs& a) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  if (nccl_has_alltoall()) {
    TRIAUDIT_NCCL(ncclAlltoAll(a.send, a.recv, a.count, a.type, a.comm, a.stream));
    return;
  }
#endif
  const std::uint64_t block = a.count * static_cast<std::uint64_t>(a.elem_bytes);
  TRIAUDIT_NCCL(ncclGroupStart());
  for (int r = 0; r < a.ranks; ++r) {
    const std::uint64_t at = static_cast<std::uint64_t>(r) * block;
    TRIAUDIT_NCCL(ncclSend(static_cast<const char*>(a.send) + at, a.count, a.type, r, a.comm, a.stream));
    TRIAUDIT_NCCL(ncclRecv(static_cast<char*>(a.recv) + at, a.count, a.type, r, a.comm, a.stream));
  }
  TRIAUDIT_NCCL(ncclGroupEnd());
}
#endif

CollectiveSpec describe() {
  CollectiveSpec c;
  c.name = "alltoall";
  c.nccl_name = "AlltoAll";
  c.summary = "NCCL all-to-all: algbw and busbw as nccl-tests define them, every element checked";
  c.nccl_call = "ncclAlltoAll (NCCL 2.28+; grouped ncclSend/ncclRecv before)";
  c.output = {OutputSource::kBlockOwner, true};
  c.counts = counts;
  c.algbw_bytes = algbw_bytes;
  c.bus_factor = bus_factor;
  c.bus_factor_formula = "(n-1)/n";
  c.types = {"fp32", "bf16", "fp16"};  // a copy: the type changes only the element count
  c.default_types = {"fp32"};
  c.modes = c.default_modes = {"out_of_place", "graph"};
  c.algos = c.default_algos = {"auto"};
#if TRIAUDIT_WITH_NCCL
  c.enqueue = enqueue;
#endif
  return c;
}

const CollectiveSpec kAlltoAll = describe();
const CollectiveRegistration kRegistered(kAlltoAll);

}  // namespace
}  // namespace triaudit
