// One NCCL collective, described the way nccl-tests describes it in its `testColl` table
// (src/common.h; one file per collective, e.g. src/all_gather.cu): its name, the element counts
// of the send and receive buffers for a message size (getCollByteCount), its bandwidth accounting
// (getBw), where each output element's value comes from, and the NCCL call. Every executable of
// the harness measures one of these; benchmarks/collectives/<name>.cpp holds each, and registers
// it (register below). Plain host code: the CPU tests check every registered collective against
// nccl-tests' formulas; the NCCL call is only compiled into the executables (nccl_call.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/pattern.hpp"

namespace triaudit {

// nccl-tests' getCollByteCount, in elements per rank.
struct BufferCounts {
  std::uint64_t send = 0, recv = 0;  // each rank's send and receive buffer
  std::uint64_t param = 0;           // the count NCCL is called with (nccl-tests' "count" column)
  // In place: the send and receive data start at these offsets (x rank, elements) of one buffer
  // of `recv` elements (allgather sends from its own block, reduce_scatter receives into its own).
  std::uint64_t send_in_place_offset = 0, recv_in_place_offset = 0;
};

// nccl-tests' per-rank chunk of the collectives that split a message over ranks (allgather,
// reduce_scatter, alltoall): count / ranks rounded down to whole 16-byte units,
// `(count/nranks) & -(16/eltSize)`.
std::uint64_t nccl_tests_rank_chunk(std::uint64_t count, int elem_bytes, int ranks);

struct NcclCallArgs;                                // nccl_call.hpp (NCCL builds only)
using NcclEnqueue = void (*)(const NcclCallArgs&);  // queues one collective; throws Error

struct CollectiveSpec {
  std::string name;       // "allgather": triaudit_allgather, the first part of every case name
  std::string nccl_name;  // "AllGather": NCCL's and nccl-tests' name for it
  std::string summary;    // the executable's --help line
  std::string nccl_call;  // "ncclAllGather": what a case queues (docs, context)
  OutputRule output;      // where each output element's value comes from (pattern.hpp)
  // getCollByteCount: the buffers for a message of `count` elements (bytes / element size).
  BufferCounts (*counts)(std::uint64_t count, int elem_bytes, int ranks) = nullptr;
  // getBw: algbw = algbw_bytes / seconds, busbw = algbw x bus_factor.
  double (*algbw_bytes)(std::uint64_t param, int elem_bytes, int ranks) = nullptr;
  double (*bus_factor)(int ranks) = nullptr;
  std::string bus_factor_formula;  // "2(n-1)/n": labels and docs
  // Element types, operation modes and NCCL algorithm variants the executable offers, and the
  // ones it measures unless told (--types, --modes, --algos).
  std::vector<std::string> types, default_types, modes, default_modes, algos, default_algos;
  bool has_root = false;          // broadcast: --root, and root:<r> in the names
  bool has_nvls = false;          // NCCL has an NVLS (NVLink SHARP) algorithm for it
  NcclEnqueue enqueue = nullptr;  // null in builds without NCCL
};

// The layout of one case: the rule, the count NCCL is given, the communicator size and root.
inline OutputLayout output_layout(const CollectiveSpec& c, const BufferCounts& n, int ranks, int root) {
  return {c.output, n.param, ranks, root};
}

// Every collective linked into this program, in registration order, and one by name (null if none).
const std::vector<const CollectiveSpec*>& registered_collectives();
const CollectiveSpec* find_collective(const std::string& name);

// A collective's file registers its description at start-up:
//   const CollectiveSpec kAllGather = describe();
//   const CollectiveRegistration kRegistered(kAllGather);
struct CollectiveRegistration {
  explicit CollectiveRegistration(const CollectiveSpec& spec);
};

}  // namespace triaudit
