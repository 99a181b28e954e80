// Files users hand to a command (topology XML, baselines, threshold rules), read whole
// with the same errors everywhere.
#pragma once

#include <cstddef>
#include <string>

namespace commbench {

inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;

// Reads all of `path`. Errors are UsageErrors starting with `label` (the path itself, or
// "--baseline PATH"): "LABEL: cannot read (REASON)", "LABEL: cannot read (is a
// directory)", "LABEL: empty file", "LABEL: larger than 64 MiB". The limit is checked
// while reading, so a pipe or /proc file that reports no size is bounded too.
std::string read_input_file(const std::string& path, const std::string& label);

}  // namespace commbench
