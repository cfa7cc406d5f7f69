// One allreduce case measured (see allreduce_case.cpp for the method).
#pragma once

#include <benchmark/benchmark.h>

#include "allreduce_cases.hpp"

namespace triaudit {

// Runs case `c` on every rank of this process; under MPI every rank of the job calls it in step.
void allreduce_case(benchmark::State& state, const CaseSpec& c);

}  // namespace triaudit
