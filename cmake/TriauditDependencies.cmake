# Third-party dependencies. Installed packages first; a fetch only where none is installed.
# Machines without network (the GPU check machine) pass a local source tree instead:
#   -DFETCHCONTENT_SOURCE_DIR_BENCHMARK=/path/to/benchmark -DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=/path
include(FetchContent)

find_package(CUDAToolkit REQUIRED)   # CUDA::cudart, CUDA::cublas, CUDA::cublasLt
if(NOT TARGET CUDA::cublasLt OR NOT TARGET CUDA::cublas)
  include(TriauditCublasWheel)
endif()
find_package(Threads REQUIRED)

find_package(NCCL QUIET)
if(NCCL_FOUND)
  message(STATUS "NCCL ${NCCL_VERSION}: ${NCCL_LIBRARY} (triaudit_allreduce can be built)")
else()
  message(STATUS "NCCL not found: triaudit_allreduce will not be built (set NCCL_ROOT to point at it)")
endif()

find_package(MPI COMPONENTS CXX QUIET)
if(NCCL_FOUND AND MPI_CXX_FOUND)
  message(STATUS "MPI ${MPI_CXX_VERSION}: triaudit_allreduce_mpi will be built (one rank per GPU)")
elseif(NCCL_FOUND)
  message(STATUS "MPI not found: triaudit_allreduce_mpi will not be built (apt-get install libopenmpi-dev)")
endif()

find_package(benchmark 1.7 QUIET)
if(benchmark_FOUND)
  message(STATUS "Google Benchmark ${benchmark_VERSION}: installed package")
else()
  message(STATUS "Google Benchmark: none installed, fetching v1.9.1 (or FETCHCONTENT_SOURCE_DIR_BENCHMARK)")
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_WERROR OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(benchmark
    URL https://github.com/google/benchmark/archive/refs/tags/v1.9.1.tar.gz)
  FetchContent_MakeAvailable(benchmark)
endif()

# SkipWithMessage (Google Benchmark >= 1.8) reports a skip as a skip; older versions only have
# SkipWithError, and triaudit's messages then start with "skipped:" so readers can tell.
if(benchmark_FOUND)
  find_path(TRIAUDIT_BENCHMARK_INCLUDE_DIR benchmark/benchmark.h
            HINTS "${benchmark_DIR}/../../../include" "${benchmark_DIR}/../../../../include")
else()
  set(TRIAUDIT_BENCHMARK_INCLUDE_DIR "${benchmark_SOURCE_DIR}/include")
endif()
set(TRIAUDIT_HAVE_SKIP_WITH_MESSAGE 0)
if(EXISTS "${TRIAUDIT_BENCHMARK_INCLUDE_DIR}/benchmark/benchmark.h")
  file(STRINGS "${TRIAUDIT_BENCHMARK_INCLUDE_DIR}/benchmark/benchmark.h" _skip_msg REGEX "void SkipWithMessage")
  if(_skip_msg)
    set(TRIAUDIT_HAVE_SKIP_WITH_MESSAGE 1)
  endif()
endif()

if(TRIAUDIT_BUILD_TESTS)
  find_package(GTest QUIET)
  if(GTest_FOUND)
    message(STATUS "GoogleTest: installed package")
  else()
    message(STATUS "GoogleTest: none installed, fetching v1.15.2 (or FETCHCONTENT_SOURCE_DIR_GOOGLETEST)")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    FetchContent_Declare(googletest
      URL https://github.com/google/googletest/archive/refs/tags/v1.15.2.tar.gz)
    FetchContent_MakeAvailable(googletest)
    if(NOT TARGET GTest::gtest)
      add_library(GTest::gtest ALIAS gtest)
    endif()
    if(NOT TARGET GTest::gtest_main)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  endif()
endif()
