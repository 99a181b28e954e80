#include "commbench/core/host_memory.hpp"

#include <fstream>
#include <sstream>

namespace commbench {

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

}  // namespace commbench
