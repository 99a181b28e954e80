#include "commbench/topology/gpu_health.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "commbench/topology/nvml_probe.hpp"

namespace commbench {
namespace {

// The NVML declarations the monitor needs, mirrored from nvml.h (the driver's headers are
// not a build dependency; these entry points have kept their ABI for years).
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlEventSetOpaque;
using NvmlEventSet = NvmlEventSetOpaque*;

struct NvmlPciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(NvmlPciInfo) == 68, "nvmlPciInfo_t layout");

struct NvmlEventData {  // nvmlEventData_t
  NvmlDevice device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned gpuInstanceId, computeInstanceId;
};
static_assert(sizeof(NvmlEventData) == 32, "nvmlEventData_t layout");

constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError
constexpr int kClockSm = 1;                                 // NVML_CLOCK_SM

// nvmlClocksEventReason* bits that say a GPU is held back; idle, application clocks, sync
// boost and display clocks are left out: they change with load, not with a fault.
struct Reason {
  std::uint64_t bit;
  const char* name;
};
constexpr Reason kReasons[] = {{0x4, "sw power cap"},
                               {0x8, "hw slowdown"},
                               {0x20, "sw thermal slowdown"},
                               {0x40, "hw thermal slowdown"},
                               {0x80, "hw power brake slowdown"}};
constexpr std::uint64_t kReasonMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

std::string lower_bus_id(const char* text) {
  std::string id(text);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  // NVML writes an 8-digit domain ("00000000:1B:00.0"); the rest of commbench writes 4.
  if (id.size() == 16 && id.compare(0, 4, "0000") == 0) id.erase(0, 4);
  return id;
}

}  // namespace

struct GpuHealthMonitor::Nvml {
  void* handle = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*count)(unsigned*) = nullptr;
  NvmlReturn (*device_at)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*pci_info)(NvmlDevice, NvmlPciInfo*) = nullptr;
  NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*event_wait)(NvmlEventSet, NvmlEventData*, unsigned) = nullptr;
  NvmlReturn (*event_free)(NvmlEventSet) = nullptr;
  NvmlEventSet events = nullptr;  // XIDs of every GPU that takes the registration
  std::vector<std::pair<NvmlDevice, std::string>> gpus;

  template <typename Fn>
  void load(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(handle, name));
  }
  ~Nvml() {
    if (events != nullptr && event_free != nullptr) event_free(events);
    if (shutdown != nullptr) shutdown();
    if (handle != nullptr) dlclose(handle);
  }
};

