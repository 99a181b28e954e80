// Reading a tree shaped like /sys, the same way for every sysfs source: the live /sys
// (where drivers refuse some reads on purpose) and the offline --sysfs-root a user sends.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

std::string trimmed(std::string_view text);

// The attribute's text, trimmed; nullopt when it is absent or the driver refuses the read
// (EINVAL, ENODATA, EOPNOTSUPP: sysfs's way of saying "unknown", e.g. `speed` of a link
// that is down). UsageError naming the path when it exists but is not a readable file
// (a directory, permission denied).
std::optional<std::string> read_sysfs_attribute(const std::filesystem::path& path);

// The entries of a directory, sorted; empty when it does not exist. UsageError naming the
// directory when it exists but cannot be listed: silently skipping it would report "no
// NICs" or "no ports" for a tree the program could not read.
std::vector<std::filesystem::path> list_sysfs_directory(const std::filesystem::path& directory);

}  // namespace commbench
