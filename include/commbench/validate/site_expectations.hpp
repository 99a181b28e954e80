// A site's expected values for bench-validate --expect FILE: the figures a healthy node or
// pair of this cluster reaches (taken from a known-good run's JSON), and the topology facts
// every node must have, by node_facts()' keys ("GPU count = 8", "GPU 0 PCIe link = Gen5
// x16"). docs/validate.md lists the keys.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commbench {

// One fact of a node by node_facts()' key ("GPU 0 PCIe link" = "Gen5 x16"); the
// job converts the topology's node facts to these, so this layer needs no topology.
struct NamedValue {
  std::string key;
  std::string value;
};

struct SiteExpectations {
  std::optional<double> pair_gbps, intra_busbw_gbps, group_busbw_gbps;
  std::vector<NamedValue> facts;  // in file order
};

// "KEY = VALUE" lines; '#' starts a comment. UsageError "LABEL:LINE: ..." for a line
// without '=', an empty key or value, a figure that is not a positive number, or a key
// given twice.
SiteExpectations parse_site_expectations(const std::string& text, const std::string& label);

// Each expected fact the node lacks or has with another value: "gpus is 4, expected 8".
std::vector<std::string> unmet_facts(const std::vector<NamedValue>& node, const std::vector<NamedValue>& expected);

}  // namespace commbench
