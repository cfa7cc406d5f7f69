# triaudit_python_package_dir(<module> <out_var>): the folder of an installed Python package
# (e.g. nvidia.nccl from the PyPI wheel nvidia-nccl-cu13), or "" when python3 or the package is
# missing. PyTorch images carry NCCL and cuBLAS this way, sometimes only this way.
function(triaudit_python_package_dir module out_var)
  set(_dir "")
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import ${module} as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      set(_dir "")
    endif()
  endif()
  set(${out_var} "${_dir}" PARENT_SCOPE)
endfunction()
