# cuBLAS / cuBLASLt from the PyPI wheel (site-packages/nvidia/cublas/{include,lib}) when the CUDA
# toolkit has none: a PyTorch image may carry nvcc and the cuBLAS wheel without the toolkit's
# cuBLAS. Defines CUDA::cublas and CUDA::cublasLt as the toolkit would; a clear error otherwise.
include(${CMAKE_CURRENT_LIST_DIR}/TriauditPythonPackageDir.cmake)
triaudit_python_package_dir(nvidia.cublas _cublas_wheel)
if(_cublas_wheel)
  find_path(TRIAUDIT_CUBLAS_INCLUDE_DIR cublasLt.h PATHS "${_cublas_wheel}/include" NO_DEFAULT_PATH)
  find_library(TRIAUDIT_CUBLAS_LIBRARY NAMES cublas libcublas.so.13 libcublas.so.12 NAMES_PER_DIR
               PATHS "${_cublas_wheel}/lib" NO_DEFAULT_PATH)
  find_library(TRIAUDIT_CUBLASLT_LIBRARY NAMES cublasLt libcublasLt.so.13 libcublasLt.so.12 NAMES_PER_DIR
               PATHS "${_cublas_wheel}/lib" NO_DEFAULT_PATH)
endif()
if(NOT (TRIAUDIT_CUBLAS_INCLUDE_DIR AND TRIAUDIT_CUBLAS_LIBRARY AND TRIAUDIT_CUBLASLT_LIBRARY))
  message(FATAL_ERROR "cuBLAS/cuBLASLt not found: neither the CUDA toolkit (${CUDAToolkit_LIBRARY_DIR}) nor a "
                      "PyPI wheel (python3 -c 'import nvidia.cublas') has them; install the toolkit's cuBLAS")
endif()
foreach(_lib cublas cublasLt)
  string(TOUPPER ${_lib} _up)
  add_library(CUDA::${_lib} SHARED IMPORTED)
  set_target_properties(CUDA::${_lib} PROPERTIES
    IMPORTED_LOCATION "${TRIAUDIT_${_up}_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${TRIAUDIT_CUBLAS_INCLUDE_DIR}")
endforeach()
set_property(TARGET CUDA::cublas APPEND PROPERTY INTERFACE_LINK_LIBRARIES CUDA::cublasLt)
message(STATUS "cuBLAS from the PyPI wheel: ${TRIAUDIT_CUBLASLT_LIBRARY}")
