# Run at build time (cmake -P) so the commit in every result file is the one that was
# built, not the one that was checked out when CMake last configured. The output is
# rewritten only when the commit changes, so unchanged trees do not relink.
#   -DSOURCE_DIR=<repo> -DOUTPUT=<file.cpp>
execute_process(
  COMMAND git describe --always --dirty --abbrev=12
  WORKING_DIRECTORY "${SOURCE_DIR}"
  OUTPUT_VARIABLE commit
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
endif()
set(content "// Generated at build time by cmake/WriteGitCommit.cmake.\n#include \"commbench/core/build_info.hpp\"\n\nconst char* commbench::git_commit() { return \"${commit}\"; }\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" previous)
endif()
if(NOT previous STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
