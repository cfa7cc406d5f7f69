// Lets a function be compiled for both the host (g++, for references and tests) and the device.
#pragma once
#if defined(__CUDACC__)
#define TRIAUDIT_HD __host__ __device__
#else
#define TRIAUDIT_HD
#endif
// Unroll in the device pass only: the host compiler would warn about an unknown pragma.
#if defined(__CUDA_ARCH__)
#define TRIAUDIT_UNROLL _Pragma("unroll")
#else
#define TRIAUDIT_UNROLL
#endif
