// NCCL's charge for GPU-to-GPU traffic that turns in an Intel root complex: its search
// counts 6/5 of a flow's rate on the PCIe links of a PHB path (INTEL_P2P_OVERHEAD), so a
// Gen4 x16 hop it rates at 24 GB/s carries 20. A path through a PCIe switch, or between
// sockets, is not charged; on an unknown CPU the PCIe figure stands and the basis says so.
#include <gtest/gtest.h>

#include "commbench/topology/allreduce_algorithms.hpp"
#include "commbench/topology/cpu_interconnect.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

using test::gpu_layout;
using test::model_fixture;

const CpuType kIceLake{"x86_64", "GenuineIntel", 6, 0x6A};
const CpuType kZen3{"x86_64", "AuthenticAMD", 25, 1};

TEST(RootComplex, ChargeByCpu) {
  EXPECT_DOUBLE_EQ(*nccl_root_complex_traffic(kIceLake).pcie_charge, 1.2);
  // NCCL looks at the vendor alone: an Intel part of unknown generation still pays.
  EXPECT_DOUBLE_EQ(*nccl_root_complex_traffic({"x86_64", "GenuineIntel", -1, -1}).pcie_charge, 1.2);
  EXPECT_DOUBLE_EQ(*nccl_root_complex_traffic({"", "GenuineIntel", -1, -1}).pcie_charge, 1.2);
  EXPECT_DOUBLE_EQ(*nccl_root_complex_traffic(kZen3).pcie_charge, 1.0);
  EXPECT_DOUBLE_EQ(*nccl_root_complex_traffic({"arm64", "", -1, -1}).pcie_charge, 1.0);
  EXPECT_DOUBLE_EQ(*nccl_root_complex_traffic({"ppc64", "", -1, -1}).pcie_charge, 1.0);

  const RootComplexTraffic no_vendor = nccl_root_complex_traffic({"x86_64", "", -1, -1});
  EXPECT_FALSE(no_vendor.pcie_charge);
  EXPECT_EQ(no_vendor.why_unknown, "the source does not record the CPU vendor");
  const RootComplexTraffic nothing = nccl_root_complex_traffic({});
  EXPECT_FALSE(nothing.pcie_charge);
  EXPECT_EQ(nothing.why_unknown, "the source does not record the CPU type");
}

// 3 x A100 PCIe of one socket, NV12 on 0-1 only (NVIDIA/nccl-tests issue 178, which
// measured 20 GB/s): the ring's PCIe hops turn in the socket's root complex.
TEST(RootComplex, BridgedPairAndAThirdGpuDependOnTheCpuVendor) {
  const NodeTopology unknown = model_fixture("a100-pcie-nv12-pairs-2socket.xml");
  const JobLayout three = gpu_layout(unknown, 1, {0, 1, 2});

  NodeTopology intel = unknown;
  intel.cpu_type = kIceLake;
  const TheoreticalBusbw on_intel = theoretical_busbw(Collective::allreduce, intel, three);
  EXPECT_NEAR(*on_intel.spec_gbps, 31.5, 1e-9);
  EXPECT_NEAR(*on_intel.achievable_gbps, 20.0, 1e-9);  // 24 / 1.2
  EXPECT_EQ(
      on_intel.basis,
      "intra-node: not every GPU pair is NVLinked, best ring 0>1>2: slowest hop GPU 1 to GPU 2 (?) 31.5 GB/s; the "
      "ring turns in an Intel root complex (NCCL counts 6/5 of the traffic on its PCIe links: 20 GB/s)");
  // The ring's own figure, which the docs table compares with the measurement.
  const std::vector<AlgorithmBusbw> algorithms = allreduce_busbw_by_algorithm(intel, three);
  ASSERT_FALSE(algorithms.empty());
  EXPECT_EQ(algorithms.front().algorithm, "ring");
  EXPECT_NEAR(*algorithms.front().achievable_gbps, 20.0, 1e-9);

  NodeTopology amd = unknown;
  amd.cpu_type = kZen3;
  const TheoreticalBusbw on_amd = theoretical_busbw(Collective::allreduce, amd, three);
  EXPECT_NEAR(*on_amd.achievable_gbps, 24.0, 1e-9);
  EXPECT_EQ(on_amd.basis.find("root complex"), std::string::npos) << on_amd.basis;

  const TheoreticalBusbw said = theoretical_busbw(Collective::allreduce, unknown, three);
  EXPECT_NEAR(*said.achievable_gbps, 24.0, 1e-9);
  EXPECT_NE(said.basis.find("the ring turns in a CPU root complex, where NCCL counts 6/5 of the traffic on an Intel "
                            "CPU (20 GB/s; the source does not record the CPU vendor)"),
            std::string::npos)
      << said.basis;

  // The bridged pair alone never leaves NVLink: nothing to charge.
  const TheoreticalBusbw pair = theoretical_busbw(Collective::allreduce, intel, gpu_layout(intel, 1, {0, 1}));
  EXPECT_NEAR(*pair.achievable_gbps, 230.0, 1e-9);  // A100's ceiling, no charge
}

// All eight GPUs on Intel: the ring turns in each socket's root complex and crosses the
// sockets; the basis names both, each once, and the socket link (10) bounds it.
TEST(RootComplex, RingNamesEveryCrossingOnce) {
  NodeTopology node = model_fixture("a100-pcie-nv12-pairs-2socket.xml");
  node.cpu_type = kIceLake;
  const TheoreticalBusbw all = theoretical_busbw(Collective::allgather, node, gpu_layout(node, 1));
  EXPECT_NEAR(*all.achievable_gbps, 10.0, 1e-9);
  const std::string root = "turns in an Intel root complex (NCCL counts 6/5 of the traffic on its PCIe links: 20 GB/s)";
  const std::string sockets = "crosses the CPU interconnect (Intel Skylake UPI: NCCL plans 10 GB/s)";
  EXPECT_NE(all.basis.find("the ring " + root + " and " + sockets), std::string::npos) << all.basis;
  EXPECT_EQ(all.basis.find(root), all.basis.rfind(root)) << all.basis;
}

// Two L40S behind one PCIe switch (PIX) against two on the root ports of one socket.
TEST(RootComplex, OnlyPathsThroughTheCpuArePaid) {
  NodeTopology node = load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl/pcie-4gpu.xml");
  node.cpu_type = kIceLake;
  const TheoreticalBusbw switched = theoretical_busbw(Collective::sendrecv, node, gpu_layout(node, 1, {0, 1}));
  EXPECT_NEAR(*switched.achievable_gbps, 24.0, 1e-9);
  EXPECT_EQ(switched.basis.find("root complex"), std::string::npos) << switched.basis;

  const TheoreticalBusbw rooted = theoretical_busbw(Collective::sendrecv, node, gpu_layout(node, 1, {2, 3}));
  EXPECT_NEAR(*rooted.spec_gbps, 31.5, 1e-9);
  EXPECT_NEAR(*rooted.achievable_gbps, 20.0, 1e-9);
  EXPECT_NE(rooted.basis.find("turns in an Intel root complex"), std::string::npos) << rooted.basis;

  // Between sockets NCCL's path type is SYS, which it does not charge: the socket link's
  // figure (10 for Ice Lake) is all that lowers the hop.
  const TheoreticalBusbw across = theoretical_busbw(Collective::sendrecv, node, gpu_layout(node, 1, {1, 2}));
  EXPECT_NEAR(*across.achievable_gbps, 10.0, 1e-9);
  EXPECT_EQ(across.basis.find("root complex"), std::string::npos) << across.basis;
}

}  // namespace
}  // namespace commbench
