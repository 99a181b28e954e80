#include "commbench/topology/gpu_health.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "temp_dir.hpp"

namespace commbench {
namespace {

using testing::TempDir;

// The fake NVML's GPUs and events come from a file named by COMMBENCH_FAKE_NVML_STATE.
struct FakeNvml {
  TempDir dir;
  std::string state = dir.write("state", "");
  FakeNvml() { setenv("COMMBENCH_FAKE_NVML_STATE", state.c_str(), 1); }
  ~FakeNvml() { unsetenv("COMMBENCH_FAKE_NVML_STATE"); }
  void set(const std::string& text) const { dir.write("state", text); }
};

TEST(GpuHealth, ThrottlingItsClockAndXidsAreSaidWhenTheyChange) {
  FakeNvml fake;
  fake.set("gpu 00000000:1B:00.0 0x0 1980\ngpu 00000000:1C:00.0 0x1 345\n");  // 0x1: idle, not a fault
  GpuHealthMonitor monitor(COMMBENCH_FAKE_NVML);
  ASSERT_EQ(monitor.unavailable(), "");
  const GpuHealthSnapshot before = monitor.read();
  ASSERT_EQ(before.gpus.size(), 2u);
  EXPECT_EQ(before.gpus[0].bus_id, "0000:1b:00.0");
  EXPECT_EQ(before.gpus[1].reasons, 0u);
  EXPECT_EQ(before.gpus[0].sm_clock_mhz, 1980u);
  EXPECT_TRUE(gpu_health_changes(before, monitor.read()).empty());

  fake.set("gpu 00000000:1B:00.0 0x44 1410\ngpu 00000000:1C:00.0 0x1 345\nxid 1 79\n");
  const GpuHealthSnapshot during = monitor.read();
  EXPECT_EQ(gpu_health_changes(before, during),
            (std::vector<std::string>{"GPU 0000:1b:00.0 throttled: sw power cap, hw thermal slowdown (SM 1410 MHz)",
                                      "GPU 0000:1c:00.0 XID 79"}));
  // An XID is told once; a throttle that ends is told too.
  fake.set("gpu 00000000:1B:00.0 0x0 1980\ngpu 00000000:1C:00.0 0x1 345\nxid 1 79\n");
  EXPECT_EQ(gpu_health_changes(during, monitor.read()),
            std::vector<std::string>{"GPU 0000:1b:00.0 no longer throttled (SM 1980 MHz)"});
}

TEST(GpuHealth, WithoutNvmlItSaysWhyAndReadsNothing) {
  GpuHealthMonitor monitor("libcommbench-no-such-nvml.so.1");
  EXPECT_EQ(monitor.unavailable().rfind("NVML not loadable (", 0), 0u) << monitor.unavailable();
  EXPECT_TRUE(monitor.read().gpus.empty());
}

TEST(GpuHealth, ReasonNames) {
  EXPECT_EQ(throttle_reason_names(0x4 | 0x8 | 0x20 | 0x40 | 0x80),
            "sw power cap, hw slowdown, sw thermal slowdown, hw thermal slowdown, hw power brake slowdown");
  EXPECT_EQ(throttle_reason_names(0), "");
}

}  // namespace
}  // namespace commbench
