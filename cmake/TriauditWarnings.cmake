# Warnings for triaudit's own targets only (never for fetched dependencies).
function(triaudit_warnings target)
  set(cxx_flags -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  set(cuda_flags -Xcompiler=-Wall,-Wextra)
  if(TRIAUDIT_WERROR)
    list(APPEND cxx_flags -Werror)
    list(APPEND cuda_flags -Werror=all-warnings -Xcompiler=-Werror)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:${cuda_flags}>)
endfunction()
