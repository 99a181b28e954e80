#include "commbench/topology/nccl_topo_xml.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/pci_bus_id.hpp"
#include "commbench/topology/link_spec.hpp"

namespace commbench {
namespace {

constexpr const char* kSource = "nccl-topo-xml";
// The XML parser already refuses deeper documents; this guards trees built in code.
constexpr int kMaxPciDepth = 256;
// 4096 groups of 32 bits is 131072 CPUs, far beyond any kernel's NR_CPUS; a longer mask
// is garbage, and decoding it would only multiply memory by the number of GPUs.
constexpr std::size_t kMaxAffinityGroups = 4096;
// NVLink counts per GPU are at most 18 today; anything near this is not a real dump,
// and capping it keeps the sum of repeated targets far from integer overflow.
constexpr int kMaxNvlinks = 1024;
// Every GPU, NIC and NUMA node gets its own copy of its CPU list; a long mask repeated
// on many devices could otherwise turn a few megabytes of XML into gigabytes of memory.
// Real nodes need thousands of entries, not millions.
constexpr std::size_t kMaxCpuEntries = std::size_t{1} << 24;
// What NCCL writes as the NVLink target when the remote end is not visible (in a VM).
constexpr std::string_view kInvisibleNvlinkTarget = "fffffff:ffff:ff";

std::string shown(std::string_view text) { return excerpt(text); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Digits only (after an optional '-'), no spaces or '+', within int range.
std::optional<int> parse_decimal(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string_view digits = text.substr(negative ? 1 : 0);
  if (digits.empty()) return std::nullopt;
  long long value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > INT_MAX) return std::nullopt;
  }
  return static_cast<int>(negative ? -value : value);
}

// "0x" followed by 1..max_digits hex digits (sysfs writes "0x10de").
std::optional<unsigned> parse_hex(std::string_view text, std::size_t min_digits, std::size_t max_digits) {
  if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
  const std::string_view digits = text.substr(2);
  if (digits.size() < min_digits || digits.size() > max_digits) return std::nullopt;
  unsigned value = 0;
  for (const char c : digits) {
    const int v = hex_value(c);
    if (v < 0) return std::nullopt;
    value = value * 16 + static_cast<unsigned>(v);
  }
  return value;
}

// The NVLink generation a compute capability comes with (Pascal P100 NVLink 1, Volta and
// Turing 2, Ampere and Ada 3, Hopper 4, Blackwell 5).
int nvlink_generation_for_sm(int sm) {
  switch (sm) {
    case 60: return 1;
    case 70:
    case 75: return 2;
    case 80:
    case 86:
    case 87:
    case 89: return 3;
    case 90: return 4;
    case 100:
    case 103: return 5;
    default: return 0;
  }
}

struct Locality {
  int numa = -1;
  std::vector<int> cpus;
};

class Loader {
 public:
  explicit Loader(const std::string& where) : where_(where) {}

