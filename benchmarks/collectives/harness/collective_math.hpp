// The collectives' arithmetic and bootstrap logic as plain host code (unit-tested): the size
// sweep, collectives per timed region, rank -> device, detecting a launch by mpirun/srun, the
// NCCL_ALGO of a variant, NCCL's tuning log. Each collective's own byte accounting is its
// description (collective.hpp); the inputs with exactly predictable results are in
// kernels/collectives/pattern.hpp.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace triaudit {

// Environment of a process started by a launcher (mpirun, srun, ...).
using EnvLookup = std::function<const char*(const char*)>;
// The number of processes the launcher started, when it says so (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE, PMIX_SIZE, MV2_COMM_WORLD_SIZE, SLURM_NTASKS with SLURM_PROCID).
std::optional<int> launcher_world_size(const EnvLookup& env);
// The refusal of the classic trap: `executable`, a build without MPI, started as one of several
// processes. Empty when fine.
std::string single_process_trap(const EnvLookup& env, const std::string& executable);

// Device for a node-local rank: one GPU per rank; an error message when there are more ranks
// on the node than GPUs.
int device_for_local_rank(int local_rank, int local_size, int device_count, std::string* error);

// Byte sizes of the sweep (powers of two, at least one element of `elem` bytes).
std::vector<std::uint64_t> collective_sizes(std::uint64_t lo, std::uint64_t hi, int elem_bytes);

// Collectives per timed region: at least 20 (nccl-tests' iterations per measurement, so the
// launch skew between GPUs is spread over 20 operations), more for small sizes, at most 200.
int collectives_per_region(std::uint64_t bytes);

// The NCCL_ALGO value for an algorithm variant ("" for auto: NCCL's own choice).
std::string nccl_algo_env(const std::string& algo);

// GPU counts of the scaling sweep: 1, 2, 4, ... and the largest count itself.
std::vector<int> scaling_gpu_counts(int max_gpus);

// One algorithm/protocol choice NCCL logged (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING).
struct NcclChoice {
  std::uint64_t bytes = 0;  // 0 when the line does not say
  std::string algorithm, protocol;
};
std::vector<NcclChoice> parse_nccl_tuning(const std::string& log);

// The test switch TRIAUDIT_FAIL_CASE=<rank>:<regex>: true when `rank` must fail `case_name`.
bool forced_failure(const char* spec, int rank, const std::string& case_name);

}  // namespace triaudit
