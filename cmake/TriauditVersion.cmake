# Suite version and git commit, baked into every executable's JSON context.
# The commit is read at configure time; `scripts/main.sh` and the run manifest record it again
# at run time, so a stale configure cannot mislabel a run silently.
find_package(Git QUIET)
set(TRIAUDIT_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0)
    set(TRIAUDIT_GIT_COMMIT "${_commit}")
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                    OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_dirty)
      string(APPEND TRIAUDIT_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
# cuBLAS version from the headers the suite is compiled against.
set(TRIAUDIT_CUBLAS_VERSION "unknown")
foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
  if(EXISTS "${dir}/cublas_api.h")
    file(STRINGS "${dir}/cublas_api.h" _cb REGEX "^#define CUBLAS_VER_(MAJOR|MINOR|PATCH) +[0-9]+")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "CUBLAS_VER_${part} +([0-9]+)" _m "${_cb}")
      set(_cb_${part} "${CMAKE_MATCH_1}")
    endforeach()
    set(TRIAUDIT_CUBLAS_VERSION "${_cb_MAJOR}.${_cb_MINOR}.${_cb_PATCH}")
    break()
  endif()
endforeach()
if(NCCL_FOUND)
  set(TRIAUDIT_NCCL_VERSION_TEXT "${NCCL_VERSION} (headers built against)")
else()
  set(TRIAUDIT_NCCL_VERSION_TEXT "not built (NCCL not found at configure time)")
endif()
configure_file(${CMAKE_SOURCE_DIR}/benchmarks/common/version.cpp.in
               ${CMAKE_BINARY_DIR}/generated/version.cpp @ONLY)
