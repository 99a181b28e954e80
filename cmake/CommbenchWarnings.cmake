# The warnings of commbench's own targets. With COMMBENCH_WERROR=ON (scripts/test.sh, CI)
# they are errors, so a build stays free of them. Only C++ sources get the flags: nvcc
# reads its own options, and third-party headers come in as system headers, whose
# warnings the compilers do not report.
option(COMMBENCH_WERROR "Treat warnings in commbench's own C++ sources as errors" OFF)

# commbench_warnings(<target> [PEDANTIC])
function(commbench_warnings target)
  cmake_parse_arguments(_warn "PEDANTIC" "" "" ${ARGN})
  set(_flags -Wall -Wextra)
  if(_warn_PEDANTIC)
    list(APPEND _flags -Wpedantic)
  endif()
  if(COMMBENCH_WERROR)
    list(APPEND _flags -Werror)
    # GCC 12 reports -Wrestrict inside std::string's operator+ at -O3 where nothing
    # overlaps (GCC bug 105329): said, not fatal. Every other warning stays an error.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      list(APPEND _flags -Wno-error=restrict)
    endif()
  endif()
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${_flags}>")
endfunction()
