#include "commbench/topology/hwloc_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "commbench/config.hpp"
#include "commbench/core/error.hpp"
#include "commbench/topology/ibverbs_probe.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/nvlink_parts.hpp"
#include "commbench/topology/xml_document.hpp"
#include "hwloc_xml_values.hpp"

#if COMMBENCH_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace commbench {

int nvlink_generation_from_model(const std::string& model) {
  struct Family {
    const char* marker;
    int generation;
  };
  // Order matters: "GH200" before "H200", "GB200" before "B200".
  static const Family families[] = {{"P100", 1},  {"V100", 2}, {"A100", 3}, {"A800", 3}, {"GH200", 4},
                                    {"H100", 4},  {"H200", 4}, {"H800", 4}, {"H20", 4},  {"GB200", 5},
                                    {"GB300", 5}, {"B100", 5}, {"B200", 5}, {"B300", 5}};
  for (const Family& family : families) {
    if (model.find(family.marker) != std::string::npos) return family.generation;
  }
  return 0;
}

#if !COMMBENCH_HAVE_HWLOC

bool hwloc_available() { return false; }

NodeTopology probe_hwloc(const std::string& xml_path) {
  if (!xml_path.empty()) {
    throw UsageError("--hwloc-xml " + xml_path + ": this build has no hwloc (configure with COMMBENCH_WITH_HWLOC=ON)");
  }
  NodeTopology node;
  node.unknowns.push_back("PCI tree, NUMA and CPU affinity unknown: built without hwloc (COMMBENCH_WITH_HWLOC=OFF)");
  return node;
}

#else

bool hwloc_available() { return true; }

namespace {

class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&topology_) != 0) throw BackendError("hwloc: cannot initialise a topology");
  }
  ~Topology() { hwloc_topology_destroy(topology_); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_{};
};

std::vector<int> bitmap_to_list(hwloc_const_bitmap_t bitmap) {
  std::vector<int> ids;
  if (bitmap == nullptr || hwloc_bitmap_iszero(bitmap)) return ids;
  // An infinite bitmap (a "full" set) has no last index; there is nothing finite to list.
  if (hwloc_bitmap_last(bitmap) < 0) return ids;
  for (int id = hwloc_bitmap_first(bitmap); id >= 0; id = hwloc_bitmap_next(bitmap, id)) ids.push_back(id);
  return ids;
}

std::string bus_id_of(const hwloc_obj_t object) {
  const auto& pci = object->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
}

