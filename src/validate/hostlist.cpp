#include "commbench/validate/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace commbench {
namespace {

// "node07" → prefix "node", digits "07". A name without trailing digits has none.
struct SplitName {
  std::string prefix;
  std::string digits;
};

SplitName split_name(const std::string& host) {
  std::size_t start = host.size();
  while (start > 0 && host[start - 1] >= '0' && host[start - 1] <= '9') --start;
  // Slurm reads at most 18 digits as a number; longer runs stay plain names.
  if (host.size() - start > 18) start = host.size();
  return {host.substr(0, start), host.substr(start)};
}

// Ranges of consecutive numbers, each written at the names' digit width.
std::string ranges_text(const std::set<std::uint64_t>& numbers, std::size_t width) {
  std::string text;
  const auto padded = [&](std::uint64_t number) { return fmt::format("{:0{}}", number, width); };
  for (auto it = numbers.begin(); it != numbers.end();) {
    const std::uint64_t first = *it;
    std::uint64_t last = first;
    for (++it; it != numbers.end() && *it == last + 1; ++it) last = *it;
    if (!text.empty()) text += ',';
    text += padded(first);
    if (last != first) text += '-' + padded(last);
  }
  return text;
}

}  // namespace

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  // Names fold together only when prefix and digit width agree: node7 and node07 are
  // different hosts, and "node[7,07]" is not valid hostlist syntax.
  std::map<std::tuple<std::string, std::size_t>, std::set<std::uint64_t>> numbered;
  std::set<std::string> plain;
  for (const std::string& host : hosts) {
    if (host.empty()) continue;
    const SplitName split = split_name(host);
    if (split.digits.empty())
      plain.insert(host);
    else
      numbered[{split.prefix, split.digits.size()}].insert(std::stoull(split.digits));
  }
  std::vector<std::string> parts(plain.begin(), plain.end());
  for (const auto& [key, numbers] : numbered) {
    const auto& [prefix, width] = key;
    if (numbers.size() == 1)
      parts.push_back(prefix + fmt::format("{:0{}}", *numbers.begin(), width));
    else
      parts.push_back(prefix + "[" + ranges_text(numbers, width) + "]");
  }
  std::sort(parts.begin(), parts.end());
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ",") + part;
  return text;
}

}  // namespace commbench
