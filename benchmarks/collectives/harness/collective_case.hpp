// One case of a collective measured (see collective_case.cpp for the method).
#pragma once

#include <benchmark/benchmark.h>

#include "catalogue.hpp"

namespace triaudit {

// Runs case `c` on every rank of this process; under MPI every rank of the job calls it in step.
void collective_case(benchmark::State& state, const CaseSpec& c);

}  // namespace triaudit