GpuHealthMonitor::GpuHealthMonitor(const std::string& library) : nvml_(std::make_unique<Nvml>()) {
  const std::string name = nvml_library_name(library);
  Nvml& nvml = *nvml_;
  nvml.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nvml.handle == nullptr) {
    const char* error = dlerror();
    unavailable_ = fmt::format("NVML not loadable ({})", error != nullptr ? error : name);
    return;
  }
  NvmlReturn (*init)() = nullptr;
  nvml.load(init, "nvmlInit_v2");
  nvml.load(nvml.count, "nvmlDeviceGetCount_v2");
  nvml.load(nvml.device_at, "nvmlDeviceGetHandleByIndex_v2");
  nvml.load(nvml.pci_info, "nvmlDeviceGetPciInfo_v3");
  nvml.load(nvml.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (nvml.reasons == nullptr) nvml.load(nvml.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  nvml.load(nvml.clock, "nvmlDeviceGetClockInfo");
  if (init == nullptr || nvml.count == nullptr || nvml.device_at == nullptr || nvml.pci_info == nullptr) {
    unavailable_ = fmt::format("{} lacks NVML's device entry points", name);
    return;
  }
  if (const NvmlReturn rc = init(); rc != kNvmlSuccess) {
    unavailable_ = fmt::format("nvmlInit_v2 failed ({})", rc);
    return;
  }
  nvml.load(nvml.shutdown, "nvmlShutdown");
  unsigned count = 0;
  if (nvml.count(&count) != kNvmlSuccess) count = 0;
  for (unsigned index = 0; index < count; ++index) {
    NvmlDevice device = nullptr;
    NvmlPciInfo pci{};
    if (nvml.device_at(index, &device) == kNvmlSuccess && nvml.pci_info(device, &pci) == kNvmlSuccess)
      nvml.gpus.emplace_back(device, lower_bus_id(pci.busId));
  }
  NvmlReturn (*event_create)(NvmlEventSet*) = nullptr;
  NvmlReturn (*register_events)(NvmlDevice, unsigned long long, NvmlEventSet) = nullptr;
  nvml.load(event_create, "nvmlEventSetCreate");
  nvml.load(register_events, "nvmlDeviceRegisterEvents");
  nvml.load(nvml.event_wait, "nvmlEventSetWait_v2");
  nvml.load(nvml.event_free, "nvmlEventSetFree");
  if (event_create != nullptr && register_events != nullptr && nvml.event_wait != nullptr &&
      event_create(&nvml.events) == kNvmlSuccess)
    for (const auto& [device, bus_id] : nvml.gpus) register_events(device, kEventXidCriticalError, nvml.events);
}

GpuHealthMonitor::~GpuHealthMonitor() = default;

GpuHealthSnapshot GpuHealthMonitor::read() {
  GpuHealthSnapshot snapshot;
  if (!unavailable_.empty()) return snapshot;
  Nvml& nvml = *nvml_;
  for (const auto& [device, bus_id] : nvml.gpus) {
    GpuHealthReading reading;
    reading.bus_id = bus_id;
    unsigned long long reasons = 0;
    if (nvml.reasons != nullptr && nvml.reasons(device, &reasons) == kNvmlSuccess)
      reading.reasons = reasons & kReasonMask;
    if (nvml.clock != nullptr && nvml.clock(device, kClockSm, &reading.sm_clock_mhz) != kNvmlSuccess)
      reading.sm_clock_mhz = 0;
    snapshot.gpus.push_back(std::move(reading));
  }
  // Whatever XIDs are waiting, without waiting for more (timeout 0).
  NvmlEventData event{};
  while (nvml.events != nullptr && nvml.event_wait(nvml.events, &event, 0) == kNvmlSuccess) {
    for (std::size_t k = 0; k < nvml.gpus.size(); ++k)
      if (nvml.gpus[k].first == event.device) snapshot.gpus[k].xids.push_back(static_cast<unsigned>(event.eventData));
  }
  return snapshot;
}

std::string throttle_reason_names(std::uint64_t reasons) {
  std::string names;
  for (const Reason& reason : kReasons)
    if ((reasons & reason.bit) != 0) names += (names.empty() ? "" : ", ") + std::string(reason.name);
  return names;
}

std::vector<std::string> gpu_health_changes(const GpuHealthSnapshot& before, const GpuHealthSnapshot& after) {
  std::vector<std::string> changes;
  for (const GpuHealthReading& now : after.gpus) {
    for (unsigned xid : now.xids) changes.push_back(fmt::format("GPU {} XID {}", now.bus_id, xid));
    const auto earlier = std::find_if(before.gpus.begin(), before.gpus.end(),
                                      [&](const GpuHealthReading& gpu) { return gpu.bus_id == now.bus_id; });
    if (earlier == before.gpus.end()) {
      if (!before.gpus.empty()) changes.push_back(fmt::format("GPU {} appeared", now.bus_id));
      continue;
    }
    if (earlier->reasons == now.reasons) continue;
    const std::string clock = now.sm_clock_mhz > 0 ? fmt::format(" (SM {} MHz)", now.sm_clock_mhz) : "";
    changes.push_back(now.reasons == 0 ? fmt::format("GPU {} no longer throttled{}", now.bus_id, clock)
                                       : fmt::format("GPU {} throttled: {}{}", now.bus_id,
                                                     throttle_reason_names(now.reasons), clock));
  }
  for (const GpuHealthReading& then : before.gpus)
    if (std::none_of(after.gpus.begin(), after.gpus.end(),
                     [&](const GpuHealthReading& gpu) { return gpu.bus_id == then.bus_id; }))
      changes.push_back(fmt::format("GPU {} disappeared", then.bus_id));
  return changes;
}

}  // namespace commbench