bool is_host_bridge(hwloc_obj_t object) {
  return object->type == HWLOC_OBJ_BRIDGE && object->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

// Walks the I/O children depth first so every parent gets its index before its children.
class TreeBuilder {
 public:
  TreeBuilder(NodeTopology& node, std::string where) : node_(node), where_(std::move(where)) {}

  void visit_locality(hwloc_obj_t locality) {
    const std::vector<int> numa_nodes = bitmap_to_list(locality->nodeset);
    const int numa = numa_nodes.size() == 1 ? numa_nodes.front() : -1;
    const std::vector<int> cpus = bitmap_to_list(locality->cpuset);
    for (hwloc_obj_t child = locality->io_first_child; child != nullptr; child = child->next_sibling) {
      visit_io(child, -1, numa, cpus);
    }
    for (hwloc_obj_t child = locality->first_child; child != nullptr; child = child->next_sibling) {
      visit_locality(child);
    }
  }

  std::map<hwloc_obj_t, int> index_of;
  std::map<int, std::vector<int> > cpus_of;  // locality CPUs of each PCI object

 private:
  void visit_io(hwloc_obj_t object, int parent, int numa, const std::vector<int>& cpus) {
    int index = parent;
    if (object->type == HWLOC_OBJ_BRIDGE || object->type == HWLOC_OBJ_PCI_DEVICE) {
      PciObject pci;
      pci.parent = parent;
      pci.numa = numa;
      if (is_host_bridge(object)) {
        pci.kind = PciKind::host_bridge;
      } else {
        pci.kind = object->type == HWLOC_OBJ_BRIDGE ? PciKind::bridge : PciKind::device;
        const auto& attr = object->attr->pcidev;
        pci.bus_id = bus_id_of(object);
        pci.class_code = attr.class_id;
        pci.vendor = attr.vendor_id;
        pci.device_id = attr.device_id;
        pci.link_gbps = attr.linkspeed > 0 ? std::round(static_cast<double>(attr.linkspeed) * 1000.0) / 1000.0 : 0;
      }
      if (object->subtype != nullptr) pci.subtype = object->subtype;
      index = static_cast<int>(node_.pci.size());
      node_.pci.push_back(pci);
      index_of[object] = index;
      cpus_of[index] = cpus;
    }
    for (hwloc_obj_t child = object->io_first_child; child != nullptr; child = child->next_sibling) {
      visit_io(child, index, numa, cpus);
    }
  }

  NodeTopology& node_;
  std::string where_;
};

bool is_nvidia_gpu(const PciObject& pci) {
  return pci.kind == PciKind::device && pci.vendor == 0x10de && (pci.class_code >> 8) == 0x03;
}

bool is_nvswitch(const PciObject& pci) {
  return pci.subtype == "NVSwitch" || (pci.vendor == 0x10de && pci.class_code == 0x0680);
}

hwloc_obj_t pci_parent_of(hwloc_obj_t object) {
  while (object != nullptr && object->type == HWLOC_OBJ_OS_DEVICE) object = object->parent;
  return object;
}

const char* info_of(hwloc_obj_t object, const char* name) { return hwloc_obj_get_info_by_name(object, name); }

// The port number N of an info named "Port<N>State"; none for any other info.
std::optional<int> state_info_port(std::string_view name) {
  constexpr std::string_view prefix = "Port", suffix = "State";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return std::nullopt;
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  int port = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (error != std::errc{} || end != digits.data() + digits.size() || port < 1) return std::nullopt;
  return port;
}

// The link layer a network device shows for its port: IPoIB interfaces have 20-byte
// hardware addresses (queue pair and GID), Ethernet ones 6. Empty when neither.
std::string link_layer_of_address(const char* address) {
  if (address == nullptr) return "";
  const std::string_view text = address;
  const std::size_t bytes = static_cast<std::size_t>(std::count(text.begin(), text.end(), ':')) + 1;
  if (text.size() != bytes * 3 - 1) return "";
  return bytes == 20 ? "InfiniBand" : bytes == 6 ? "Ethernet" : "";
}

// hwloc's Linux backend copies each port's state into the OpenFabrics device's infos
// ("Port1State" = 4 for ACTIVE) and names the port of each network device ("Port").
// It records no rate and no physical state: those stay unknown.
std::vector<NicPort> ports_of(hwloc_obj_t openfabrics, const std::vector<hwloc_obj_t>& network_devices) {
  std::vector<NicPort> ports;
  for (unsigned i = 0; i < openfabrics->infos_count; ++i) {
    const hwloc_info_s& info = openfabrics->infos[i];
    const std::optional<int> number = state_info_port(info.name);
    if (!number || info.value == nullptr) continue;
    NicPort port;
    port.port = *number;
    unsigned code = 0;
    const std::string_view value = info.value;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), code);
    if (error == std::errc{} && end == value.data() + value.size()) {
      port.state = ib_port_state_name(code);
      port.state_code = port.state.empty() ? 0 : static_cast<int>(code);
    }
    for (const hwloc_obj_t network : network_devices) {
      const char* network_port = info_of(network, "Port");
      if (network_port != nullptr && std::to_string(port.port) == network_port)
        port.link_layer = link_layer_of_address(info_of(network, "Address"));
    }
    ports.push_back(std::move(port));
  }
  std::sort(ports.begin(), ports.end(), [](const NicPort& a, const NicPort& b) { return a.port < b.port; });
  return ports;
}

// A GPU whose NVLinks hwloc could not record: only its NVML backend adds the
// NVLinkBandwidth matrix, and a topology without it says nothing about NVLink.
void mark_unrecorded_nvlinks(NodeTopology& node) {
  for (Gpu& gpu : node.gpus) {
    const PciObject& pci = node.pci[static_cast<std::size_t>(gpu.pci)];
    if (is_nvlink_part(pci.vendor, pci.device_id, gpu.model)) gpu.nvlinks_unrecorded = true;
  }
}

