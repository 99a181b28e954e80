// How much host memory can still be had, so an impossible --max-bytes is refused before
// the sweep instead of the kernel's OOM killer ending the job half-way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace commbench {

// MemAvailable from a meminfo-formatted file, in bytes; nullopt when unreadable.
std::optional<std::uint64_t> available_host_memory(const std::string& meminfo_path = "/proc/meminfo");

}  // namespace commbench
