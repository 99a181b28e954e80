#include "commbench/topology/nvml_probe.hpp"

#include "commbench/core/pci_bus_id.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commbench/topology/link_spec.hpp"

namespace commbench {

int nvlink_generation_from_nvml_version(unsigned version) {
  switch (version) {
    case 1: return 1;  // NVML_NVLINK_VERSION_1_0
    case 2:
    case 3: return 2;  // 2_0, 2_2
    case 4:
    case 5: return 3;  // 3_0, 3_1
    case 6: return 4;  // 4_0
    case 7: return 5;  // 5_0
    default: return 0;
  }
}

namespace {

// ---- The few NVML declarations this probe needs, mirrored from nvml.h: the driver's
// headers are not a build dependency, and the ABI of these has been stable for years. ----

using NvmlReturn = int;                              // nvmlReturn_t
constexpr NvmlReturn kNvmlSuccess = 0;               // NVML_SUCCESS
constexpr NvmlReturn kNvmlErrorInvalidArgument = 2;  // NVML_ERROR_INVALID_ARGUMENT
constexpr NvmlReturn kNvmlErrorNotSupported = 3;     // NVML_ERROR_NOT_SUPPORTED

struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;  // nvmlDevice_t

// nvmlPciInfo_t, as filled by nvmlDeviceGetPciInfo_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2.
struct NvmlPciInfo {
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
static_assert(sizeof(NvmlPciInfo) == 68, "nvmlPciInfo_t layout");

constexpr unsigned kNvmlNvlinkMaxLinks = 18;           // NVML_NVLINK_MAX_LINKS
constexpr unsigned kNvmlDeviceNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kNvmlDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr int kNvmlFeatureEnabled = 1;                 // nvmlEnableState_t NVML_FEATURE_ENABLED

// nvmlIntNvLinkDeviceType_t
constexpr int kNvlinkDeviceTypeGpu = 0;     // NVML_NVLINK_DEVICE_TYPE_GPU
constexpr int kNvlinkDeviceTypeIbmNpu = 1;  // NVML_NVLINK_DEVICE_TYPE_IBMNPU (the CPU side)
constexpr int kNvlinkDeviceTypeSwitch = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH

// nvmlGpuP2PCapsIndex_t
constexpr int kP2pCapsRead = 0;     // NVML_P2P_CAPS_INDEX_READ
constexpr int kP2pCapsWrite = 1;    // NVML_P2P_CAPS_INDEX_WRITE
constexpr int kP2pCapsNvlink = 2;   // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2pCapsAtomics = 3;  // NVML_P2P_CAPS_INDEX_ATOMICS

// nvmlGpuP2PStatus_t: every other value is a reason why not.
constexpr int kP2pStatusOk = 0;       // NVML_P2P_STATUS_OK
constexpr int kP2pStatusUnknown = 6;  // NVML_P2P_STATUS_UNKNOWN

// Function types, one per entry point (C enums are int-sized on every ABI NVML ships for).
using InitFn = NvmlReturn (*)();                                     // nvmlInit_v2
using ShutdownFn = NvmlReturn (*)();                                 // nvmlShutdown
using ErrorStringFn = const char* (*)(NvmlReturn);                   // nvmlErrorString
using DriverVersionFn = NvmlReturn (*)(char*, unsigned);             // nvmlSystemGetDriverVersion
using CountFn = NvmlReturn (*)(unsigned*);                           // nvmlDeviceGetCount_v2
using HandleFn = NvmlReturn (*)(unsigned, NvmlDevice*);              // nvmlDeviceGetHandleByIndex_v2
using NameFn = NvmlReturn (*)(NvmlDevice, char*, unsigned);          // nvmlDeviceGetName
using PciInfoFn = NvmlReturn (*)(NvmlDevice, NvmlPciInfo*);          // nvmlDeviceGetPciInfo_v3
using ComputeCapabilityFn = NvmlReturn (*)(NvmlDevice, int*, int*);  // nvmlDeviceGetCudaComputeCapability
using UintQueryFn = NvmlReturn (*)(NvmlDevice, unsigned*);       // nvmlDeviceGet{Curr,Max}PcieLink{Generation,Width}
using LinkStateFn = NvmlReturn (*)(NvmlDevice, unsigned, int*);  // nvmlDeviceGetNvLinkState
using LinkVersionFn = NvmlReturn (*)(NvmlDevice, unsigned, unsigned*);       // nvmlDeviceGetNvLinkVersion
using LinkRemotePciFn = NvmlReturn (*)(NvmlDevice, unsigned, NvmlPciInfo*);  // nvmlDeviceGetNvLinkRemotePciInfo_v2
using LinkRemoteTypeFn = NvmlReturn (*)(NvmlDevice, unsigned, int*);         // nvmlDeviceGetNvLinkRemoteDeviceType
using P2pStatusFn = NvmlReturn (*)(NvmlDevice, NvmlDevice, int, int*);       // nvmlDeviceGetP2PStatus

const std::string kNothingKnown = "NVLink, P2P and PCIe link state unknown: ";

class Library {
 public:
  explicit Library(void* handle) : handle_(handle) {}
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() { dlclose(handle_); }

