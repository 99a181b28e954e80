#include "commbench/validate/site_expectations.hpp"

#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

std::string trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// The keys node_facts() gives (node_comparison.cpp): GPU count, GPU i model, GPU i PCIe
// link, GPU i NVLinks, RDMA NIC count, <nic> port <n>. Another key is a typo, which would
// otherwise be a fact no node has.
bool is_fact_key(const std::string& key) {
  if (key == "GPU count" || key == "RDMA NIC count") return true;
  if (key.rfind("GPU ", 0) == 0) {
    const std::size_t space = key.find(' ', 4);
    if (space == std::string::npos || !all_digits(key.substr(4, space - 4))) return false;
    const std::string what = key.substr(space + 1);
    return what == "model" || what == "PCIe link" || what == "NVLinks";
  }
  const std::size_t port = key.find(" port ");
  return port != std::string::npos && port > 0 && key.find(' ') == port && all_digits(key.substr(port + 6));
}

}  // namespace

SiteExpectations parse_site_expectations(const std::string& text, const std::string& label) {
  SiteExpectations expectations;
  std::istringstream lines(text);
  std::string line;
  std::set<std::string> seen;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string content = trimmed(line.substr(0, line.find('#')));
    if (content.empty()) continue;
    const auto fail = [&](const std::string& why) { throw UsageError(fmt::format("{}:{}: {}", label, number, why)); };
    const std::size_t equals = content.find('=');
    if (equals == std::string::npos) fail(fmt::format("expected KEY = VALUE, got '{}'", excerpt(content)));
    const std::string key = trimmed(content.substr(0, equals)), value = trimmed(content.substr(equals + 1));
    if (key.empty() || value.empty()) fail(fmt::format("expected KEY = VALUE, got '{}'", excerpt(content)));
    if (!seen.insert(key).second) fail(fmt::format("'{}' is given twice", excerpt(key)));
    std::optional<double>* figure = key == "pair_gbps"          ? &expectations.pair_gbps
                                    : key == "intra_busbw_gbps" ? &expectations.intra_busbw_gbps
                                    : key == "group_busbw_gbps" ? &expectations.group_busbw_gbps
                                                                : nullptr;
    if (figure == nullptr) {
      if (!is_fact_key(key))
        fail(
            fmt::format("'{}' is neither a figure (pair_gbps, intra_busbw_gbps, group_busbw_gbps) nor a node fact "
                        "(GPU count, GPU i model, GPU i PCIe link, GPU i NVLinks, RDMA NIC count, NIC port n)",
                        excerpt(key)));
      expectations.facts.push_back({key, value});
      continue;
    }
    char* end = nullptr;
    const double parsed = std::strtod(value.c_str(), &end);
    if (*end != '\0' || !(parsed > 0) || parsed > 1e6)
      fail(fmt::format("{}: '{}' is not a positive GB/s figure", key, excerpt(value)));
    *figure = parsed;
  }
  return expectations;
}

std::vector<std::string> unmet_facts(const std::vector<NamedValue>& node, const std::vector<NamedValue>& expected) {
  std::vector<std::string> unmet;
  for (const NamedValue& want : expected) {
    const NamedValue* have = nullptr;
    for (const NamedValue& fact : node)
      if (fact.key == want.key) have = &fact;
    if (have == nullptr)
      unmet.push_back(fmt::format("{} is absent, expected {}", want.key, want.value));
    else if (have->value != want.value)
      unmet.push_back(fmt::format("{} is {}, expected {}", want.key, have->value, want.value));
  }
  return unmet;
}

}  // namespace commbench
