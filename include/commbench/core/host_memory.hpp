// How much host memory can still be had, so an impossible --max-bytes is refused before
// the sweep instead of the kernel's OOM killer ending the job half-way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace commbench {

// MemAvailable from a meminfo-formatted file, in bytes; nullopt when unreadable.
std::optional<std::uint64_t> available_host_memory(const std::string& meminfo_path = "/proc/meminfo");

// Throws UsageError "<what> of <bytes> does not fit in the <available> of host memory
// available" when `bytes` exceeds MemAvailable (nothing when it cannot be read). `what`
// starts with the flag that asked for the memory, e.g. "-b/--bytes: a host buffer".
void require_host_memory(std::uint64_t bytes, const std::string& what,
                         const std::string& meminfo_path = "/proc/meminfo");

}  // namespace commbench
