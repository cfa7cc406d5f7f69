// A two-case suite for the harness's handling of a broken CUDA context: the first case launches
// a kernel that traps (what levels 4-5 do when a TMA tile never arrives), the second case would
// work on a healthy context. Expected (tests/check_lost_context.py): the first case fails and
// says the context is lost, the second is not attempted and names the earlier failure.
#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/suite.hpp"

namespace {

__global__ void trap_kernel() { __trap(); }

void register_cases() {
  using namespace triaudit;
  register_case("lost_context/trap", [](benchmark::State& state) {
    run_guarded(state, [&] {
      trap_kernel<<<1, 1>>>();
      TRIAUDIT_CUDA(cudaDeviceSynchronize());
      for (auto _ : state) state.SetIterationTime(1e-6);  // not reached
    });
  });
  register_case("lost_context/after", [](benchmark::State& state) {
    run_guarded(state, [&] {
      DeviceBuffer<int> b(1);
      TRIAUDIT_CUDA(cudaMemset(b.data(), 0, sizeof(int)));
      TRIAUDIT_CUDA(cudaDeviceSynchronize());
      for (auto _ : state) state.SetIterationTime(1e-6);
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  const triaudit::SuiteSpec spec{"triaudit_lost_context_test",
                                 "test only: a trapping kernel, then a healthy case",
                                 nullptr,
                                 register_cases,
                                 {},
                                 false};
  return triaudit::suite_main(argc, argv, spec);
}
