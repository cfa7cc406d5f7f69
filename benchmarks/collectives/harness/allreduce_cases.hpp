// The allreduce corner's options, its case catalogue and the suite description shared by the two
// executables (main_single.cpp: one process, every visible GPU; main_mpi.cpp: one rank per
// process and GPU). The measurement of one case is allreduce_case.cpp.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/pattern.cuh"
#include "suite.hpp"

namespace triaudit {

struct AllreduceOptions {
  std::uint64_t min_bytes = 8, max_bytes = 8ULL << 30;  // sizes beyond free memory are skipped
  std::vector<std::string> types = {"fp32", "bf16", "fp16"};
  std::vector<std::string> modes = {"out_of_place", "in_place", "graph"};
  std::vector<std::string> algos = {"ring", "auto"};
  long long gpus = 0;
  double timeout_s = 120;
  std::string scaling = "off";
  long long scaling_max_gpus = 8;
  std::string record_choice = "on";
};
extern AllreduceOptions g_opt;  // set by the command line (add_flags in base_spec)

struct TypeInfo {
  const char* name;
  kernels::ReduceType type;
  ncclDataType_t nccl;
  int bytes;
};

struct CaseSpec {
  std::string name, mode, algo;
  const TypeInfo* type;
  std::uint64_t bytes;
  int gpus = 0;  // 0: every rank; scaling: the first g
};

// The cases of this run (filled by register_allreduce, from g_opt).
std::vector<CaseSpec>& catalogue();
void register_allreduce();

// The suite description of either executable: flags, summary, registration.
SuiteSpec base_spec(const char* exe);

bool has_flag(int argc, char** argv, const char* flag);

// True in triaudit_allreduce_mpi (one rank per process), false in triaudit_allreduce.
bool mpi_build();

}  // namespace triaudit