void add_gpus_and_nics(NodeTopology& node, const TreeBuilder& tree, const std::string& where) {
  std::vector<Gpu> gpus;
  std::map<std::string, Nic> nics;
  for (const auto& [object, index] : tree.index_of) {
    const PciObject& pci = node.pci[static_cast<std::size_t>(index)];
    if (is_nvidia_gpu(pci)) {
      Gpu gpu;
      gpu.pci = index;
      gpu.bus_id = pci.bus_id;
      gpu.numa = pci.numa;
      gpu.cpus = tree.cpus_of.at(index);
      gpu.source = "hwloc";
      for (hwloc_obj_t os = object->io_first_child; os != nullptr; os = os->next_sibling) {
        if (const char* model = hwloc_obj_get_info_by_name(os, "GPUModel")) gpu.model = model;
      }
      if (gpu.model.empty()) gpu.model = fmt::format("NVIDIA [10de:{:04x}]", pci.device_id);
      gpus.push_back(gpu);
    } else if (pci.kind == PciKind::device) {
      // An OpenFabrics OS device makes it an RDMA NIC, whatever its class: older
      // ConnectX cards report 0x0c06 (InfiniBand controller) rather than 0x0207.
      hwloc_obj_t openfabrics = nullptr;
      std::vector<hwloc_obj_t> network_devices;
      std::vector<std::string> netdevs;
      for (hwloc_obj_t os = object->io_first_child; os != nullptr; os = os->next_sibling) {
        if (os->type != HWLOC_OBJ_OS_DEVICE || os->name == nullptr) continue;
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) openfabrics = os;
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
          network_devices.push_back(os);
          netdevs.emplace_back(os->name);
        }
      }
      // Plain Ethernet NICs without RDMA are not what NCCL uses; sysfs lists them separately.
      if (openfabrics == nullptr) continue;
      Nic nic;
      nic.name = openfabrics->name;
      nic.ports = ports_of(openfabrics, network_devices);
      nic.pci = index;
      nic.bus_id = pci.bus_id;
      nic.numa = pci.numa;
      nic.cpus = tree.cpus_of.at(index);
      nic.netdevs = netdevs;
      nic.source = "hwloc";
      nics[nic.name] = nic;
    }
  }
  std::sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) { return a.bus_id < b.bus_id; });
  for (std::size_t i = 1; i < gpus.size(); ++i) {
    if (gpus[i].bus_id == gpus[i - 1].bus_id) throw UsageError(where + ": GPU " + gpus[i].bus_id + " listed twice");
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    gpus[i].index = static_cast<int>(i);
    gpus[i].nvlink_generation = nvlink_generation_from_model(gpus[i].model);
  }
  node.gpus = std::move(gpus);
  for (auto& [name, nic] : nics) node.nics.push_back(std::move(nic));
}

// hwloc's x86 backend puts CPUID's vendor, family and model into each Package's infos and
// the architecture into the root's; the first Package stands for all (NCCL assumes alike).
CpuType cpu_type_of(hwloc_topology_t topology) {
  CpuType type;
  if (const char* architecture = info_of(hwloc_get_root_obj(topology), "Architecture"))
    type.architecture = architecture;
  const hwloc_obj_t package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, nullptr);
  if (package == nullptr) return type;
  if (const char* vendor = info_of(package, "CPUVendor")) type.vendor = vendor;
  const auto number = [&](const char* name) {
    const std::string_view text = info_of(package, name) ? info_of(package, name) : "";
    int value = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size() && value >= 0 ? value : -1;
  };
  type.family = number("CPUFamilyNumber");
  type.model = number("CPUModelNumber");
  return type;
}

// What wrote the export: hwloc puts its version and the program into the root's infos
// (since hwloc 2.0); the library reading it is named too, as it decides what is kept.
std::string writer_of(hwloc_topology_t topology) {
  const hwloc_obj_t root = hwloc_get_root_obj(topology);
  const char* version = info_of(root, "hwlocVersion");
  const char* program = info_of(root, "ProcessName");
  std::string text = "written by ";
  if (program != nullptr) text += std::string(program) + " of ";
  text +=
      version != nullptr ? std::string("hwloc ") + version : std::string("an hwloc that did not record its version");
  return text + ", read with hwloc " + HWLOC_VERSION;
}

