// triaudit_<collective>: one process, every visible GPU (one NCCL communicator per GPU). Also the
// NCCL choice probe's child when started with --nccl-choice-probe=FILE.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "catalogue.hpp"
#include "collective_math.hpp"
#include "nccl_probe.hpp"
#include "world.hpp"

int main(int argc, char** argv) {
  using namespace triaudit;
  const std::string exe = executable_name();
  const std::string trap = single_process_trap([](const char* k) { return std::getenv(k); }, exe);
  if (!trap.empty()) {
    std::cerr << exe << ": refusing to run: " << trap << "\n";
    return kExitBadCommandLine;
  }
  SuiteSpec spec = base_spec();
  // The probe child: parse the same flags, build the catalogue, report NCCL's choices, exit.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--nccl-choice-probe=", 20) == 0) {
      const std::string out = argv[i] + 20;
      std::vector<char*> rest;
      for (int j = 0; j < argc; ++j)
        if (j != i) rest.push_back(argv[j]);
      FlagSet flags = suite_flags(spec);
      int n = static_cast<int>(rest.size());
      try {
        flags.parse(&n, rest.data());
        register_collective_cases();
        return run_choice_probe(out);
      } catch (const std::exception& e) {
        std::cerr << exe << " (NCCL choice probe): " << e.what() << "\n";
        return 1;
      }
    }
  if (has_flag(argc, argv, "--dry-run")) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
      std::printf("single process: no CUDA device (%s)\n", cudaGetErrorString(e));
    else
      std::printf("single process: %d visible GPU(s) -> %d rank(s), one NCCL communicator each\n", count, count);
    return 0;
  }
  // The probe needs the command line as given (suite_main removes the flags it consumes).
  auto original = std::make_shared<std::vector<std::string>>(argv, argv + argc);
  spec.before_run = [original] {
    std::vector<char*> args;
    for (std::string& a : *original) args.push_back(a.data());
    probe_nccl_choices(args[0], static_cast<int>(args.size()), args.data());
    CollectiveWorld::create_single_process(static_cast<int>(g_opt.gpus));
    for (const auto& [k, v] : CollectiveWorld::get().context(the_collective().name)) benchmark::AddCustomContext(k, v);
  };
  return suite_main(argc, argv, spec);
}