  NodeTopology load(const XmlElement& root) {
    if (root.name != "system")
      fail(root, "root element is <" + shown(root.name) + ">, expected <system> (not an NCCL topology dump?)");
    // NCCL writes version 1, RCCL 2; the layout is the same, so any version is read.
    std::string writer = "NCCL topology dump";
    if (const std::string* version = root.attribute("version"))
      writer +=
          fmt::format(", format version {}", integer(root, "version", *version, 0, INT_MAX, "a non-negative integer"));
    topo_.pci_detail = PciTreeDetail::switches_only;
    for (const XmlElement& child : root.children)
      if (wanted(root, child)) cpu(child);

    std::sort(topo_.gpus.begin(), topo_.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
    std::stable_sort(topo_.nvlinks.begin(), topo_.nvlinks.end(),
                     [](const NvlinkGroup& a, const NvlinkGroup& b) { return a.gpu < b.gpu; });
    std::sort(topo_.numa_nodes.begin(), topo_.numa_nodes.end(),
              [](const NumaNode& a, const NumaNode& b) { return a.os_index < b.os_index; });
    // The dump names no NCCL release, only the format NCCL wrote it in.
    topo_.sources.push_back(std::string(kSource) + " " + where_ + " (" + writer + ")");
    const std::string prefix = std::string(kSource) + " " + where_ + ": ";
    topo_.unknowns.push_back(prefix +
                             "the dump records no NIC port state: a listed port is taken as ACTIVE, since NCCL "
                             "lists only the ports it found usable; physical state and link layer unknown");
    topo_.unknowns.push_back(prefix + "no GPU P2P status and no GPU model names");
    topo_.unknowns.push_back(prefix +
                             "NCCL leaves host bridges and root ports out of the dump: whether two devices "
                             "under one CPU share a host bridge (PHB) or not (NODE) is unknown, shown ?");
    return std::move(topo_);
  }

 private:
  const std::string& where_;
  NodeTopology topo_;
  // First line each identity was seen on, to name both places when one is listed twice.
  std::map<int, int> numa_lines_;
  std::unordered_map<std::string, int> pci_lines_;
  std::map<int, int> gpu_dev_lines_;
  std::unordered_map<std::string, int> gpu_bus_lines_;
  std::unordered_map<std::string, int> nic_lines_;
  std::size_t cpu_entries_ = 0;

  [[noreturn]] void fail(const XmlElement& element, const std::string& what) const {
    throw UsageError(fmt::format("{}:{}: {}", where_, element.line, what));
  }

  [[noreturn]] void bad_value(const XmlElement& element, std::string_view name, const std::string& value,
                              const std::string& expected) const {
    fail(element, "<" + element.name + "> " + std::string(name) + "=\"" + shown(value) + "\": expected " + expected);
  }

  const std::string& required(const XmlElement& element, std::string_view name) const {
    const std::string* value = element.attribute(name);
    if (!value) fail(element, "<" + element.name + "> has no " + std::string(name) + " attribute");
    return *value;
  }

  int integer(const XmlElement& element, std::string_view name, const std::string& value, int min, int max,
              const std::string& expected) const {
    const auto parsed = parse_decimal(value);
    if (!parsed || *parsed < min || *parsed > max) bad_value(element, name, value, expected);
    return *parsed;
  }

  void check_duplicate(std::map<int, int>& lines, int key, const XmlElement& element, const std::string& what) const {
    const auto [it, inserted] = lines.emplace(key, element.line);
    if (!inserted) fail(element, fmt::format("{} listed twice (lines {} and {})", what, it->second, element.line));
  }
  void check_duplicate(std::unordered_map<std::string, int>& lines, const std::string& key, const XmlElement& element,
                       const std::string& what) const {
    const auto [it, inserted] = lines.emplace(key, element.line);
    if (!inserted) fail(element, fmt::format("{} listed twice (lines {} and {})", what, it->second, element.line));
  }

  // Whether `child` of `parent` is to be read. Unknown elements are skipped whole (NCCL
  // itself ignores what it does not know, and newer versions add elements); a known
  // element somewhere NCCL never writes it is refused.
  // A <gpu> must sit in a <pci>: its bus id and PCIe link are that element's, and NCCL
  // always writes it there. A <nic> may also sit directly in a <cpu>: NCCL puts virtual
  // NICs without a PCI device there, and they load with no bus id (Nic::pci -1).
  bool wanted(const XmlElement& parent, const XmlElement& child) const {
    static const std::map<std::string_view, std::pair<std::vector<std::string_view>, std::string_view>> kPlaces{
        {"system", {{}, "only as the root"}},
        {"cpu", {{"system"}, "only inside <system>"}},
        {"pci", {{"cpu", "pci"}, "only inside <cpu> or <pci>"}},
        {"gpu", {{"pci"}, "only inside <pci>"}},
        {"nvlink", {{"gpu"}, "only inside <gpu>"}},
        {"nic", {{"pci", "cpu"}, "only inside <pci> or <cpu>"}},
        {"net", {{"nic"}, "only inside <nic>"}},
    };
    const auto place = kPlaces.find(child.name);
    if (place == kPlaces.end()) return false;
    const auto& [parents, explanation] = place->second;
    if (std::find(parents.begin(), parents.end(), parent.name) == parents.end())
      fail(child, "<" + child.name + "> inside <" + shown(parent.name) + ">: NCCL writes <" + child.name + "> " +
                      std::string(explanation));
    return true;
  }

  // A copy of the locality's CPU list for one more object, within the overall budget.
  std::vector<int> cpus_for(const XmlElement& element, const Locality& locality) {
    cpu_entries_ += locality.cpus.size();
    if (cpu_entries_ > kMaxCpuEntries)
      fail(element,
           fmt::format("more than {} CPU entries over all devices (affinity masks too long or too many devices)",
                       kMaxCpuEntries));
    return locality.cpus;
  }

  // sysfs cpumap format: 32-bit hex groups separated by commas, most significant first.
  std::vector<int> affinity(const XmlElement& element, const std::string& mask) const {
    std::vector<int> cpus;
    if (mask.empty()) return cpus;
    const std::string expected = "a CPU mask of comma-separated 32-bit hex groups (e.g. 00000000,0000ffff)";
    std::vector<std::string_view> groups;
    std::string_view rest = mask;
    while (true) {
      const std::size_t comma = rest.find(',');
      groups.push_back(rest.substr(0, comma));
      if (groups.size() > kMaxAffinityGroups) bad_value(element, "affinity", mask, expected);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    int base = 0;
    for (auto group = groups.rbegin(); group != groups.rend(); ++group, base += 32) {
      const auto bits = parse_hex("0x" + std::string(*group), 1, 8);
      if (!bits) bad_value(element, "affinity", mask, expected);
      for (int bit = 0; bit < 32; ++bit)
        if ((*bits >> bit) & 1u) cpus.push_back(base + bit);
    }
    return cpus;
  }

  // The 24-bit class code: "0x" and 6 hex digits as sysfs writes it. NCCL writes just the
  // base class ("0x03", "0x02") for devices it found no sysfs entry for (containers, VMs);
  // that is read as subclass 0.
  unsigned pci_class(const XmlElement& element, std::string_view name, const std::string& text,
                     const std::string& context) const {
    std::optional<unsigned> value = text.size() == 8 ? parse_hex(text, 6, 6) : std::nullopt;
    if (!value && text.size() == 4) {
      value = parse_hex(text, 2, 2);
      if (value) *value <<= 16;
    }
    if (!value) bad_value(element, name, text, "0x and 6 hex digits (e.g. 0x030200)");
    if (!known_pci_base_class(*value >> 16)) fail(element, "unknown PCI class " + shown(text) + context);
    return *value;
  }

  void cpu(const XmlElement& element) {
    Locality locality;
    locality.numa =
        integer(element, "numaid", required(element, "numaid"), -1, INT_MAX, "a NUMA node number (-1 when unknown)");
    if (const std::string* mask = element.attribute("affinity")) locality.cpus = affinity(element, *mask);
    cpu_type(element);
    if (locality.numa >= 0) {
      check_duplicate(numa_lines_, locality.numa, element, fmt::format("<cpu> numaid {}", locality.numa));
      topo_.numa_nodes.push_back(NumaNode{locality.numa, cpus_for(element, locality)});
    } else {
      topo_.unknowns.push_back(
          fmt::format("{} {}: <cpu> at line {} has numaid -1: the NUMA node of the devices under it is unknown",
                      kSource, where_, element.line));
    }
    for (const XmlElement& child : element.children) {
      if (!wanted(element, child)) continue;
      if (child.name == "pci")
        pci(child, locality, -1, 1);
      else
        nic(child, locality, -1);
    }
  }

  // NCCL writes arch, vendor, familyid and modelid on every <cpu> and assumes all CPUs of a
  // node alike; so does the model, taking the first <cpu> that names them. Every <cpu> is
  // checked, so a bad number is refused wherever it stands.
  void cpu_type(const XmlElement& element) {
    CpuType type;
    if (const std::string* arch = element.attribute("arch")) type.architecture = *arch;
    if (const std::string* vendor = element.attribute("vendor")) type.vendor = *vendor;
    if (const std::string* family = element.attribute("familyid"))
      type.family = integer(element, "familyid", *family, 0, INT_MAX, "a CPUID family number");
    if (const std::string* model = element.attribute("modelid"))
      type.model = integer(element, "modelid", *model, 0, INT_MAX, "a CPUID model number");
    if (topo_.cpu_type.architecture.empty() && topo_.cpu_type.vendor.empty()) topo_.cpu_type = type;
  }

  void pci(const XmlElement& element, const Locality& locality, int parent, int depth) {
    if (depth > kMaxPciDepth) fail(element, fmt::format("<pci> nested deeper than {} levels", kMaxPciDepth));
    const std::string& bus_text = required(element, "busid");
    const auto bus_id = canonical_pci_bus_id(bus_text, PciBusIdSyntax::full);
    if (!bus_id) bad_value(element, "busid", bus_text, "a PCI bus id such as 0000:18:00.0");
    check_duplicate(pci_lines_, *bus_id, element, "PCI bus id " + *bus_id);

    PciObject object;
    object.parent = parent;
    object.numa = locality.numa;
    object.bus_id = *bus_id;
    if (const std::string* text = element.attribute("class")) {
      const unsigned code = pci_class(element, "class", *text, "");
      object.class_code = code >> 8;
      object.kind = object.class_code == 0x0604 ? PciKind::bridge : PciKind::device;
      if (code == 0x068000) object.subtype = "NVSwitch";  // the class NCCL itself reads as NVSwitch
    } else {
      // Without a class, nesting is the only hint: only bridges have PCI children.
      const bool has_pci_child = std::any_of(element.children.begin(), element.children.end(),
                                             [](const XmlElement& child) { return child.name == "pci"; });
      object.kind = has_pci_child ? PciKind::bridge : PciKind::device;
    }
    for (const auto& [name, field] : {std::pair<std::string_view, unsigned*>{"vendor", &object.vendor},
                                      std::pair<std::string_view, unsigned*>{"device", &object.device_id}}) {
      const std::string* text = element.attribute(name);
      if (!text) continue;
      const auto value = parse_hex(*text, 1, 4);
      if (!value) bad_value(element, name, *text, "0x and up to 4 hex digits (e.g. 0x10de)");
      *field = *value;
    }
    // NCCL writes "" when it had no sysfs entry, Linux "Unknown" when the link has no speed.
    if (const std::string* speed = element.attribute("link_speed"); speed && !speed->empty() && *speed != "Unknown") {
      const auto generation = pcie_generation_from_speed(*speed);
      if (!generation) fail(element, "unknown link_speed \"" + shown(*speed) + "\" (expected e.g. \"16.0 GT/s PCIe\")");
      object.link_generation = *generation;
    }
    if (const std::string* width = element.attribute("link_width"); width && !width->empty())
      object.link_width = integer(element, "link_width", *width, 0, 32, "a lane count from 0 to 32");
    if (object.link_generation > 0 && object.link_width > 0)
      object.link_gbps = pcie_bandwidth_gbps(object.link_generation, object.link_width).value_or(0);

    topo_.pci.push_back(std::move(object));
    const int index = static_cast<int>(topo_.pci.size()) - 1;
    for (const XmlElement& child : element.children) {
      if (!wanted(element, child)) continue;
      if (child.name == "pci")
        pci(child, locality, index, depth + 1);
      else if (child.name == "gpu")
        gpu(child, locality, index);
      else
        nic(child, locality, index);
    }
  }

  void gpu(const XmlElement& element, const Locality& locality, int pci_index) {
    Gpu entry;
    entry.index = integer(element, "dev", required(element, "dev"), 0, INT_MAX, "a non-negative integer");
    entry.pci = pci_index;
    entry.bus_id = topo_.pci[static_cast<std::size_t>(pci_index)].bus_id;
    if (const std::string* sm = element.attribute("sm"))
      entry.sm = integer(element, "sm", *sm, 0, 10000, "a compute capability times 10 (e.g. 90)");
    check_duplicate(gpu_dev_lines_, entry.index, element, fmt::format("GPU {}", entry.index));
    // Two <gpu> in one <pci>: the <pci> bus ids themselves are already unique.
    check_duplicate(gpu_bus_lines_, entry.bus_id, element, "GPU at " + entry.bus_id);
    entry.numa = locality.numa;
    entry.cpus = cpus_for(element, locality);
    entry.source = kSource;

    // Groups of this GPU by remote bus id and peer kind, so repeated targets merge in
    // constant time rather than by scanning the GPU's earlier groups.
    std::map<std::pair<std::string, NvlinkPeer>, std::size_t> groups;
    const std::size_t first_group = topo_.nvlinks.size();
    for (const XmlElement& child : element.children)
      if (wanted(element, child)) nvlink(child, entry.index, groups);
    // 0 means "no NVLink" in the model, so a GPU without links gets no generation even
    // when its architecture has NVLink (PCIe cards of an NVLink generation).
    if (topo_.nvlinks.size() > first_group) entry.nvlink_generation = nvlink_generation_for_sm(entry.sm);
    const double per_link = nvlink_link_bandwidth_gbps(entry.nvlink_generation).value_or(0);
    for (std::size_t i = first_group; i < topo_.nvlinks.size(); ++i) topo_.nvlinks[i].gbps_per_link = per_link;
    topo_.gpus.push_back(std::move(entry));
  }

  void nvlink(const XmlElement& element, int gpu_index,
              std::map<std::pair<std::string, NvlinkPeer>, std::size_t>& groups) {
    NvlinkGroup group;
    group.gpu = gpu_index;
    group.links = integer(element, "count", required(element, "count"), 1, kMaxNvlinks,
                          fmt::format("a link count from 1 to {}", kMaxNvlinks));
    if (const std::string* target = element.attribute("target"); target && *target != kInvisibleNvlinkTarget) {
      const auto bus_id = canonical_pci_bus_id(*target, PciBusIdSyntax::full);
      if (!bus_id) bad_value(element, "target", *target, "a PCI bus id such as 0000:05:00.0");
      group.remote_bus_id = *bus_id;
    }
    // NCCL's reading of the remote class: 0x068000 NVSwitch, any 0x03 display class a GPU,
    // anything else (IBM NPU 0x068001, ...) the CPU. Without tclass the peer is unknown.
    if (const std::string* tclass = element.attribute("tclass")) {
      const unsigned code = pci_class(element, "tclass", *tclass, " in <nvlink> tclass");
      group.peer = code == 0x068000 ? NvlinkPeer::nvswitch : (code >> 16) == 0x03 ? NvlinkPeer::gpu : NvlinkPeer::cpu;
    }
    // A target listed twice still means one remote object: its links are counted together.
    // Links to an unknown remote cannot be told apart, so those stay separate groups.
    if (!group.remote_bus_id.empty()) {
      const auto [it, inserted] = groups.emplace(std::pair{group.remote_bus_id, group.peer}, topo_.nvlinks.size());
      if (!inserted) {
        NvlinkGroup& existing = topo_.nvlinks[it->second];
        if (existing.links + group.links > kMaxNvlinks)
          fail(element,
               fmt::format("more than {} NVLinks from GPU {} to {}", kMaxNvlinks, gpu_index, group.remote_bus_id));
        existing.links += group.links;
        return;
      }
    }
    topo_.nvlinks.push_back(std::move(group));
  }

  // "0x" and 1 to 16 hex digits; "0x0" where the device has none.
  std::uint64_t node_guid(const XmlElement& element, const std::string& text) const {
    const std::string expected = "0x and 1 to 16 hex digits (e.g. 0x5c25730300d7f010)";
    const bool prefixed = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (!prefixed || text.size() > 18) bad_value(element, "guid", text, expected);
    std::uint64_t value = 0;
    for (const char c : std::string_view(text).substr(2)) {
      const int digit = hex_value(c);
      if (digit < 0) bad_value(element, "guid", text, expected);
      value = value << 4 | static_cast<std::uint64_t>(digit);
    }
    return value;
  }

  void nic(const XmlElement& element, const Locality& locality, int pci_index) {
    for (const XmlElement& child : element.children)
      if (wanted(element, child)) net(child, locality, pci_index);
  }

  void net(const XmlElement& element, const Locality& locality, int pci_index) {
    Nic entry;
    entry.name = required(element, "name");
    if (entry.name.empty()) fail(element, "<net> has an empty name");
    check_duplicate(nic_lines_, entry.name, element, "NIC " + shown(entry.name));
    NicPort port;
    if (const std::string* number = element.attribute("port"))
      port.port = integer(element, "port", *number, 0, 65535, "a port number");
    if (const std::string* speed = element.attribute("speed")) {
      // Some NICs report -1; NCCL then assumes 10 Gb/s, here it stays unknown.
      if (*speed != "-1")
        port.rate_gbit = integer(element, "speed", *speed, 0, INT_MAX, "a speed in Mb/s (or -1 when unknown)") / 1000.0;
    }
    // The dump has no state field. NCCL lists only ports it can use (its InfiniBand
    // transport skips every port that is not ACTIVE), so a listed port was up when NCCL
    // wrote the dump; `unknowns` says that this is inferred.
    port.state_code = 4;
    port.state = "ACTIVE";
    entry.ports.push_back(std::move(port));
    if (const std::string* guid = element.attribute("guid")) entry.guid = node_guid(element, *guid);
    entry.pci = pci_index;
    if (pci_index >= 0) entry.bus_id = topo_.pci[static_cast<std::size_t>(pci_index)].bus_id;
    entry.numa = locality.numa;
    entry.cpus = cpus_for(element, locality);
    entry.source = kSource;
    topo_.nics.push_back(std::move(entry));
  }
};

}  // namespace

NodeTopology nccl_topo_from_xml(const XmlElement& root, const std::string& where) { return Loader(where).load(root); }

NodeTopology load_nccl_topo_xml(const std::string& path) { return nccl_topo_from_xml(read_xml_file(path), path); }

}  // namespace commbench
