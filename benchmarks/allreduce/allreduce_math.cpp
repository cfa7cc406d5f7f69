#include "allreduce_math.hpp"

#include <algorithm>
#include <cstdlib>

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

std::string single_process_trap(const EnvLookup& env) {
  const auto n = launcher_world_size(env);
  if (!n || *n <= 1) return "";
  return "this triaudit_allreduce was built without MPI but was started as one of " + std::to_string(*n) +
         " processes (by mpirun or srun): each would run a separate one-rank allreduce with busbw 0. "
         "Run triaudit_allreduce_mpi under the launcher (configure with MPI installed: apt-get install "
         "libopenmpi-dev), or run this binary once, without a launcher, to drive every GPU of the node.";
}

int device_for_local_rank(int local_rank, int local_size, int device_count, std::string* error) {
  if (device_count <= 0) {
    if (error) *error = "no CUDA device visible";
    return -1;
  }
  if (local_size > device_count) {
    if (error)
      *error = std::to_string(local_size) + " ranks on this node but " + std::to_string(device_count) +
               " visible GPUs: start at most one rank per GPU";
    return -1;
  }
  return local_rank % device_count;
}

std::vector<std::uint64_t> allreduce_sizes(std::uint64_t lo, std::uint64_t hi, int elem_bytes) {
  return power_of_two_sweep(std::max<std::uint64_t>(lo, static_cast<std::uint64_t>(elem_bytes)), hi);
}

}  // namespace triaudit
