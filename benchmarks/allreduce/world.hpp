// The ranks this process drives and how it talks to the others.
//  - single process: one NCCL communicator per visible GPU, created together (ncclCommInitAll);
//  - MPI (triaudit_allreduce_mpi): one rank per process and GPU, the NCCL unique id broadcast
//    over MPI, the node-local rank choosing the device.
// Waits are bounded: a hung or failed collective aborts the communicators and throws, so no
// rank hangs forever.
#pragma once
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "../common/cuda_raii.hpp"
#include "../common/device_description.hpp"

namespace triaudit {

struct LocalRank {
  int device = 0;
  int rank = 0;  // global rank
  ncclComm_t comm = nullptr;
  std::unique_ptr<Stream> stream;
};

struct WorldInfo {
  int ranks = 1, nodes = 1, gpus_per_node = 1;
  bool mpi = false;
};

class AllreduceWorld {
 public:
  // Single process over `gpus` devices (0 = all visible).
  static void create_single_process(int gpus);
  // One rank of an MPI job, on `device`, with the unique id every rank received.
  static void create_mpi_rank(const ncclUniqueId& id, int rank, const WorldInfo& info, int device);
  static AllreduceWorld& get();  // throws when not created or broken
  ~AllreduceWorld();

  const WorldInfo& info() const { return info_; }
  std::vector<LocalRank>& local() { return local_; }

  // MPI: the maximum / sum over all processes; single process: the value itself.
  double max_over_processes(double v) const;
  unsigned long long sum_over_processes(unsigned long long v) const;

  // Waits until `done` has completed on every local rank, polling NCCL's async errors; after
  // `timeout_s` aborts the communicators and throws.
  void wait(const std::vector<cudaEvent_t>& done, double timeout_s = 120.0);

  ContextEntries context() const;

 private:
  AllreduceWorld() = default;
  void abort(const std::string& why);
  WorldInfo info_;
  std::vector<LocalRank> local_;
  std::string broken_;
};

}  // namespace triaudit
