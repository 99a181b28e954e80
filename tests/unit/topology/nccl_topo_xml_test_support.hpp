// What the tests of the NCCL topology dump reader share: the fixtures' folder, a dump read
// from text, the message it is refused with, and a minimal dump around a <cpu>'s contents.
#pragma once

#include <string>
#include <vector>

#include "commbench/topology/nccl_topo_xml.hpp"
#include "commbench/topology/xml_document.hpp"
#include "usage_error.hpp"

namespace commbench::nccl_topo_test {

inline const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl";

inline NodeTopology from_text(const std::string& text) { return nccl_topo_from_xml(parse_xml(text, "x.xml"), "x.xml"); }

inline std::string load_error(const std::string& text) {
  return testing::usage_error_of([&] { from_text(text); });
}

// A minimal valid dump around `inner`, which starts on line 3 inside a <cpu>.
inline std::string in_cpu(const std::string& inner) {
  return "<system version=\"1\">\n"
         "  <cpu numaid=\"0\" affinity=\"0000000f\">\n" +
         inner +
         "  </cpu>\n"
         "</system>\n";
}

inline std::vector<int> range(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

}  // namespace commbench::nccl_topo_test
