// Host-side setup a ladder launcher needs once per device, not on every launch: the kernels'
// attributes (cudaFuncSetAttribute is per device and a driver call) are set the first time a
// kernel launches on a device, so a timed loop of thousands of launches queues launches only.
#pragma once
#include <cuda_runtime_api.h>

#include <mutex>
#include <set>
#include <utility>

namespace triaudit::kernels {

// True the first time it is asked for (kernel, the current device); the caller then sets the
// kernel's attributes. A failure there surfaces as the launch error the caller checks.
inline bool first_launch_on_this_device(const void* kernel) {
  static std::mutex lock;
  static std::set<std::pair<int, const void*>> done;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) return true;
  const std::lock_guard<std::mutex> hold(lock);
  return done.insert({device, kernel}).second;
}

}  // namespace triaudit::kernels
