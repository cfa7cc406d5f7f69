# FindNCCL: locates NCCL's header and library (NCCL_ROOT, the CUDA toolkit, the system, or the
# PyPI wheel nvidia-nccl-cu* that PyTorch images carry: site-packages/nvidia/nccl/{include,lib},
# whose library is only libnccl.so.2). Provides NCCL_FOUND, NCCL_VERSION and NCCL::NCCL.
include(${CMAKE_CURRENT_LIST_DIR}/TriauditPythonPackageDir.cmake)
triaudit_python_package_dir(nvidia.nccl _nccl_wheel)
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATHS ${_nccl_wheel}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
  PATHS ${_nccl_wheel}
  PATH_SUFFIXES lib lib64)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${part} +([0-9]+)" _m "${_nccl_ver}")
    set(_nccl_${part} "${CMAKE_MATCH_1}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::NCCL)
  # SHARED when it is a shared object (also the wheel's libnccl.so.2): the build RUNPATH carries
  # its folder, so the executables find a site-packages NCCL at run time (checked with a
  # wheel-shaped tree: NEEDED libnccl.so.2, RUNPATH .../nvidia/nccl/lib).
  if(NCCL_LIBRARY MATCHES "\\.so(\\.[0-9]+)*$")
    add_library(NCCL::NCCL SHARED IMPORTED)
  else()
    add_library(NCCL::NCCL UNKNOWN IMPORTED)
  endif()
  set_target_properties(NCCL::NCCL PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
