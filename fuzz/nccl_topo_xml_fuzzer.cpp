#include <string>

#include "commbench/topology/nccl_topo_xml.hpp"
#include "fuzz_support.hpp"

namespace {

bool valid_index(int index, std::size_t size) { return index >= 0 && static_cast<std::size_t>(index) < size; }

// Cross-references in the model must hold for anything the loader accepts: consumers
// index pci[] with them without checking.
void check(const commbench::NodeTopology& topo) {
  for (std::size_t i = 0; i < topo.pci.size(); ++i) {
    const int parent = topo.pci[i].parent;
    if (parent != -1 && !(parent >= 0 && static_cast<std::size_t>(parent) < i)) std::abort();
    if (topo.pci[i].bus_id.empty()) std::abort();
  }
  for (std::size_t i = 0; i < topo.gpus.size(); ++i) {
    const commbench::Gpu& gpu = topo.gpus[i];
    if (i > 0 && topo.gpus[i - 1].index >= gpu.index) std::abort();  // sorted, unique
    if (!valid_index(gpu.pci, topo.pci.size())) std::abort();
    if (topo.pci[static_cast<std::size_t>(gpu.pci)].bus_id != gpu.bus_id) std::abort();
  }
  for (const commbench::NvlinkGroup& group : topo.nvlinks) {
    bool found = false;
    for (const commbench::Gpu& gpu : topo.gpus) found = found || gpu.index == group.gpu;
    if (!found || group.links < 1 || group.links > 1024) std::abort();
  }
  for (const commbench::Nic& nic : topo.nics) {
    if (nic.name.empty() || nic.ports.size() != 1) std::abort();
    if (nic.pci != -1 &&
        (!valid_index(nic.pci, topo.pci.size()) || topo.pci[static_cast<std::size_t>(nic.pci)].bus_id != nic.bus_id))
      std::abort();
  }
  for (std::size_t i = 1; i < topo.numa_nodes.size(); ++i)
    if (topo.numa_nodes[i - 1].os_index >= topo.numa_nodes[i].os_index) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] {
    const commbench::NodeTopology topo =
        commbench::nccl_topo_from_xml(commbench::parse_xml(text, "fuzz.xml"), "fuzz.xml");
    check(topo);
  });
  return 0;
}
