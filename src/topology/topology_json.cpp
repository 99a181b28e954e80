#include "commbench/topology/topology_json.hpp"

#include <concepts>
#include <nlohmann/json.hpp>
#include <type_traits>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/topology/pci_path.hpp"
#include "commbench/topology/topology_matrix.hpp"

namespace commbench {
namespace {

using nlohmann::json;

const char* kind_name(PciKind kind) {
  switch (kind) {
    case PciKind::host_bridge: return "host_bridge";
    case PciKind::bridge: return "bridge";
    case PciKind::device: return "device";
  }
  return "device";
}

PciKind parse_kind(const std::string& text) {
  if (text == "host_bridge") return PciKind::host_bridge;
  if (text == "bridge") return PciKind::bridge;
  return PciKind::device;
}

const char* peer_name(NvlinkPeer peer) {
  switch (peer) {
    case NvlinkPeer::gpu: return "gpu";
    case NvlinkPeer::nvswitch: return "nvswitch";
    case NvlinkPeer::cpu: return "cpu";
    case NvlinkPeer::unknown: break;
  }
  return "unknown";
}

NvlinkPeer parse_peer(const std::string& text) {
  if (text == "gpu") return NvlinkPeer::gpu;
  if (text == "nvswitch") return NvlinkPeer::nvswitch;
  if (text == "cpu") return NvlinkPeer::cpu;
  return NvlinkPeer::unknown;
}

const char* capability_name(Capability c) {
  return c == Capability::yes ? "yes" : c == Capability::no ? "no" : "unknown";
}

Capability parse_capability(const std::string& text) {
  return text == "yes" ? Capability::yes : text == "no" ? Capability::no : Capability::unknown;
}

const char* detail_name(PciTreeDetail detail) {
  return detail == PciTreeDetail::switches_only ? "switches_only" : "every_bridge";
}

PciTreeDetail parse_detail(const std::string& text) {
  return text == "switches_only" ? PciTreeDetail::switches_only : PciTreeDetail::every_bridge;
}

// Every field of the model is named once, here: writing and reading both walk these
// lists, so the two can never disagree. `v(name, member)` is a stored field;
// `v.derived(name, value)` is written for readers of the file and ignored when reading.
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NumaNode>
void fields(Self& n, Visit& v) {
  v("os_index", n.os_index);
  v.derived("cpus", [&] { return format_cpu_list(n.cpus); });
  v("cpu_list", n.cpus);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, PciObject>
void fields(Self& p, Visit& v) {
  v("kind", p.kind);
  v("parent", p.parent);
  v("numa", p.numa);
  v("bus_id", p.bus_id);
  v("class", p.class_code);
  v("vendor", p.vendor);
  v("device", p.device_id);
  v("subtype", p.subtype);
  v("link_gbps", p.link_gbps);
  v("link_generation", p.link_generation);
  v("link_width", p.link_width);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, Gpu>
void fields(Self& g, Visit& v) {
  v("index", g.index);
  v("pci", g.pci);
  v("bus_id", g.bus_id);
  v("model", g.model);
  v("numa", g.numa);
  v("cpu_list", g.cpus);
  v("sm", g.sm);
  v("nvlink_generation", g.nvlink_generation);
  v("pcie_generation_current", g.pcie_generation_current);
  v("pcie_generation_max", g.pcie_generation_max);
  v("pcie_width_current", g.pcie_width_current);
  v("pcie_width_max", g.pcie_width_max);
  v("source", g.source);
  v("nvlinks_unrecorded", g.nvlinks_unrecorded);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NvlinkGroup>
void fields(Self& g, Visit& v) {
  v("gpu", g.gpu);
  v("remote_bus_id", g.remote_bus_id);
  v("peer", g.peer);
  v("links", g.links);
  v("gbps_per_link", g.gbps_per_link);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, P2pStatus>
void fields(Self& p, Visit& v) {
  v("gpu_a", p.gpu_a);
  v("gpu_b", p.gpu_b);
  v("read", p.read);
  v("write", p.write);
  v("atomics", p.atomics);
  v("nvlink", p.nvlink);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NicPort>
void fields(Self& p, Visit& v) {
  v("port", p.port);
  v("state_code", p.state_code);
  v("state", p.state);
  v("physical_state", p.physical_state);
  v("link_layer", p.link_layer);
  v("rate_gbit", p.rate_gbit);
  v("lanes", p.lanes);
  v("speed", p.speed);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, Nic>
void fields(Self& n, Visit& v) {
  v("name", n.name);
  v("pci", n.pci);
  v("bus_id", n.bus_id);
  v("numa", n.numa);
  v("cpu_list", n.cpus);
  v("netdevs", n.netdevs);
  v("ports", n.ports);
  v("source", n.source);
  v("rdma", n.rdma);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, CpuType>
void fields(Self& c, Visit& v) {
  v("architecture", c.architecture);
  v("vendor", c.vendor);
  v("family", c.family);
  v("model", c.model);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NodeTopology>
void fields(Self& node, Visit& v) {
  v("hostname", node.hostname);
  v("sources", node.sources);
  v("unknowns", node.unknowns);
  v("pci_detail", node.pci_detail);
  v("cpu_type", node.cpu_type);
  v("numa_nodes", node.numa_nodes);
  v("pci", node.pci);
  v("gpus", node.gpus);
  v("nvlinks", node.nvlinks);
  v("p2p", node.p2p);
  v("nics", node.nics);
  v.derived("matrix", [&] { return matrix_entries(node); });
}

struct Writer {
  json out = json::object();

  template <typename T>
  void operator()(const char* name, const T& value) {
    out[name] = encode(value);
  }
  template <typename Make>
  void derived(const char* name, Make make) {
    out[name] = make();
  }

  template <typename T>
  static json encode(const T& value) {
    if constexpr (std::is_same_v<T, PciKind>) {
      return kind_name(value);
    } else if constexpr (std::is_same_v<T, NvlinkPeer>) {
      return peer_name(value);
    } else if constexpr (std::is_same_v<T, Capability>) {
      return capability_name(value);
    } else if constexpr (std::is_same_v<T, PciTreeDetail>) {
      return detail_name(value);
    } else if constexpr (requires(Writer & w) { fields(value, w); }) {
      Writer nested;
      fields(value, nested);
      return nested.out;
    } else if constexpr (requires { value.begin(); } && !std::is_same_v<T, std::string>) {
      json array = json::array();
      for (const auto& item : value) array.push_back(encode(item));
      return array;
    } else {
      return value;
    }
  }
};

struct Reader {
  const json* in = nullptr;

  template <typename T>
  void operator()(const char* name, T& value) {
    decode(in->at(name), value);
  }
  template <typename Make>
  void derived(const char*, Make) {}

  template <typename T>
  static void decode(const json& j, T& value) {
    if constexpr (std::is_same_v<T, PciKind>) {
      value = parse_kind(j.get<std::string>());
    } else if constexpr (std::is_same_v<T, NvlinkPeer>) {
      value = parse_peer(j.get<std::string>());
    } else if constexpr (std::is_same_v<T, Capability>) {
      value = parse_capability(j.get<std::string>());
    } else if constexpr (std::is_same_v<T, PciTreeDetail>) {
      value = parse_detail(j.get<std::string>());
    } else if constexpr (requires(Reader & r) { fields(value, r); }) {
      Reader nested{&j};
      fields(value, nested);
    } else if constexpr (requires { value.push_back(value.front()); } && !std::is_same_v<T, std::string>) {
      value.clear();
      // get_ref throws unless it is an array: nlohmann would iterate null, a scalar or
      // an object's values as if they were one.
      for (const json& item : j.get_ref<const json::array_t&>()) {
        typename T::value_type element{};
        decode(item, element);
        value.push_back(std::move(element));
      }
    } else {
      value = j.get<T>();
    }
  }
};

// Indexes into the PCI tree must point backwards (parents) or into it (devices): the
// path code walks them without further checks.
void check_pci_indexes(const NodeTopology& node, const std::string& where) {
  const int size = static_cast<int>(node.pci.size());
  for (int i = 0; i < size; ++i) {
    const int parent = node.pci[static_cast<std::size_t>(i)].parent;
    if (parent < -1 || parent >= i)
      throw UsageError(fmt::format("{}: PCI object {} has a parent that does not precede it", where, i));
  }
  const auto check = [&](int pci) {
    if (pci < -1 || pci >= size) throw UsageError(where + ": PCI index out of range");
  };
  for (const Gpu& gpu : node.gpus) check(gpu.pci);
  for (const Nic& nic : node.nics) check(nic.pci);
}

}  // namespace

std::string topology_to_json_text(const NodeTopology& node) {
  Writer writer;
  fields(node, writer);
  // Names come from files and hosts the user controls; bytes that are not UTF-8 become
  // U+FFFD instead of making the document unwritable.
  return writer.out.dump(-1, ' ', false, json::error_handler_t::replace);
}

NodeTopology topology_from_json_text(const std::string& text, const std::string& where) {
  try {
    const json in = json::parse(text);
    NodeTopology node;
    Reader::decode(in, node);
    check_pci_indexes(node, where);
    return node;
  } catch (const json::exception& e) {
    throw UsageError(where + ": not a commbench topology model (" + e.what() + ")");
  }
}

}  // namespace commbench
