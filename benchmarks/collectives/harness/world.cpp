#include "world.hpp"

#include <cuda.h>

#include <cstdlib>

#include "collective_math.hpp"
#include "nccl_check.hpp"
#include "wait_loop.hpp"

#if TRIAUDIT_WITH_MPI
#include <mpi.h>
#endif

namespace triaudit {
namespace {
std::unique_ptr<CollectiveWorld>& instance() {
  static std::unique_ptr<CollectiveWorld> w;
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

namespace {
// Sets NCCL_ALGO for one communicator's creation and restores the user's value after.
class AlgoEnvironment {
 public:
  explicit AlgoEnvironment(const std::string& algo) {
    const char* v = std::getenv("NCCL_ALGO");
    had_ = v != nullptr;
    if (had_) old_ = v;
    const std::string want = nccl_algo_env(algo);
    if (!want.empty()) setenv("NCCL_ALGO", want.c_str(), 1);
  }
  ~AlgoEnvironment() {
    if (had_)
      setenv("NCCL_ALGO", old_.c_str(), 1);
    else
      unsetenv("NCCL_ALGO");
  }

 private:
  bool had_ = false;
  std::string old_;
};

std::unique_ptr<NvmlDevice> nvml_for(int device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return nullptr;
  return std::make_unique<NvmlDevice>(bus, std::string());
}
}  // namespace

void CollectiveWorld::create_single_process(int gpus) {
  int count = 0;
  TRIAUDIT_CUDA(cudaGetDeviceCount(&count));
  const int n = gpus > 0 ? gpus : count;
  if (n > count) throw Error("--gpus=" + std::to_string(gpus) + " but only " + std::to_string(count) + " visible");
  std::unique_ptr<CollectiveWorld> w(new CollectiveWorld());
  for (int d = 0; d < n; ++d) {
    TRIAUDIT_CUDA(cudaSetDevice(d));
    devices_in_use().insert(d);  // the harness's checks cover every GPU of the job
    LocalRank r;
    r.device = d;
    r.rank = d;
    r.stream = std::make_unique<Stream>();
    r.nvml = nvml_for(d);
    w->local_.push_back(std::move(r));
  }
  TRIAUDIT_CUDA(cudaSetDevice(0));
  w->info_ = {n, 1, n, false};
  instance() = std::move(w);
}

void CollectiveWorld::create_mpi_rank(const std::map<std::string, ncclUniqueId>& ids, int rank, const WorldInfo& info,
                                      int device) {
  TRIAUDIT_CUDA(cudaSetDevice(device));
  std::unique_ptr<CollectiveWorld> w(new CollectiveWorld());
  LocalRank r;
  r.device = device;
  r.rank = rank;
  r.stream = std::make_unique<Stream>();
  r.nvml = nvml_for(device);
  w->local_.push_back(std::move(r));
  w->info_ = info;
  w->ids_ = ids;
  instance() = std::move(w);
}

const std::vector<ncclComm_t>& CollectiveWorld::comms(const std::string& algo, int gpus) {
  const int g = gpus <= 0 ? info_.ranks : gpus;
  if (g > info_.ranks)
    throw SkipCase("needs " + std::to_string(g) + " GPUs, the job has " + std::to_string(info_.ranks));
  const auto key = std::make_pair(algo, g);
  if (auto it = comms_.find(key); it != comms_.end()) return it->second;
  AlgoEnvironment env(algo);
  std::vector<ncclComm_t> made(local_.size(), nullptr);
  if (!info_.mpi) {
    std::vector<int> devs;
    for (int d = 0; d < g; ++d) devs.push_back(local_[static_cast<std::size_t>(d)].device);
    TRIAUDIT_NCCL(ncclCommInitAll(made.data(), g, devs.data()));
  } else {
    TRIAUDIT_CUDA(cudaSetDevice(local_[0].device));
    if (g == info_.ranks) {
      const auto id = ids_.find(algo);
      if (id == ids_.end()) throw Error("no NCCL unique id for algorithm " + algo);
      TRIAUDIT_NCCL(ncclCommInitRank(&made[0], info_.ranks, id->second, local_[0].rank));
    } else {
      // The first g ranks, split from the full communicator (collective over every rank).
      const ncclComm_t parent = comms(algo, 0)[0];
      const int color = local_[0].rank < g ? 0 : NCCL_SPLIT_NOCOLOR;
      TRIAUDIT_NCCL(ncclCommSplit(parent, color, local_[0].rank, &made[0], nullptr));
    }
  }
  return comms_.emplace(key, std::move(made)).first->second;
}

bool CollectiveWorld::broken() { return !instance() || !instance()->broken_.empty(); }

void CollectiveWorld::abort_if_alive(const std::string& why) {
  if (instance() && instance()->broken_.empty()) instance()->abort(why);
}

CollectiveWorld& CollectiveWorld::get() {
  if (!instance()) throw Error("no NCCL communicator (creating it failed; see above)");
  if (!instance()->broken_.empty()) throw Error("communicators aborted earlier: " + instance()->broken_);
  return *instance();
}

CollectiveWorld::~CollectiveWorld() {
  for (auto& [key, list] : comms_)
    for (ncclComm_t c : list)
      if (c) (void)(broken_.empty() ? ncclCommDestroy(c) : ncclSuccess);
}

void CollectiveWorld::abort(const std::string& why) {
  broken_ = why;
  for (auto& [key, list] : comms_)
    for (ncclComm_t& c : list)
      if (c) {
        (void)ncclCommAbort(c);
        c = nullptr;
      }
}

void CollectiveWorld::wait(const std::vector<cudaEvent_t>& done, const std::vector<ncclComm_t>& comms,
                           double timeout_s) {
  std::string failure;
  const WaitResult r = wait_for_all(
      done.size(),
      [&](std::size_t i) {
        const cudaError_t e = cudaEventQuery(done[i]);
        if (e == cudaSuccess) return Poll::kDone;
        if (e != cudaErrorNotReady) {
          failure = std::string("CUDA error while waiting for the collective: ") + cudaGetErrorString(e);
          return Poll::kFailed;
        }
        ncclResult_t async = ncclSuccess;
        if (i < comms.size() && comms[i] && ncclCommGetAsyncError(comms[i], &async) == ncclSuccess &&
            async != ncclSuccess) {
          failure =
              std::string("NCCL reported ") + ncclGetErrorString(async) + " on rank " + std::to_string(local_[i].rank);
          return Poll::kFailed;
        }
        return Poll::kPending;
      },
      timeout_s);
  if (r.failed) {
    abort(failure);
    throw Error(failure);
  }
  if (r.timed_out) {
    const std::string msg = "the collective did not complete within " + std::to_string(static_cast<int>(timeout_s)) +
                            " s (a rank died or the network hangs); communicators aborted";
    abort(msg);
    throw Error(msg);
  }
}

int CollectiveWorld::multicast_supported(int* device, std::string* why) const {
  // The driver's cuDeviceGet / cuDeviceGetAttribute through the runtime's entry points: no link
  // against libcuda (a machine without a driver must still start the executable).
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  void* get = nullptr;
  void* attr = nullptr;
  cudaDriverEntryPointQueryResult q1{}, q2{};
  if (cudaGetDriverEntryPointByVersion("cuDeviceGet", &get, 12000, cudaEnableDefault, &q1) != cudaSuccess ||
      q1 != cudaDriverEntryPointSuccess ||
      cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &attr, 12000, cudaEnableDefault, &q2) != cudaSuccess ||
      q2 != cudaDriverEntryPointSuccess) {
    *why = "the driver's cuDeviceGetAttribute is not reachable";
    return -1;
  }
  for (const LocalRank& r : local_) {
    CUdevice dev{};
    int supported = 0;
    if (reinterpret_cast<DeviceGet>(get)(&dev, r.device) != CUDA_SUCCESS ||
        reinterpret_cast<GetAttribute>(attr)(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev) !=
            CUDA_SUCCESS) {
      *why = "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) failed on GPU " + std::to_string(r.device);
      return -1;
    }
    if (supported == 0) {
      *device = r.device;
      return 0;
    }
  }
  return 1;
}

ContextEntries CollectiveWorld::context(const std::string& collective) const {
  int version = 0;
  (void)ncclGetVersion(&version);
  const char* algo = std::getenv("NCCL_ALGO");
  const char* proto = std::getenv("NCCL_PROTO");
  return {{"nccl_runtime_version", std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                                       std::to_string(version % 100)},
          {"nccl_algo_environment", algo ? algo : "(unset: algo:auto cases are NCCL's choice)"},
          {"nccl_proto", proto ? proto : "NCCL's choice"},
          {collective + "_ranks", std::to_string(info_.ranks)},
          {collective + "_nodes", std::to_string(info_.nodes)},
          {collective + "_gpus_per_node", std::to_string(info_.gpus_per_node)},
          {collective + "_launch", info_.mpi ? "MPI, one rank per process" : "one process driving every GPU"},
          {collective + "_peer_access", peer_access_summary(local_)}};
}

}  // namespace triaudit