  template <typename Fn>
  Fn symbol(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  void* handle_;
};

struct Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn handle = nullptr;
  PciInfoFn pci_info = nullptr;

  ErrorStringFn error_string = nullptr;
  DriverVersionFn driver_version = nullptr;
  NameFn name = nullptr;
  ComputeCapabilityFn compute_capability = nullptr;
  UintQueryFn curr_pcie_generation = nullptr;
  UintQueryFn max_pcie_generation = nullptr;
  UintQueryFn curr_pcie_width = nullptr;
  UintQueryFn max_pcie_width = nullptr;
  LinkStateFn link_state = nullptr;
  LinkVersionFn link_version = nullptr;
  LinkRemotePciFn link_remote_pci = nullptr;
  LinkRemoteTypeFn link_remote_type = nullptr;
  P2pStatusFn p2p_status = nullptr;

  std::string error(NvmlReturn rc) const {
    const char* text = error_string != nullptr ? error_string(rc) : nullptr;
    return fmt::format("{} ({})", text != nullptr ? text : "NVML error", rc);
  }
};

// Failures of one call on several GPUs make one line, not one per GPU.
class Failures {
 public:
  void add(const std::string& function, const std::string& error, const std::string& gpu) {
    auto it = std::find_if(lines_.begin(), lines_.end(),
                           [&](const Line& line) { return line.function == function && line.error == error; });
    if (it == lines_.end()) it = lines_.insert(lines_.end(), Line{function, error, {}});
    if (std::find(it->gpus.begin(), it->gpus.end(), gpu) == it->gpus.end()) it->gpus.push_back(gpu);
  }
  void report(std::vector<std::string>& unknowns) const {
    for (const Line& line : lines_) {
      std::string gpus;
      for (const auto& gpu : line.gpus) gpus += (gpus.empty() ? "" : ", ") + gpu;
      unknowns.push_back("NVML " + line.function + " failed on GPU " + gpus + ": " + line.error);
    }
  }

