#include "commbench/core/host_memory.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "commbench/core/error.hpp"
#include "commbench/core/size.hpp"

namespace commbench {

std::string meminfo_path_for_this_process() {
  const char* debug = std::getenv("COMMBENCH_DEBUG_MEMINFO");
  return debug != nullptr && *debug != '\0' ? debug : "/proc/meminfo";
}

std::optional<std::uint64_t> available_host_memory(const std::string& meminfo_path) {
  std::ifstream in(meminfo_path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    std::uint64_t value = 0;
    if (!(fields >> key >> value)) continue;
    fields >> unit;
    if (key == "MemAvailable:") return unit == "kB" ? value * 1024 : value;
  }
  return std::nullopt;
}

void require_host_memory(std::uint64_t bytes, const std::string& what, const std::string& meminfo_path) {
  const std::optional<std::uint64_t> available = available_host_memory(meminfo_path);
  if (available && bytes > *available)
    throw UsageError(what + " of " + format_size(bytes) + " does not fit in the " + format_size(*available) +
                     " of host memory available");
}

}  // namespace commbench
