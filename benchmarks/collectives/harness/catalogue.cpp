// A collective's catalogue: modes x types x algorithms x sizes (and the scaling sweep), the flags
// that choose them, and the suite description both executables start from.
#include "catalogue.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "collective_case.hpp"
#include "collective_math.hpp"
#include "names.hpp"

namespace triaudit {

CollectiveOptions g_opt;

bool mpi_build() { return TRIAUDIT_WITH_MPI != 0; }

const CollectiveSpec& the_collective() {
  const auto& all = registered_collectives();
  // One description per executable, by construction (CMake's triaudit_collective links one file).
  if (all.size() != 1) throw std::logic_error("an executable must link exactly one collective description");
  return *all.front();
}

std::string executable_name() { return "triaudit_" + the_collective().name + (mpi_build() ? "_mpi" : ""); }

namespace {

const TypeInfo kTypes[] = {{"fp32", kernels::ElementType::FP32, ncclFloat32, 4},
                           {"bf16", kernels::ElementType::BF16, ncclBfloat16, 2},
                           {"fp16", kernels::ElementType::FP16, ncclFloat16, 2}};

std::vector<std::uint64_t> scaling_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b : {1ULL << 20, 64ULL << 20, 1ULL << 30})
    if (b >= g_opt.min_bytes && b <= g_opt.max_bytes) out.push_back(b);
  return out;
}

void add_flags(FlagSet& f) {
  const CollectiveSpec& c = the_collective();
  f.add_size("min-bytes", &g_opt.min_bytes,
             "smallest message per rank (nccl-tests' size: the larger of a rank's send and receive buffers)");
  f.add_size("max-bytes", &g_opt.max_bytes, "largest message per rank (sizes not fitting in free memory are skipped)");
  f.add_list("types", &g_opt.types, c.types, "element types");
  f.add_list("modes", &g_opt.modes, c.modes, "operation modes");
  f.add_list("algos", &g_opt.algos, c.algos,
             "NCCL algorithms, each its own case (ring sets NCCL_ALGO=Ring; auto: NCCL's choice, or NCCL_ALGO as set)");
  if (c.has_root) f.add_int("root", &g_opt.root, 0, 1 << 20, "the root rank (every rank receives its buffer)");
  f.add_int("gpus", &g_opt.gpus, 0, 1024, "single process: how many GPUs (0: all visible)");
  f.add_double("timeout-s", &g_opt.timeout_s, 1, 86400, "abort a collective that has not completed after this long");
  f.add_choice("scaling", &g_opt.scaling, {"off", "on"},
               "also measure 1, 2, 4, ... GPUs (1 MiB, 64 MiB, 1 GiB; out of place)");
  f.add_int("scaling-max-gpus", &g_opt.scaling_max_gpus, 1, 1024, "the largest GPU count of the scaling sweep");
  f.add_choice("record-choice", &g_opt.record_choice, {"on", "off"},
               "single process: find out which algorithm and protocol NCCL picks per case (a short probe run "
               "with NCCL_DEBUG_SUBSYS=TUNING before the measurement)");
}

// <collective>/<mode>/<type>/algo:<a>[/root:<r>][/gpus:<g>]/bytes:<N>
std::string case_name(const std::string& mode, const TypeInfo& t, const std::string& algo, int gpus,
                      std::uint64_t bytes) {
  const CollectiveSpec& c = the_collective();
  BenchName n(c.name, mode, t.name);
  n.arg("algo", algo);
  if (c.has_root) n.arg("root", static_cast<std::uint64_t>(g_opt.root));
  if (gpus > 0) n.arg("gpus", static_cast<std::uint64_t>(gpus));
  n.arg("bytes", bytes);
  return n.str();
}

}  // namespace

std::vector<CaseSpec>& catalogue() {
  static std::vector<CaseSpec> cases;
  return cases;
}

void register_collective_cases() {
  const CollectiveSpec& c = the_collective();
  if (g_opt.min_bytes > g_opt.max_bytes) throw std::invalid_argument("--min-bytes is above --max-bytes");
  if (g_opt.algos.empty()) throw std::invalid_argument("--algos names no algorithm");
  auto wanted = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<CaseSpec>& all = catalogue();
  for (const std::string& mode : c.modes) {
    if (!wanted(g_opt.modes, mode)) continue;
    for (const TypeInfo& t : kTypes) {
      if (!wanted(c.types, t.name) || !wanted(g_opt.types, t.name)) continue;
      for (const std::string& algo : g_opt.algos)
        for (std::uint64_t bytes : collective_sizes(g_opt.min_bytes, g_opt.max_bytes, t.bytes))
          all.push_back({case_name(mode, t, algo, 0, bytes), mode, algo, &t, bytes, 0});
    }
  }
  if (g_opt.scaling == "on")
    for (const TypeInfo& t : kTypes) {
      if (!wanted(c.types, t.name) || !wanted(g_opt.types, t.name)) continue;
      for (const std::string& algo : g_opt.algos)
        for (int g : scaling_gpu_counts(static_cast<int>(g_opt.scaling_max_gpus)))
          for (std::uint64_t bytes : scaling_sizes())
            all.push_back({case_name("scaling", t, algo, g, bytes), "out_of_place", algo, &t, bytes, g});
    }
  for (const CaseSpec& cs : all) {
    register_case(cs.name, [cs](benchmark::State& s) { collective_case(s, cs); });
    // The busbw headline (the Python corners' key, the collective's name): FP32 out of place, NCCL's choice.
    const bool headline =
        cs.gpus == 0 && cs.mode == "out_of_place" && std::string(cs.type->name) == "fp32" && cs.algo == "auto";
    describe_case(cs.name, {"busbw", headline ? c.name : "", {}});
  }
}

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return true;
  return false;
}

bool lists_catalogue(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_list_tests", 22) == 0 &&
        std::strcmp(argv[i], "--benchmark_list_tests=false") != 0)
      return true;
  return false;
}

SuiteSpec base_spec() {
  const CollectiveSpec& c = the_collective();
  g_opt.types = c.default_types;
  g_opt.modes = c.default_modes;
  g_opt.algos = c.default_algos;
  SuiteSpec spec;
  spec.executable = executable_name();
  spec.summary = c.summary;
  spec.add_flags = add_flags;
  spec.register_benchmarks = register_collective_cases;
  spec.scope = "node";  // once over all of a node's GPUs (case_description.hpp)
  return spec;
}

}  // namespace triaudit