 private:
  struct Line {
    std::string function, error;
    std::vector<std::string> gpus;
  };
  std::vector<Line> lines_;
};

struct Probed {
  NvmlDevice device = nullptr;
  int gpu = 0;  // Gpu::index
  std::string bus_id;
};

Gpu& gpu_for(NodeTopology& node, const std::string& bus_id) {
  for (Gpu& gpu : node.gpus)
    if (gpu.bus_id == bus_id) return gpu;
  int next = 0;
  for (const Gpu& gpu : node.gpus) next = std::max(next, gpu.index + 1);
  Gpu gpu;
  gpu.index = next;
  gpu.bus_id = bus_id;
  gpu.source = "nvml";
  node.gpus.push_back(std::move(gpu));
  return node.gpus.back();
}

void query_gpu(const Api& api, const Probed& probed, Gpu& gpu, Failures& failures) {
  const auto fill = [&](UintQueryFn fn, const char* function, int& field) {
    if (fn == nullptr) return;
    unsigned value = 0;
    if (const NvmlReturn rc = fn(probed.device, &value); rc == kNvmlSuccess)
      field = static_cast<int>(value);
    else
      failures.add(function, api.error(rc), probed.bus_id);
  };
  if (api.name != nullptr) {
    char name[kNvmlDeviceNameBufferSize] = {};
    if (const NvmlReturn rc = api.name(probed.device, name, sizeof name); rc == kNvmlSuccess)
      gpu.model = std::string(name, strnlen(name, sizeof name));
    else
      failures.add("nvmlDeviceGetName", api.error(rc), probed.bus_id);
  }
  if (api.compute_capability != nullptr) {
    int major = 0, minor = 0;
    if (const NvmlReturn rc = api.compute_capability(probed.device, &major, &minor); rc == kNvmlSuccess)
      gpu.sm = major * 10 + minor;
    else
      failures.add("nvmlDeviceGetCudaComputeCapability", api.error(rc), probed.bus_id);
  }
  fill(api.curr_pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration", gpu.pcie_generation_current);
  fill(api.max_pcie_generation, "nvmlDeviceGetMaxPcieLinkGeneration", gpu.pcie_generation_max);
  fill(api.curr_pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", gpu.pcie_width_current);
  fill(api.max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth", gpu.pcie_width_max);
}

NvlinkPeer peer_from_type(int type) {
  switch (type) {
    case kNvlinkDeviceTypeGpu: return NvlinkPeer::gpu;
    case kNvlinkDeviceTypeSwitch: return NvlinkPeer::nvswitch;
    case kNvlinkDeviceTypeIbmNpu: return NvlinkPeer::cpu;
    default: return NvlinkPeer::unknown;
  }
}

void query_nvlinks(const Api& api, const Probed& probed, NodeTopology& node, Failures& failures) {
  if (api.link_state == nullptr) return;
  std::vector<NvlinkGroup> groups;
  int generation = 0;
  for (unsigned link = 0; link < kNvmlNvlinkMaxLinks; ++link) {
    int state = 0;
    const NvmlReturn rc = api.link_state(probed.device, link, &state);
    // A GPU without NVLink, or with fewer links than the maximum, says so this way.
    if (rc == kNvmlErrorNotSupported || rc == kNvmlErrorInvalidArgument) continue;
    if (rc != kNvmlSuccess) {
      failures.add("nvmlDeviceGetNvLinkState", api.error(rc), probed.bus_id);
      continue;
    }
    if (state != kNvmlFeatureEnabled) continue;

    if (api.link_version != nullptr) {
      unsigned version = 0;
      if (const NvmlReturn v = api.link_version(probed.device, link, &version); v == kNvmlSuccess)
        generation = std::max(generation, nvlink_generation_from_nvml_version(version));
      else
        failures.add("nvmlDeviceGetNvLinkVersion", api.error(v), probed.bus_id);
    }
    std::string remote;
    if (api.link_remote_pci != nullptr) {
      NvmlPciInfo pci{};
      if (const NvmlReturn p = api.link_remote_pci(probed.device, link, &pci); p == kNvmlSuccess)
        remote = canonical_pci_bus_id(std::string_view(pci.busId, sizeof pci.busId)).value_or("");
      else
        failures.add("nvmlDeviceGetNvLinkRemotePciInfo_v2", api.error(p), probed.bus_id);
    }
    NvlinkPeer peer = NvlinkPeer::unknown;
    bool typed = false;
    if (api.link_remote_type != nullptr) {
      int type = -1;
      if (const NvmlReturn t = api.link_remote_type(probed.device, link, &type); t == kNvmlSuccess) {
        peer = peer_from_type(type);
        typed = true;
      } else {
        failures.add("nvmlDeviceGetNvLinkRemoteDeviceType", api.error(t), probed.bus_id);
      }
    }
    // Drivers without the remote type still name the remote; a GPU's bus id is telling.
    if (!typed && !remote.empty() &&
        std::any_of(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return g.bus_id == remote; }))
      peer = NvlinkPeer::gpu;

    const auto group = std::find_if(groups.begin(), groups.end(),
                                    [&](const NvlinkGroup& g) { return g.remote_bus_id == remote && g.peer == peer; });
    if (group != groups.end()) {
      ++group->links;
    } else {
      NvlinkGroup added;
      added.gpu = probed.gpu;
      added.remote_bus_id = remote;
      added.peer = peer;
      added.links = 1;
      groups.push_back(std::move(added));
    }
  }
  if (generation > 0) {
    for (Gpu& gpu : node.gpus)
      if (gpu.index == probed.gpu) gpu.nvlink_generation = generation;
  }
  const double gbps = nvlink_link_bandwidth_gbps(generation).value_or(0.0);
  for (NvlinkGroup& group : groups) {
    group.gbps_per_link = gbps;
    std::erase_if(node.nvlinks,
                  [&](const NvlinkGroup& g) { return g.gpu == group.gpu && g.remote_bus_id == group.remote_bus_id; });
  }
  for (NvlinkGroup& group : groups) node.nvlinks.push_back(std::move(group));
}

void query_p2p(const Api& api, const Probed& a, const Probed& b, NodeTopology& node, Failures& failures) {
  P2pStatus pair;
  pair.gpu_a = std::min(a.gpu, b.gpu);
  pair.gpu_b = std::max(a.gpu, b.gpu);
  const auto status = [&](int caps, Capability& field) {
    int value = kP2pStatusUnknown;
    if (const NvmlReturn rc = api.p2p_status(a.device, b.device, caps, &value); rc != kNvmlSuccess) {
      failures.add("nvmlDeviceGetP2PStatus", api.error(rc), a.bus_id + "/" + b.bus_id);
      return;
    }
    field = value == kP2pStatusOk ? Capability::yes : value == kP2pStatusUnknown ? Capability::unknown : Capability::no;
  };
  status(kP2pCapsRead, pair.read);
  status(kP2pCapsWrite, pair.write);
  status(kP2pCapsAtomics, pair.atomics);
  status(kP2pCapsNvlink, pair.nvlink);
  std::erase_if(node.p2p, [&](const P2pStatus& p) {
    return (p.gpu_a == pair.gpu_a && p.gpu_b == pair.gpu_b) || (p.gpu_a == pair.gpu_b && p.gpu_b == pair.gpu_a);
  });
  node.p2p.push_back(pair);
}

// nvmlInit_v2 succeeded: nvmlShutdown must follow on every way out.
class Session {
 public:
  explicit Session(ShutdownFn shutdown) : shutdown_(shutdown) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { shutdown_(); }

 private:
  ShutdownFn shutdown_;
};

// The entry points without which nothing can be probed, loaded into `api`; the first one
// the library lacks, or nullptr when it has them all.
const char* load_required(const Library& lib, Api& api) {
  api.init = lib.symbol<InitFn>("nvmlInit_v2");
  api.shutdown = lib.symbol<ShutdownFn>("nvmlShutdown");
  api.count = lib.symbol<CountFn>("nvmlDeviceGetCount_v2");
  api.handle = lib.symbol<HandleFn>("nvmlDeviceGetHandleByIndex_v2");
  api.pci_info = lib.symbol<PciInfoFn>("nvmlDeviceGetPciInfo_v3");
  for (const auto& [symbol, present] :
       {std::pair{"nvmlInit_v2", api.init != nullptr}, std::pair{"nvmlShutdown", api.shutdown != nullptr},
        std::pair{"nvmlDeviceGetCount_v2", api.count != nullptr},
        std::pair{"nvmlDeviceGetHandleByIndex_v2", api.handle != nullptr},
        std::pair{"nvmlDeviceGetPciInfo_v3", api.pci_info != nullptr}}) {
    if (!present) return symbol;
  }
  return nullptr;
}

// The entry points an older driver may lack, loaded into `api`: what they report stays
// unknown, the rest is probed. Returns the names of those missing.
std::vector<std::string> load_optional(const Library& lib, Api& api) {
  std::vector<std::string> lacking;
  const auto optional = [&](auto& field, const char* symbol) {
    field = lib.symbol<std::remove_reference_t<decltype(field)>>(symbol);
    if (field == nullptr) lacking.push_back(symbol);
  };
  optional(api.error_string, "nvmlErrorString");
  optional(api.driver_version, "nvmlSystemGetDriverVersion");
  optional(api.name, "nvmlDeviceGetName");
  optional(api.compute_capability, "nvmlDeviceGetCudaComputeCapability");
  optional(api.curr_pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration");
  optional(api.max_pcie_generation, "nvmlDeviceGetMaxPcieLinkGeneration");
  optional(api.curr_pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  optional(api.max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth");
  optional(api.link_state, "nvmlDeviceGetNvLinkState");
  optional(api.link_version, "nvmlDeviceGetNvLinkVersion");
  optional(api.link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  optional(api.link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  optional(api.p2p_status, "nvmlDeviceGetP2PStatus");
  return lacking;
}

// The source line: the library, and the driver where NVML tells its version.
std::string source_of(const Api& api, const std::string& name) {
  std::string source = "NVML " + name;
  if (api.driver_version != nullptr) {
    char version[kNvmlDriverVersionBufferSize] = {};
    if (api.driver_version(version, sizeof version) == kNvmlSuccess)
      source += " (driver " + std::string(version, strnlen(version, sizeof version)) + ")";
  }
  return source;
}

// Every GPU NVML enumerates, matched to the node's GPU of its bus id (added when the node
// has none) and queried; a GPU whose handle or PCI address cannot be had is left out.
std::vector<Probed> probe_gpus(const Api& api, unsigned count, NodeTopology& node, Failures& failures) {
  std::vector<Probed> probed;
  for (unsigned i = 0; i < count; ++i) {
    const std::string position = fmt::format("#{}", i);  // names the GPU until its bus id is known
    Probed p;
    if (const NvmlReturn rc = api.handle(i, &p.device); rc != kNvmlSuccess) {
      failures.add("nvmlDeviceGetHandleByIndex_v2", api.error(rc), position);
      continue;
    }
    NvmlPciInfo pci{};
    if (const NvmlReturn rc = api.pci_info(p.device, &pci); rc != kNvmlSuccess) {
      failures.add("nvmlDeviceGetPciInfo_v3", api.error(rc), position);
      continue;
    }
    p.bus_id =
        canonical_pci_bus_id(std::string_view(pci.busId, sizeof pci.busId))
            .value_or(canonical_pci_bus_id(std::string_view(pci.busIdLegacy, sizeof pci.busIdLegacy)).value_or(""));
    if (p.bus_id.empty()) {
      failures.add("nvmlDeviceGetPciInfo_v3", "no PCI address in the answer", position);
      continue;
    }
    Gpu& gpu = gpu_for(node, p.bus_id);
    p.gpu = gpu.index;
    query_gpu(api, p, gpu, failures);
    probed.push_back(std::move(p));
  }
  return probed;
}

}  // namespace

std::string nvml_library_name(const std::string& library) {
  if (!library.empty()) return library;
  const char* env = std::getenv("COMMBENCH_NVML_LIBRARY");
  return env != nullptr && *env != '\0' ? env : "libnvidia-ml.so.1";
}

void probe_nvml(NodeTopology& node, const std::string& library) {
  const std::string name = nvml_library_name(library);
  dlerror();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    node.unknowns.push_back(kNothingKnown + "NVML not loadable (" + (why != nullptr ? why : name) + ")");
    return;
  }
  const Library lib(handle);

  Api api;
  if (const char* missing = load_required(lib, api)) {
    node.unknowns.push_back(kNothingKnown + name + " has no " + missing + " (not NVML, or a driver too old)");
    return;
  }
  const std::vector<std::string> lacking = load_optional(lib, api);

  if (const NvmlReturn rc = api.init(); rc != kNvmlSuccess) {
    node.unknowns.push_back(kNothingKnown + "nvmlInit_v2 failed: " + api.error(rc));
    return;
  }
  const Session session(api.shutdown);

  if (!lacking.empty()) {
    std::string list;
    for (const auto& symbol : lacking) list += (list.empty() ? "" : ", ") + symbol;
    node.unknowns.push_back("NVML " + name + " lacks " + list + ": what they report is unknown");
  }
  const std::string source = source_of(api, name);

  unsigned count = 0;
  if (const NvmlReturn rc = api.count(&count); rc != kNvmlSuccess) {
    node.unknowns.push_back(kNothingKnown + "nvmlDeviceGetCount_v2 failed: " + api.error(rc));
    return;
  }
  node.sources.push_back(source);

  Failures failures;
  const std::vector<Probed> probed = probe_gpus(api, count, node, failures);
  // After all GPUs are known, so a link to a GPU enumerated later is recognised as one.
  for (const Probed& p : probed) query_nvlinks(api, p, node, failures);
  if (api.p2p_status != nullptr)
    for (std::size_t a = 0; a < probed.size(); ++a)
      for (std::size_t b = a + 1; b < probed.size(); ++b) query_p2p(api, probed[a], probed[b], node, failures);
  failures.report(node.unknowns);
}

}  // namespace commbench