// hwloc's NVML backend records, per pair of objects, NVLink bandwidth in MB/s: GPU to GPU,
// GPU to NVSwitch (a PCI device) or GPU to CPU (POWER). Each link of a generation carries
// the spec rate, so the link count is the bandwidth divided by it.
// False when the topology has no such matrix: hwloc then knows nothing about NVLink.
bool add_nvlinks(hwloc_topology_t topology, NodeTopology& node, const TreeBuilder& tree) {
  unsigned count = 1;
  hwloc_distances_s* distances = nullptr;
  if (hwloc_distances_get_by_name(topology, "NVLinkBandwidth", &count, &distances, 0) != 0 || count == 0) return false;
  auto gpu_of = [&](hwloc_obj_t object) -> int {
    const hwloc_obj_t pci = pci_parent_of(object);
    const auto found = tree.index_of.find(pci);
    if (found == tree.index_of.end()) return -1;
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
      if (node.gpus[g].pci == found->second) return static_cast<int>(g);
    }
    return -1;
  };
  const unsigned n = distances->nbobjs;
  for (unsigned row = 0; row < n; ++row) {
    const int gpu = gpu_of(distances->objs[row]);
    if (gpu < 0) continue;
    const Gpu& source = node.gpus[static_cast<std::size_t>(gpu)];
    const double per_link = nvlink_link_bandwidth_gbps(source.nvlink_generation).value_or(25.0);
    for (unsigned column = 0; column < n; ++column) {
      const std::uint64_t mbps = distances->values[row * n + column];
      if (row == column || mbps == 0) continue;
      hwloc_obj_t peer = distances->objs[column];
      NvlinkGroup group;
      group.gpu = source.index;
      group.gbps_per_link = per_link;
      group.links = static_cast<int>(std::lround(static_cast<double>(mbps) / (per_link * 1000.0)));
      if (group.links == 0) group.links = 1;
      const int peer_gpu = gpu_of(peer);
      const hwloc_obj_t peer_pci = pci_parent_of(peer);
      if (peer_gpu >= 0) {
        group.peer = NvlinkPeer::gpu;
        group.remote_bus_id = node.gpus[static_cast<std::size_t>(peer_gpu)].bus_id;
      } else if (peer_pci != nullptr && peer_pci->type == HWLOC_OBJ_PCI_DEVICE) {
        group.remote_bus_id = bus_id_of(peer_pci);
        const auto found = tree.index_of.find(peer_pci);
        const bool nvswitch =
            found != tree.index_of.end() && is_nvswitch(node.pci[static_cast<std::size_t>(found->second)]);
        group.peer = nvswitch ? NvlinkPeer::nvswitch : NvlinkPeer::unknown;
      } else {
        group.peer = NvlinkPeer::cpu;  // POWER: NVLink to a Package or NUMA node
      }
      node.nvlinks.push_back(group);
    }
  }
  hwloc_distances_release(topology, distances);
  return true;
}

std::string host_name_of(hwloc_topology_t topology, const std::string& xml_path) {
  const hwloc_obj_t root = hwloc_get_root_obj(topology);
  if (const char* name = hwloc_obj_get_info_by_name(root, "HostName")) return name;
  if (!xml_path.empty()) return "";  // an export without a HostName: the caller names it
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) return name;
  return "localhost";
}

}  // namespace

NodeTopology probe_hwloc(const std::string& xml_path) {
  const std::string where = xml_path.empty() ? std::string("hwloc") : xml_path;
  if (!xml_path.empty()) {
    // hwloc's own XML errors are silent or multi-line; reading the document first gives a
    // one-line error with the line number for anything malformed or truncated.
    const XmlElement root = read_xml_file(xml_path);
    if (root.name != "topology") {
      throw UsageError(fmt::format("{}:{}: not an hwloc topology (root element <{}>, expected <topology>)", xml_path,
                                   root.line, root.name));
    }
    check_hwloc_values(root, xml_path);
  }
  Topology topology;
  hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (!xml_path.empty() && hwloc_topology_set_xml(topology.get(), xml_path.c_str()) != 0) {
    throw UsageError(xml_path + ": hwloc cannot read this file as a topology");
  }
  if (hwloc_topology_load(topology.get()) != 0) {
    if (!xml_path.empty()) throw UsageError(xml_path + ": hwloc cannot load this topology (not an hwloc 2.x export?)");
    throw BackendError("hwloc: cannot discover this machine's topology");
  }
  NodeTopology node;
  node.hostname = host_name_of(topology.get(), xml_path);
  // HWLOC_VERSION is the library the build compiled against; the runtime only reports
  // its API version, which lags (2.9 has API 2.8).
  node.sources.push_back(xml_path.empty() ? std::string("hwloc ") + HWLOC_VERSION + " (this machine)"
                                          : "hwloc XML " + xml_path + " (" + writer_of(topology.get()) + ")");

  for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, nullptr); numa != nullptr;
       numa = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, numa)) {
    node.numa_nodes.push_back({static_cast<int>(numa->os_index), bitmap_to_list(numa->cpuset)});
  }
  node.cpu_type = cpu_type_of(topology.get());
  TreeBuilder tree(node, where);
  tree.visit_locality(hwloc_get_root_obj(topology.get()));
  if (node.pci.empty()) {
    node.unknowns.push_back(xml_path.empty() ? "PCI tree unknown: hwloc found no PCI devices on this machine"
                                             : "PCI tree unknown: " + xml_path + " has no PCI objects");
  }
  add_gpus_and_nics(node, tree, where);
  if (!add_nvlinks(topology.get(), node, tree)) mark_unrecorded_nvlinks(node);
  return node;
}

#endif

}  // namespace commbench
