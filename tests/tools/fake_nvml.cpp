// A stand-in for libnvidia-ml, loaded through COMMBENCH_NVML_LIBRARY's seam by the GPU
// health tests on machines without a GPU. Its GPUs, their throttle reasons and SM clocks,
// and the XID errors to deliver are read from the file COMMBENCH_FAKE_NVML_STATE names, on
// every call, so a test changes them between two readings:
//   gpu 00000000:1B:00.0 0x40 1410     (bus id, clocks event reasons, SM clock in MHz)
//   xid 0 79                           (GPU index, XID: each line is delivered once)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Gpu {
  std::string bus_id;
  unsigned long long reasons = 0;
  unsigned clock = 0;
};

struct State {
  std::vector<Gpu> gpus;
  std::vector<std::pair<unsigned, unsigned>> xids;
};

State read_state() {
  State state;
  const char* path = std::getenv("COMMBENCH_FAKE_NVML_STATE");
  std::ifstream in(path != nullptr ? path : "");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "gpu") {
      Gpu gpu;
      std::string reasons;
      fields >> gpu.bus_id >> reasons >> gpu.clock;
      gpu.reasons = std::strtoull(reasons.c_str(), nullptr, 0);
      state.gpus.push_back(gpu);
    } else if (kind == "xid") {
      unsigned gpu = 0, xid = 0;
      fields >> gpu >> xid;
      state.xids.emplace_back(gpu, xid);
    }
  }
  return state;
}

std::size_t delivered_xids = 0;

struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct EventData {
  void* device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
};

void* handle_of(unsigned index) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1); }
unsigned index_of(void* handle) { return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(handle) - 1); }

constexpr int kSuccess = 0, kInvalidArgument = 2, kTimeout = 10;

}  // namespace

extern "C" {

int nvmlInit_v2() {
  delivered_xids = 0;
  return kSuccess;
}
int nvmlShutdown() { return kSuccess; }
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(read_state().gpus.size());
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index >= read_state().gpus.size()) return kInvalidArgument;
  *device = handle_of(index);
  return kSuccess;
}
int nvmlDeviceGetPciInfo_v3(void* device, PciInfo* pci) {
  const State state = read_state();
  if (index_of(device) >= state.gpus.size()) return kInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  std::snprintf(pci->busId, sizeof pci->busId, "%s", state.gpus[index_of(device)].bus_id.c_str());
  return kSuccess;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  const State state = read_state();
  if (index_of(device) >= state.gpus.size()) return kInvalidArgument;
  *reasons = state.gpus[index_of(device)].reasons;
  return kSuccess;
}
int nvmlDeviceGetClockInfo(void* device, int /*type*/, unsigned* mhz) {
  const State state = read_state();
  if (index_of(device) >= state.gpus.size()) return kInvalidArgument;
  *mhz = state.gpus[index_of(device)].clock;
  return kSuccess;
}
int nvmlEventSetCreate(void** set) {
  *set = handle_of(0);
  return kSuccess;
}
int nvmlDeviceRegisterEvents(void* /*device*/, unsigned long long /*types*/, void* /*set*/) { return kSuccess; }
int nvmlEventSetWait_v2(void* /*set*/, EventData* data, unsigned /*timeout_ms*/) {
  const State state = read_state();
  if (delivered_xids >= state.xids.size()) return kTimeout;
  const auto [gpu, xid] = state.xids[delivered_xids++];
  std::memset(data, 0, sizeof *data);
  data->device = handle_of(gpu);
  data->eventType = 0x8;
  data->eventData = xid;
  return kSuccess;
}
int nvmlEventSetFree(void* /*set*/) { return kSuccess; }

}  // extern "C"
