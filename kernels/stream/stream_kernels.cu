#include <cstdint>

#include "common/grid_stride.cuh"
#include "stream_kernels.cuh"

namespace triaudit::kernels {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int width = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int width = 2;
};

__device__ inline float4 vscale(float s, float4 v) { return {s * v.x, s * v.y, s * v.z, s * v.w}; }
__device__ inline double2 vscale(double s, double2 v) { return {s * v.x, s * v.y}; }
__device__ inline float4 vadd(float4 a, float4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
__device__ inline double2 vadd(double2 a, double2 b) { return {a.x + b.x, a.y + b.y}; }
__device__ inline float4 vfma(float s, float4 c, float4 b) {
  return {fmaf(s, c.x, b.x), fmaf(s, c.y, b.y), fmaf(s, c.z, b.z), fmaf(s, c.w, b.w)};
}
__device__ inline double2 vfma(double s, double2 c, double2 b) { return {fma(s, c.x, b.x), fma(s, c.y, b.y)}; }
__device__ inline float vdot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
__device__ inline double vdot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }

template <typename V>
struct Two {
  V x, y;
};

// Elementwise ops. VEC selects the 16-byte path for the first n/width*width elements; the
// remaining elements (or all of them on the scalar path) go element by element.
template <typename T, bool VEC>
__global__ void copy_kernel(const T* __restrict__ a, T* __restrict__ c, std::size_t n) {
  using V = typename Vec16<T>::type;
  std::size_t done = 0;
  if (VEC) {
    const V* av = reinterpret_cast<const V*>(a);
    V* cv = reinterpret_cast<V*>(c);
    const std::size_t nv = n / Vec16<T>::width;
    grid_stride(nv, [&](std::size_t i) { return av[i]; }, [&](std::size_t i, V x) { cv[i] = x; });
    done = nv * Vec16<T>::width;
  }
  for (std::size_t i = done + grid_thread_index(); i < n; i += grid_thread_count()) c[i] = a[i];
}

template <typename T, bool VEC>
__global__ void scale_kernel(T* __restrict__ b, const T* __restrict__ c, T s, std::size_t n) {
  using V = typename Vec16<T>::type;
  std::size_t done = 0;
  if (VEC) {
    const V* cv = reinterpret_cast<const V*>(c);
    V* bv = reinterpret_cast<V*>(b);
    const std::size_t nv = n / Vec16<T>::width;
    grid_stride(nv, [&](std::size_t i) { return cv[i]; }, [&](std::size_t i, V x) { bv[i] = vscale(s, x); });
    done = nv * Vec16<T>::width;
  }
  for (std::size_t i = done + grid_thread_index(); i < n; i += grid_thread_count()) b[i] = s * c[i];
}

template <typename T, bool VEC>
__global__ void add_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, std::size_t n) {
  using V = typename Vec16<T>::type;
  std::size_t done = 0;
  if (VEC) {
    const V* av = reinterpret_cast<const V*>(a);
    const V* bv = reinterpret_cast<const V*>(b);
    V* cv = reinterpret_cast<V*>(c);
    const std::size_t nv = n / Vec16<T>::width;
    grid_stride(
        nv, [&](std::size_t i) { return Two<V>{av[i], bv[i]}; },
        [&](std::size_t i, Two<V> x) { cv[i] = vadd(x.x, x.y); });
    done = nv * Vec16<T>::width;
  }
  for (std::size_t i = done + grid_thread_index(); i < n; i += grid_thread_count()) c[i] = a[i] + b[i];
}

// Triad uses an explicit fused multiply-add: the host reference does the same (std::fma), so
// the expected value is exact rather than "within an ulp, depending on contraction".
template <typename T, bool VEC>
__global__ void triad_kernel(T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c, T s, std::size_t n) {
  using V = typename Vec16<T>::type;
  std::size_t done = 0;
  if (VEC) {
    const V* bv = reinterpret_cast<const V*>(b);
    const V* cv = reinterpret_cast<const V*>(c);
    V* av = reinterpret_cast<V*>(a);
    const std::size_t nv = n / Vec16<T>::width;
    grid_stride(
        nv, [&](std::size_t i) { return Two<V>{bv[i], cv[i]}; },
        [&](std::size_t i, Two<V> x) { av[i] = vfma(s, x.y, x.x); });
    done = nv * Vec16<T>::width;
  }
  for (std::size_t i = done + grid_thread_index(); i < n; i += grid_thread_count()) a[i] = fma(s, c[i], b[i]);
}

