// A collective executable's options, its case catalogue and the suite description shared by its
// two builds (main_single.cpp: one process, every visible GPU; main_mpi.cpp: one rank per process
// and GPU). Which collective is the one description linked in (collective.hpp); the measurement of
// one case is collective_case.cpp.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collective.hpp"
#include "collectives/pattern.cuh"
#include "suite.hpp"

namespace triaudit {

struct CollectiveOptions {
  std::uint64_t min_bytes = 8, max_bytes = 8ULL << 30;  // sizes beyond free memory are skipped
  std::vector<std::string> types, modes, algos;         // the collective's defaults unless told
  long long root = 0;
  long long gpus = 0;
  double timeout_s = 120;
  std::string scaling = "off";
  long long scaling_max_gpus = 8;
  std::string record_choice = "on";
};
extern CollectiveOptions g_opt;  // set by the command line (add_flags in base_spec)

struct TypeInfo {
  const char* name;
  kernels::ElementType type;
  ncclDataType_t nccl;
  int bytes;
};

struct CaseSpec {
  std::string name, mode, algo;
  const TypeInfo* type;
  std::uint64_t bytes;  // nccl-tests' size: the larger of a rank's send and receive buffers
  int gpus = 0;         // 0: every rank; scaling: the first g
};

// The collective this executable measures: the one description linked into it.
const CollectiveSpec& the_collective();
// "triaudit_allgather", "triaudit_allgather_mpi".
std::string executable_name();

// The cases of this run (filled by register_collective_cases, from g_opt).
std::vector<CaseSpec>& catalogue();
void register_collective_cases();

// The suite description of either executable: flags, summary, registration.
SuiteSpec base_spec();

bool has_flag(int argc, char** argv, const char* flag);
// --benchmark_list_tests (and not =false): print the catalogue, nothing else.
bool lists_catalogue(int argc, char** argv);

// True in triaudit_<collective>_mpi (one rank per process), false in triaudit_<collective>.
bool mpi_build();

}  // namespace triaudit
