// How much host memory can still be had, so an impossible --max-bytes is refused before
// the sweep instead of the kernel's OOM killer ending the job half-way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace commbench {

// /proc/meminfo, or for tests the file COMMBENCH_DEBUG_MEMINFO names (a node with less
// memory than the machine running the test).
std::string meminfo_path_for_this_process();

// MemAvailable from a meminfo-formatted file, in bytes; nullopt when unreadable.
std::optional<std::uint64_t> available_host_memory(const std::string& meminfo_path = meminfo_path_for_this_process());

// Throws UsageError "<what> of <bytes> does not fit in the <available> of host memory
// available" when `bytes` exceeds MemAvailable (nothing when it cannot be read). `what`
// starts with the flag that asked for the memory, e.g. "-b/--bytes: a host buffer".
void require_host_memory(std::uint64_t bytes, const std::string& what,
                         const std::string& meminfo_path = meminfo_path_for_this_process());

}  // namespace commbench
