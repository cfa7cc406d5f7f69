#include "world.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "../common/nccl_check.hpp"

#if TRIAUDIT_WITH_MPI
#include <mpi.h>
#endif

namespace triaudit {
namespace {
std::unique_ptr<AllreduceWorld>& instance() {
  static std::unique_ptr<AllreduceWorld> w;
  return w;
}

std::string peer_access_summary(const std::vector<LocalRank>& ranks) {
  if (ranks.size() < 2) return "single GPU in this process";
  int pairs = 0, peer = 0;
  for (const auto& a : ranks)
    for (const auto& b : ranks) {
      if (a.device == b.device) continue;
      int can = 0;
      (void)cudaDeviceCanAccessPeer(&can, a.device, b.device);
      ++pairs;
      peer += can;
    }
  return std::to_string(peer) + " of " + std::to_string(pairs) + " GPU pairs have peer access";
}
}  // namespace

void AllreduceWorld::create_single_process(int gpus) {
  int count = 0;
  TRIAUDIT_CUDA(cudaGetDeviceCount(&count));
  const int n = gpus > 0 ? gpus : count;
  if (n > count) throw Error("--gpus=" + std::to_string(gpus) + " but only " + std::to_string(count) + " visible");
  std::unique_ptr<AllreduceWorld> w(new AllreduceWorld());
  std::vector<int> devs(static_cast<std::size_t>(n));
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) devs[static_cast<std::size_t>(d)] = d;
  TRIAUDIT_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
  for (int d = 0; d < n; ++d) {
    TRIAUDIT_CUDA(cudaSetDevice(d));
    LocalRank r;
    r.device = d;
    r.rank = d;
    r.comm = comms[static_cast<std::size_t>(d)];
    r.stream = std::make_unique<Stream>();
    w->local_.push_back(std::move(r));
  }
  TRIAUDIT_CUDA(cudaSetDevice(0));
  w->info_ = {n, 1, n, false};
  instance() = std::move(w);
}

void AllreduceWorld::create_mpi_rank(const ncclUniqueId& id, int rank, const WorldInfo& info, int device) {
  TRIAUDIT_CUDA(cudaSetDevice(device));
  std::unique_ptr<AllreduceWorld> w(new AllreduceWorld());
  LocalRank r;
  r.device = device;
  r.rank = rank;
  r.stream = std::make_unique<Stream>();
  TRIAUDIT_NCCL(ncclCommInitRank(&r.comm, info.ranks, id, rank));
  w->local_.push_back(std::move(r));
  w->info_ = info;
  instance() = std::move(w);
}

AllreduceWorld& AllreduceWorld::get() {
  if (!instance()) throw Error("no NCCL communicator (creating it failed; see above)");
  if (!instance()->broken_.empty()) throw Error("communicators aborted earlier: " + instance()->broken_);
  return *instance();
}

AllreduceWorld::~AllreduceWorld() {
  for (auto& r : local_)
    if (r.comm) (void)(broken_.empty() ? ncclCommDestroy(r.comm) : ncclSuccess);
}

void AllreduceWorld::abort(const std::string& why) {
  broken_ = why;
  for (auto& r : local_)
    if (r.comm) {
      (void)ncclCommAbort(r.comm);
      r.comm = nullptr;
    }
}

void AllreduceWorld::wait(const std::vector<cudaEvent_t>& done, double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t finished = 0;
  std::vector<bool> is_done(done.size(), false);
  while (finished < done.size()) {
    for (std::size_t i = 0; i < done.size(); ++i) {
      if (is_done[i]) continue;
      const cudaError_t e = cudaEventQuery(done[i]);
      if (e == cudaSuccess) {
        is_done[i] = true;
        ++finished;
      } else if (e != cudaErrorNotReady) {
        abort(cudaGetErrorString(e));
        throw Error(std::string("CUDA error while waiting for the allreduce: ") + cudaGetErrorString(e));
      }
      ncclResult_t async = ncclSuccess;
      if (local_[i].comm && ncclCommGetAsyncError(local_[i].comm, &async) == ncclSuccess && async != ncclSuccess) {
        const std::string msg = std::string("NCCL reported ") + ncclGetErrorString(async) + " on rank " +
                                std::to_string(local_[i].rank);
        abort(msg);
        throw Error(msg);
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
      const std::string msg = "the allreduce did not complete within " + std::to_string(static_cast<int>(timeout_s)) +
                              " s (a rank died or the network hangs); communicators aborted";
      abort(msg);
      throw Error(msg);
    }
    if (finished < done.size()) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

double AllreduceWorld::max_over_processes(double v) const {
#if TRIAUDIT_WITH_MPI
  if (info_.mpi) {
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
#endif
  return v;
}

unsigned long long AllreduceWorld::sum_over_processes(unsigned long long v) const {
#if TRIAUDIT_WITH_MPI
  if (info_.mpi) {
    unsigned long long out = v;
    MPI_Allreduce(&v, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return out;
  }
#endif
  return v;
}

ContextEntries AllreduceWorld::context() const {
  int version = 0;
  (void)ncclGetVersion(&version);
  const char* algo = std::getenv("NCCL_ALGO");
  const char* proto = std::getenv("NCCL_PROTO");
  return {{"nccl_runtime_version", std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                                       std::to_string(version % 100)},
          {"nccl_algo", algo ? algo : "NCCL's choice"},
          {"nccl_proto", proto ? proto : "NCCL's choice"},
          {"allreduce_ranks", std::to_string(info_.ranks)},
          {"allreduce_nodes", std::to_string(info_.nodes)},
          {"allreduce_gpus_per_node", std::to_string(info_.gpus_per_node)},
          {"allreduce_launch", info_.mpi ? "MPI, one rank per process" : "one process driving every GPU"},
          {"allreduce_peer_access", peer_access_summary(local_)}};
}

}  // namespace triaudit
