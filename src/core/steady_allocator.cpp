#include "commbench/core/steady_allocator.hpp"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace commbench {

std::string configure_allocator_from_environment() {
  const char* choice = std::getenv("COMMBENCH_MALLOC");
  if (choice != nullptr && std::strcmp(choice, "default") == 0) return "default";
#if defined(__GLIBC__)
  // Never shrink the heap on free (trimming is what returns a temporary's pages), and
  // serve large blocks from the heap rather than from mmap (an mmap'ed block is unmapped
  // on free, whatever the trim threshold).
  const bool trimming_off = mallopt(M_TRIM_THRESHOLD, -1) == 1;
  const bool mmap_off = mallopt(M_MMAP_MAX, 0) == 1;
  if (trimming_off && mmap_off) return "steady";
  return "default (glibc refused the settings)";
#else
  return "default (not glibc)";
#endif
}

}  // namespace commbench
