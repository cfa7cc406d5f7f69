// Owning wrappers for CUDA resources: device buffers, pinned host buffers, streams, events,
// graphs. Move-only; destructors never throw (a failure there is ignored, the process may
// already be unwinding from a CUDA error).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <set>
#include <utility>

#include "cuda_check.hpp"

namespace triaudit {

namespace detail {
// A move-only owner of one handle with a release function.
template <typename Handle, cudaError_t (*Release)(Handle)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle h) : h_(h) {}
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  Handle get() const { return h_; }
  operator Handle() const { return h_; }  // NOLINT: pass straight to CUDA calls
  void reset() {
    if (h_ != Handle{}) (void)Release(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

inline cudaError_t free_device(void* p) { return cudaFree(p); }
inline cudaError_t free_host(void* p) { return cudaFreeHost(p); }
}  // namespace detail

// `count` elements of T in device memory (cudaMalloc: 256-byte aligned).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    void* p = nullptr;
    if (count > 0) TRIAUDIT_CUDA(cudaMalloc(&p, count * sizeof(T)));
    mem_ = Owner(p);
  }
  T* data() const { return static_cast<T*>(mem_.get()); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  using Owner = detail::UniqueHandle<void*, detail::free_device>;
  Owner mem_;
  std::size_t count_ = 0;
};

// `count` elements of T in page-locked host memory (cudaHostAlloc with `flags`).
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count, unsigned flags = cudaHostAllocDefault) : count_(count) {
    void* p = nullptr;
    if (count > 0) TRIAUDIT_CUDA(cudaHostAlloc(&p, count * sizeof(T), flags));
    mem_ = Owner(p);
  }
  T* data() const { return static_cast<T*>(mem_.get()); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  T& operator[](std::size_t i) const { return data()[i]; }

 private:
  using Owner = detail::UniqueHandle<void*, detail::free_host>;
  Owner mem_;
  std::size_t count_ = 0;
};

// A non-blocking stream: never synchronizes implicitly with the legacy default stream.
class Stream : public detail::UniqueHandle<cudaStream_t, cudaStreamDestroy> {
 public:
  Stream() : UniqueHandle(create()) {}
  void synchronize() const { TRIAUDIT_CUDA(cudaStreamSynchronize(get())); }

 private:
  static cudaStream_t create() {
    cudaStream_t s = nullptr;
    TRIAUDIT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }
};

class Event : public detail::UniqueHandle<cudaEvent_t, cudaEventDestroy> {
 public:
  explicit Event(unsigned flags = cudaEventDefault) : UniqueHandle(create(flags)) {}
  void record(cudaStream_t s) const { TRIAUDIT_CUDA(cudaEventRecord(get(), s)); }
  void synchronize() const { TRIAUDIT_CUDA(cudaEventSynchronize(get())); }

  // Seconds from `start` to `stop`; both must have completed.
  static double seconds_between(const Event& start, const Event& stop) {
    float ms = 0.0f;
    TRIAUDIT_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  static cudaEvent_t create(unsigned flags) {
    cudaEvent_t e = nullptr;
    TRIAUDIT_CUDA(cudaEventCreateWithFlags(&e, flags));
    return e;
  }
};

// A captured graph and its executable instance.
class Graph : public detail::UniqueHandle<cudaGraph_t, cudaGraphDestroy> {
 public:
  Graph() = default;
  explicit Graph(cudaGraph_t g) : UniqueHandle(g) {}

  // Captures everything `enqueue(stream)` issues on `stream` into a graph.
  template <typename Enqueue>
  static Graph capture(cudaStream_t stream, Enqueue&& enqueue) {
    TRIAUDIT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(stream);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(stream, &broken);
      if (broken != nullptr) (void)cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t g = nullptr;
    TRIAUDIT_CUDA(cudaStreamEndCapture(stream, &g));
    return Graph(g);
  }
};

class GraphExec : public detail::UniqueHandle<cudaGraphExec_t, cudaGraphExecDestroy> {
 public:
  GraphExec() = default;
  explicit GraphExec(const Graph& g) : UniqueHandle(instantiate(g)) {}
  void launch(cudaStream_t s) const { TRIAUDIT_CUDA(cudaGraphLaunch(get(), s)); }

 private:
  static cudaGraphExec_t instantiate(const Graph& g) {
    cudaGraphExec_t e = nullptr;
    TRIAUDIT_CUDA(cudaGraphInstantiate(&e, g.get(), 0ULL));
    return e;
  }
};

// The GPUs this process has put work on besides the current one (a p2p case drives two, a
// single-process allreduce several). The harness waits on and checks these only: touching any
// other GPU would create a context there (memory taken from whoever uses it; an error under
// EXCLUSIVE_PROCESS compute mode).
inline std::set<int>& devices_in_use() {
  static std::set<int> devices;
  return devices;
}

// Makes `device` current for a scope (and notes it in use); the previous device comes back.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    TRIAUDIT_CUDA(cudaGetDevice(&previous_));
    TRIAUDIT_CUDA(cudaSetDevice(device));
    devices_in_use().insert(device);
  }
  ~DeviceGuard() { (void)cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace triaudit
