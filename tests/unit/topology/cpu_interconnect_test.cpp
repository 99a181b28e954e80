// NCCL's figure for a hop between CPU sockets (src/graph/topo.h, ncclTopoGetInterCpuBw): the
// model caps a SYS hop's achievable figure with it, and says so where the CPU type is unknown.
#include <gtest/gtest.h>

#include "commbench/topology/cpu_interconnect.hpp"

namespace commbench {
namespace {

CpuType cpu(std::string architecture, std::string vendor, int family = -1, int model = -1) {
  return {std::move(architecture), std::move(vendor), family, model};
}

struct Expected {
  CpuType type;
  double gbps;
  const char* name;
};

TEST(CpuInterconnect, NcclFigurePerCpuGeneration) {
  const std::vector<Expected> table = {
      {cpu("x86_64", "AuthenticAMD", 25, 1), 16.0, "AMD xGMI"},
      {cpu("", "AuthenticAMD"), 16.0, "AMD xGMI"},  // hwloc without an Architecture info
      {cpu("x86_64", "GenuineIntel", 6, 0x4F), 6.0, "Intel QPI (Broadwell or older)"},
      {cpu("x86_64", "GenuineIntel", 6, 0x55), 10.0, "Intel Skylake UPI"},
      {cpu("x86_64", "GenuineIntel", 6, 0x6A), 10.0, "Intel Skylake UPI"},  // Ice Lake counts as Skylake
      {cpu("x86_64", "GenuineIntel", 6, 0x8F), 22.0, "Intel Sapphire Rapids UPI"},
      {cpu("x86_64", "GenuineIntel", 6, 0xCF), 40.0, "Intel Emerald Rapids UPI"},
      {cpu("x86_64", "CentaurHauls", 7, 0x5B), 9.0, "Zhaoxin Yongfeng ZPI"},
      {cpu("x86_64", "  Shanghai  ", 7, 0x3B), 6.0, "Zhaoxin ZPI"},
      {cpu("arm64", ""), 6.0, "Arm socket link"},
      {cpu("aarch64", ""), 6.0, "Arm socket link"},
      {cpu("ppc64", ""), 32.0, "POWER9 X-Bus"},
      {cpu("ppc64le", ""), 32.0, "POWER9 X-Bus"},
  };
  for (const Expected& row : table) {
    SCOPED_TRACE(row.type.architecture + "/" + row.type.vendor + "/" + std::to_string(row.type.model));
    const CpuInterconnect interconnect = nccl_cpu_interconnect(row.type);
    ASSERT_TRUE(interconnect.achievable_gbps) << interconnect.why_unknown;
    EXPECT_DOUBLE_EQ(*interconnect.achievable_gbps, row.gbps);
    EXPECT_EQ(interconnect.name, row.name);
  }
}

TEST(CpuInterconnect, UnknownCpuTypesStayUnknown) {
  const auto why = [](const CpuType& type) {
    const CpuInterconnect interconnect = nccl_cpu_interconnect(type);
    EXPECT_FALSE(interconnect.achievable_gbps);
    return interconnect.why_unknown;
  };
  EXPECT_EQ(why(cpu("", "")), "the source does not record the CPU type");
  // Intel's figure depends on the model number, which hand-written hwloc files may lack.
  EXPECT_EQ(why(cpu("x86_64", "GenuineIntel")),
            "the CPU's family and model numbers are not recorded (NCCL's figure for Intel depends on them)");
  EXPECT_EQ(why(cpu("x86_64", "")), "the source does not record the CPU vendor");
  EXPECT_EQ(why(cpu("x86_64", "HygonGenuine", 24, 0)), "NCCL has no figure for HygonGenuine CPUs");
  EXPECT_EQ(why(cpu("riscv64", "")), "NCCL has no figure for riscv64 CPUs");
}

}  // namespace
}  // namespace commbench
