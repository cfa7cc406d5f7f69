#include "collective_math.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "sizes.hpp"

namespace triaudit {

namespace {
std::optional<int> parse_int(const char* v) {
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 24) return std::nullopt;
  return static_cast<int>(x);
}
}  // namespace

std::optional<int> launcher_world_size(const EnvLookup& env) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (auto v = parse_int(env(name))) return v;
  if (env("SLURM_PROCID") != nullptr)
    if (auto v = parse_int(env("SLURM_NTASKS"))) return v;
  return std::nullopt;
}

std::string single_process_trap(const EnvLookup& env, const std::string& executable) {
  const auto n = launcher_world_size(env);
  if (!n || *n <= 1) return "";
  const std::string collective = executable.rfind("triaudit_", 0) == 0 ? executable.substr(9) : executable;
  return "this " + executable + " was built without MPI but was started as one of " + std::to_string(*n) +
         " processes (by mpirun or srun): each would run a separate one-rank " + collective + " with busbw 0. Run " +
         executable +
         "_mpi under the launcher (configure with MPI installed: apt-get install libopenmpi-dev), or run this "
         "binary once, without a launcher, to drive every GPU of the node.";
}

int device_for_local_rank(int local_rank, int local_size, int device_count, std::string* error) {
  if (device_count <= 0) {
    if (error) *error = "no CUDA device visible";
    return -1;
  }
  // One visible GPU per rank (the launcher bound each rank to its own): device 0. Whether two
  // ranks got the same GPU is checked by the bootstrap (their UUIDs), not here.
  if (device_count == 1) return 0;
  if (local_size > device_count) {
    if (error)
      *error = std::to_string(local_size) + " ranks on this node but " + std::to_string(device_count) +
               " visible GPUs: start at most one rank per GPU";
    return -1;
  }
  return local_rank % device_count;
}

std::vector<std::uint64_t> collective_sizes(std::uint64_t lo, std::uint64_t hi, int elem_bytes) {
  return power_of_two_sweep(std::max<std::uint64_t>(lo, static_cast<std::uint64_t>(elem_bytes)), hi);
}

int collectives_per_region(std::uint64_t bytes) {
  const std::uint64_t by_size = (32ULL << 20) / std::max<std::uint64_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::uint64_t>(by_size, 20, 200));
}

std::string nccl_algo_env(const std::string& algo) {
  if (algo == "ring") return "Ring";
  if (algo == "tree") return "Tree";
  if (algo == "nvls") return "NVLS";
  if (algo == "collnet") return "CollNet";
  return "";
}

std::vector<int> scaling_gpu_counts(int max_gpus) {
  std::vector<int> out;
  for (int g = 1; g < max_gpus; g *= 2) out.push_back(g);
  if (max_gpus >= 1) out.push_back(max_gpus);
  return out;
}

std::vector<NcclChoice> parse_nccl_tuning(const std::string& log) {
  // NCCL_ALGO_* and NCCL_PROTO_* indices (src/include/device.h) and the names ncclAlgoToString /
  // ncclProtoToString print, mapped to NCCL_ALGO's spelling.
  static const char* const algos[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  static const char* const protos[] = {"LL", "LL128", "Simple"};
  auto algo_name = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (s == "TREE") return std::string("Tree");
    if (s == "RING") return std::string("Ring");
    if (s == "COLLNET_DIRECT") return std::string("CollNetDirect");
    if (s == "COLLNET_CHAIN") return std::string("CollNetChain");
    if (s == "NVLS") return std::string("NVLS");
    if (s == "NVLS_TREE") return std::string("NVLSTree");
    if (s == "PAT") return std::string("PAT");
    return s;
  };
  auto proto_name = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (s == "SIMPLE") return std::string("Simple");
    return s;  // LL, LL128
  };
  static const std::regex best(R"(Best tuning, algorithm, (\w+), protocol, (\w+))");
  static const std::regex numeric(R"((\d+) Bytes -> Algo (\d+) proto (\d+))");
  // NCCL 2.19-2.27: "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..23}"
  static const std::regex named(R"((\d+) Bytes -> Algo ([A-Za-z_]+) proto ([A-Za-z0-9_]+))");
  std::vector<NcclChoice> out;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, best)) {
      out.push_back({0, algo_name(m[1]), proto_name(m[2])});
    } else if (std::regex_search(line, m, named)) {
      out.push_back({std::stoull(m[1]), algo_name(m[2]), proto_name(m[3])});
    } else if (std::regex_search(line, m, numeric)) {
      const unsigned a = static_cast<unsigned>(std::stoul(m[2])), p = static_cast<unsigned>(std::stoul(m[3]));
      out.push_back(
          {std::stoull(m[1]), a < 7 ? algos[a] : "algo " + m[2].str(), p < 3 ? protos[p] : "proto " + m[3].str()});
    }
  }
  return out;
}

bool forced_failure(const char* spec, int rank, const std::string& case_name) {
  if (spec == nullptr || *spec == '\0') return false;
  const std::string s = spec;
  const auto colon = s.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  try {
    if (std::stoi(s.substr(0, colon)) != rank) return false;
    return std::regex_search(case_name, std::regex(s.substr(colon + 1)));
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace triaudit
