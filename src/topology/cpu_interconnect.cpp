#include "commbench/topology/cpu_interconnect.hpp"

namespace commbench {
namespace {

bool is_x86(const std::string& architecture) { return architecture == "x86_64" || architecture == "x86"; }
bool is_arm(const std::string& architecture) { return architecture == "arm64" || architecture == "aarch64"; }
bool is_power(const std::string& architecture) { return architecture.rfind("ppc64", 0) == 0; }

CpuInterconnect known(double gbps, std::string name) { return {gbps, std::move(name), ""}; }

// NCCL sorts Intel parts by CPUID model number alone (family 6): from Skylake-SP (0x55),
// Sapphire Rapids (0x8F) and Emerald Rapids (0xCF) on; anything earlier counts as Broadwell.
CpuInterconnect intel(const CpuType& cpu) {
  if (cpu.family < 0 || cpu.model < 0) {
    return {std::nullopt, "",
            "the CPU's family and model numbers are not recorded (NCCL's figure for Intel depends on them)"};
  }
  if (cpu.family == 6 && cpu.model >= 0xCF) return known(40.0, "Intel Emerald Rapids UPI");
  if (cpu.family == 6 && cpu.model >= 0x8F) return known(22.0, "Intel Sapphire Rapids UPI");
  if (cpu.family == 6 && cpu.model >= 0x55) return known(10.0, "Intel Skylake UPI");
  return known(6.0, "Intel QPI (Broadwell or older)");
}

}  // namespace

CpuInterconnect nccl_cpu_interconnect(const CpuType& cpu) {
  if (is_power(cpu.architecture)) return known(32.0, "POWER9 X-Bus");
  if (is_arm(cpu.architecture)) return known(6.0, "Arm socket link");
  if (cpu.architecture.empty() && cpu.vendor.empty()) {
    return {std::nullopt, "", "the source does not record the CPU type"};
  }
  if (!cpu.architecture.empty() && !is_x86(cpu.architecture)) {
    return {std::nullopt, "", "NCCL has no figure for " + cpu.architecture + " CPUs"};
  }
  if (cpu.vendor == "GenuineIntel") return intel(cpu);
  if (cpu.vendor == "AuthenticAMD") return known(16.0, "AMD xGMI");
  if (cpu.vendor == "CentaurHauls" || cpu.vendor == "  Shanghai  ") {
    return cpu.family == 7 && cpu.model == 0x5B ? known(9.0, "Zhaoxin Yongfeng ZPI") : known(6.0, "Zhaoxin ZPI");
  }
  return {std::nullopt, "",
          cpu.vendor.empty() ? "the source does not record the CPU vendor"
                             : "NCCL has no figure for " + cpu.vendor + " CPUs"};
}

RootComplexTraffic nccl_root_complex_traffic(const CpuType& cpu) {
  // NCCL tests the architecture and the vendor only: any Intel x86 part pays, nothing else.
  if (!cpu.architecture.empty() && !is_x86(cpu.architecture)) return {1.0, ""};
  if (cpu.vendor.empty()) {
    return {std::nullopt, cpu.architecture.empty() ? "the source does not record the CPU type"
                                                   : "the source does not record the CPU vendor"};
  }
  return {cpu.vendor == "GenuineIntel" ? kIntelRootComplexCharge : 1.0, ""};
}

}  // namespace commbench
