#include "commbench/topology/topology_json.hpp"

#include <concepts>
#include <nlohmann/json.hpp>
#include <type_traits>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/topology/pci_path.hpp"
#include "commbench/topology/topology_fields.hpp"
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

NodeTopology topology_as_written(const NodeTopology& node, const std::string& where) {
  return topology_from_json_text(topology_to_json_text(node), where);
}

}  // namespace commbench
