// What can go wrong on a GPU during a long run without a measurement saying why: the
// driver's critical XID errors, and clock throttling (power cap, thermal and hardware
// slowdowns, with the SM clock at the time), read through NVML between two moments so that
// a soak can say what changed on a node while it dipped. NVML is loaded at run time, as
// for the topology probe (nvml_probe.hpp): without it (no driver, no GPU) the monitor says
// so once and reads nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace commbench {

struct GpuHealthReading {
  std::string bus_id;          // "0000:1b:00.0"
  std::uint64_t reasons = 0;   // nvmlClocksEventReasons bits of interest; 0 when none
  unsigned sm_clock_mhz = 0;   // 0 when unknown
  std::vector<unsigned> xids;  // critical XID errors since the previous reading
};

struct GpuHealthSnapshot {
  std::vector<GpuHealthReading> gpus;
};

class GpuHealthMonitor {
 public:
  // `library` as nvml_library_name() takes it.
  explicit GpuHealthMonitor(const std::string& library = "");
  ~GpuHealthMonitor();
  GpuHealthMonitor(const GpuHealthMonitor&) = delete;
  GpuHealthMonitor& operator=(const GpuHealthMonitor&) = delete;

  // Empty when NVML was loaded and initialised; else why not ("NVML not loadable (...)").
  const std::string& unavailable() const { return unavailable_; }
  // Every GPU's throttle reasons and SM clock, and the XIDs that arrived since the last
  // read. Never throws; a GPU whose query fails reads as unknown.
  GpuHealthSnapshot read();

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string unavailable_;
};

// "GPU 0000:1b:00.0 XID 79", "GPU 0000:1b:00.0 throttled: hw thermal slowdown (SM 1410 MHz)",
// "GPU 0000:1b:00.0 no longer throttled (SM 1980 MHz)", "GPU 0000:1c:00.0 appeared".
std::vector<std::string> gpu_health_changes(const GpuHealthSnapshot& before, const GpuHealthSnapshot& after);

// The reasons' names, comma-separated: "sw power cap, hw thermal slowdown".
std::string throttle_reason_names(std::uint64_t reasons);

}  // namespace commbench
