// The ranks this process drives and how it talks to the others.
//  - single process: one NCCL communicator per visible GPU, created together (ncclCommInitAll);
//  - MPI (triaudit_<collective>_mpi): one rank per process and GPU, the NCCL unique id broadcast
//    over MPI, the node-local rank choosing the device.
// Communicators exist per algorithm variant (NCCL reads NCCL_ALGO when a communicator is made:
// "ring" sets it to Ring, "auto" leaves NCCL's choice or the user's setting) and per GPU count
// (the scaling sweep: the first g ranks). They are made on first use and kept.
// Waits are bounded: a hung or failed collective aborts the communicators and throws, so no
// rank hangs forever.
#pragma once
#include <nccl.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_raii.hpp"
#include "device_description.hpp"
#include "nvml.hpp"

namespace triaudit {

struct LocalRank {
  int device = 0;
  int rank = 0;  // global rank
  std::unique_ptr<Stream> stream;
  std::unique_ptr<NvmlDevice> nvml;  // for the energy counter
};

struct WorldInfo {
  int ranks = 1, nodes = 1, gpus_per_node = 1;
  bool mpi = false;
};

class CollectiveWorld {
 public:
  // Single process over `gpus` devices (0 = all visible).
  static void create_single_process(int gpus);
  // One rank of an MPI job on `device`; `ids` holds one NCCL unique id per algorithm variant
  // (every rank received the same ones).
  static void create_mpi_rank(const std::map<std::string, ncclUniqueId>& ids, int rank, const WorldInfo& info,
                              int device);
  static CollectiveWorld& get();                       // throws when not created or broken
  static bool broken();                                // the communicators were aborted (or never made)
  static void abort_if_alive(const std::string& why);  // abort every communicator, once
  ~CollectiveWorld();

  const WorldInfo& info() const { return info_; }
  std::vector<LocalRank>& local() { return local_; }

  // The communicators of algorithm variant `algo` over the first `gpus` ranks (0: all), one per
  // local rank (null where a local rank is not among them). Collective under MPI: every rank
  // must ask in the same order.
  const std::vector<ncclComm_t>& comms(const std::string& algo, int gpus = 0);

  // Waits until `done` has completed on every local rank, polling NCCL's async errors of `comms`;
  // after `timeout_s` aborts every communicator and throws.
  void wait(const std::vector<cudaEvent_t>& done, const std::vector<ncclComm_t>& comms, double timeout_s = 120.0);

  // Whether every local rank's GPU supports NVLink SHARP multicast, as NCCL asks the driver
  // (nvls.hpp): 1 yes, 0 no (first such device in *device), -1 unknown (*why).
  int multicast_supported(int* device, std::string* why) const;

  // The job layout and NCCL's settings, keys prefixed with the collective's name
  // (allreduce_ranks, allgather_ranks, ...).
  ContextEntries context(const std::string& collective) const;

 private:
  CollectiveWorld() = default;
  void abort(const std::string& why);
  WorldInfo info_;
  std::vector<LocalRank> local_;
  std::map<std::string, ncclUniqueId> ids_;
  std::map<std::pair<std::string, int>, std::vector<ncclComm_t>> comms_;
  std::string broken_;
};

}  // namespace triaudit
