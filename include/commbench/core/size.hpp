// Byte sizes as users type them (binary K/M/G/T suffixes, like nccl-tests) and as the
// reports print them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

// Parses "8", "64K", "1M", "2G", "1T", with an optional "B" or "iB" ("64KiB", "4MB").
// Suffixes are binary (1K = 1024). Throws UsageError naming `flag` for empty, negative,
// zero, fractional, unparseable or overflowing values.
std::uint64_t parse_size(std::string_view text, std::string_view flag);

// "8B", "1KiB", "64MiB", "1.5GiB": exact for powers of two, one decimal otherwise.
std::string format_size(std::uint64_t bytes);

// format_size of each, except where two different sizes would read alike ("2.8MiB" for
// 2949120 and 2960000 bytes; "1.0MiB" beside "1MiB"): those are written in whole bytes
// ("2949120B"), so that rows a table keeps apart do not look like one size twice.
std::vector<std::string> format_sizes_apart(const std::vector<std::uint64_t>& sizes);

}  // namespace commbench
