// What a collective's NCCL call gets (collective.hpp: CollectiveSpec::enqueue), in NCCL's types.
// Only the executables include this: a collective's file defines its call inside
// `#if TRIAUDIT_WITH_NCCL`, so the CPU tests compile the same file without NCCL.
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>

#include "collective.hpp"
#include "nccl_check.hpp"

namespace triaudit {

struct NcclCallArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  std::uint64_t count = 0;  // BufferCounts::param
  ncclDataType_t type = ncclFloat32;
  int elem_bytes = 4;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  int ranks = 1;  // of the communicator
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

}  // namespace triaudit