template <typename T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[kThreads / 32];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : T(0);
  if (warp == 0)
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;  // valid in thread 0
}

template <typename T, bool VEC>
__global__ void dot_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ partial, std::size_t n) {
  using V = typename Vec16<T>::type;
  T sum = 0;
  std::size_t done = 0;
  if (VEC) {
    const std::size_t nv = n / Vec16<T>::width;
    const V* av = reinterpret_cast<const V*>(a);
    const V* bv = reinterpret_cast<const V*>(b);
    grid_stride(
        nv, [&](std::size_t i) { return Two<V>{av[i], bv[i]}; }, [&](std::size_t, Two<V> x) { sum += vdot(x.x, x.y); });
    done = nv * Vec16<T>::width;
  }
  for (std::size_t i = done + grid_thread_index(); i < n; i += grid_thread_count()) sum += a[i] * b[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

template <typename T>
__global__ void fold_partials_kernel(const T* __restrict__ partial, unsigned count, T* __restrict__ result) {
  T sum = 0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += partial[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *result = sum;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <typename T, bool VEC>
void run(StreamOp op, const StreamArrays& x, std::size_t n, StreamLaunch l, cudaStream_t s) {
  T* a = static_cast<T*>(x.a);
  T* b = static_cast<T*>(x.b);
  T* c = static_cast<T*>(x.c);
  const T scalar = static_cast<T>(kStreamScalar);
  switch (op) {
    case StreamOp::Copy:
      copy_kernel<T, VEC><<<l.blocks, l.threads, 0, s>>>(a, c, n);
      break;
    case StreamOp::Scale:
      scale_kernel<T, VEC><<<l.blocks, l.threads, 0, s>>>(b, c, scalar, n);
      break;
    case StreamOp::Add:
      add_kernel<T, VEC><<<l.blocks, l.threads, 0, s>>>(a, b, c, n);
      break;
    case StreamOp::Triad:
      triad_kernel<T, VEC><<<l.blocks, l.threads, 0, s>>>(a, b, c, scalar, n);
      break;
    case StreamOp::Dot:
      dot_kernel<T, VEC><<<l.blocks, kThreads, 0, s>>>(a, b, static_cast<T*>(x.partial), n);
      fold_partials_kernel<T>
          <<<1, kThreads, 0, s>>>(static_cast<const T*>(x.partial), l.blocks, static_cast<T*>(x.result));
      break;
  }
}

template <typename T>
int resident_blocks_per_sm(StreamOp op) {
  int blocks = 0;
  cudaError_t e = cudaSuccess;
  switch (op) {
    case StreamOp::Copy:
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_kernel<T, true>, kThreads, 0);
      break;
    case StreamOp::Scale:
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel<T, true>, kThreads, 0);
      break;
    case StreamOp::Add:
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_kernel<T, true>, kThreads, 0);
      break;
    case StreamOp::Triad:
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, triad_kernel<T, true>, kThreads, 0);
      break;
    case StreamOp::Dot:
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, dot_kernel<T, true>, kThreads, 0);
      break;
  }
  return (e == cudaSuccess && blocks > 0) ? blocks : 1;
}

}  // namespace

template <typename T>
StreamLaunch stream_launch(StreamOp op) {
  int dev = 0, sms = 1;
  (void)cudaGetDevice(&dev);
  (void)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return {static_cast<unsigned>(sms * resident_blocks_per_sm<T>(op)), kThreads};
}

template <typename T>
void stream_run(StreamOp op, const StreamArrays& x, std::size_t n, StreamLaunch l, cudaStream_t s) {
  if (aligned16(x.a) && aligned16(x.b) && aligned16(x.c))
    run<T, true>(op, x, n, l, s);
  else
    run<T, false>(op, x, n, l, s);
}

template StreamLaunch stream_launch<float>(StreamOp);
template StreamLaunch stream_launch<double>(StreamOp);
template void stream_run<float>(StreamOp, const StreamArrays&, std::size_t, StreamLaunch, cudaStream_t);
template void stream_run<double>(StreamOp, const StreamArrays&, std::size_t, StreamLaunch, cudaStream_t);

}  // namespace triaudit::kernels
