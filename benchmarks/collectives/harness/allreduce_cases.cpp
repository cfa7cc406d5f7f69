// The allreduce catalogue: modes x types x algorithms x sizes (and the scaling sweep), the flags
// that choose them, and the suite description both executables start from.
#include "allreduce_cases.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "allreduce_case.hpp"
#include "allreduce_math.hpp"
#include "names.hpp"

namespace triaudit {

AllreduceOptions g_opt;

bool mpi_build() { return TRIAUDIT_WITH_MPI != 0; }

namespace {

const TypeInfo kTypes[] = {{"fp32", kernels::ReduceType::FP32, ncclFloat32, 4},
                           {"bf16", kernels::ReduceType::BF16, ncclBfloat16, 2},
                           {"fp16", kernels::ReduceType::FP16, ncclFloat16, 2}};

std::vector<std::uint64_t> scaling_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b : {1ULL << 20, 64ULL << 20, 1ULL << 30})
    if (b >= g_opt.min_bytes && b <= g_opt.max_bytes) out.push_back(b);
  return out;
}

void add_flags(FlagSet& f) {
  f.add_size("min-bytes", &g_opt.min_bytes, "smallest message per rank");
  f.add_size("max-bytes", &g_opt.max_bytes, "largest message per rank (sizes not fitting in free memory are skipped)");
  f.add_list("types", &g_opt.types, {"fp32", "bf16", "fp16"}, "element types");
  f.add_list("modes", &g_opt.modes, {"out_of_place", "in_place", "graph"}, "operation modes");
  f.add_list("algos", &g_opt.algos, {"ring", "tree", "nvls", "collnet", "auto"},
             "NCCL algorithms, each its own case (ring sets NCCL_ALGO=Ring; auto: NCCL's choice, or NCCL_ALGO as set)");
  f.add_int("gpus", &g_opt.gpus, 0, 1024, "single process: how many GPUs (0: all visible)");
  f.add_double("timeout-s", &g_opt.timeout_s, 1, 86400, "abort a collective that has not completed after this long");
  f.add_choice("scaling", &g_opt.scaling, {"off", "on"},
               "also measure 1, 2, 4, ... GPUs (1 MiB, 64 MiB, 1 GiB; out of place)");
  f.add_int("scaling-max-gpus", &g_opt.scaling_max_gpus, 1, 1024, "the largest GPU count of the scaling sweep");
  f.add_choice("record-choice", &g_opt.record_choice, {"on", "off"},
               "single process: find out which algorithm and protocol NCCL picks per case (a short probe run "
               "with NCCL_DEBUG_SUBSYS=TUNING before the measurement)");
}

}  // namespace

std::vector<CaseSpec>& catalogue() {
  static std::vector<CaseSpec> cases;
  return cases;
}

void register_allreduce() {
  if (g_opt.min_bytes > g_opt.max_bytes) throw std::invalid_argument("--min-bytes is above --max-bytes");
  if (g_opt.algos.empty()) throw std::invalid_argument("--algos names no algorithm");
  auto wanted = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<CaseSpec>& all = catalogue();
  for (const std::string mode : {"out_of_place", "in_place", "graph"}) {
    if (!wanted(g_opt.modes, mode)) continue;
    for (const TypeInfo& t : kTypes) {
      if (!wanted(g_opt.types, t.name)) continue;
      for (const std::string& algo : g_opt.algos)
        for (std::uint64_t bytes : allreduce_sizes(g_opt.min_bytes, g_opt.max_bytes, t.bytes))
          all.push_back({BenchName("allreduce", mode, t.name).arg("algo", algo).arg("bytes", bytes).str(), mode, algo,
                         &t, bytes, 0});
    }
  }
  if (g_opt.scaling == "on")
    for (const TypeInfo& t : kTypes) {
      if (!wanted(g_opt.types, t.name)) continue;
      for (const std::string& algo : g_opt.algos)
        for (int g : scaling_gpu_counts(static_cast<int>(g_opt.scaling_max_gpus)))
          for (std::uint64_t bytes : scaling_sizes())
            all.push_back({BenchName("allreduce", "scaling", t.name)
                               .arg("algo", algo)
                               .arg("gpus", static_cast<std::uint64_t>(g))
                               .arg("bytes", bytes)
                               .str(),
                           "out_of_place", algo, &t, bytes, g});
    }
  for (const CaseSpec& c : all) register_case(c.name, [c](benchmark::State& s) { allreduce_case(s, c); });
}

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return true;
  return false;
}

SuiteSpec base_spec(const char* exe) {
  SuiteSpec spec;
  spec.executable = exe;
  spec.summary = "NCCL allreduce (sum): algbw and busbw as nccl-tests define them, every element checked";
  spec.add_flags = add_flags;
  spec.register_benchmarks = register_allreduce;
  return spec;
}

}  // namespace triaudit
