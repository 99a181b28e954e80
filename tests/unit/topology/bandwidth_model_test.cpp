// Theoretical busbw per collective for the hand-written nodes, against figures computed by
// hand from docs/bandwidth-model.md.
#include <gtest/gtest.h>

#include "commbench/analysis/collectives_bandwidth.hpp"
#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/hwloc_probe.hpp"
#include "commbench/topology/node_probe.hpp"

namespace commbench {
namespace {

const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/";

#define REQUIRE_HWLOC() \
  if (!hwloc_available()) GTEST_SKIP() << "built without hwloc (COMMBENCH_WITH_HWLOC=OFF)"

NodeTopology offline(const std::string& hwloc, const std::string& sysfs) {
  ProbeOptions options;
  options.hwloc_xml = kFixtures + "hwloc/" + hwloc;
  options.sysfs_root = kFixtures + "sysfs/" + sysfs;
  return probe_node(options);
}

JobLayout all_gpus(const NodeTopology& node, int nodes) {
  JobLayout layout;
  layout.nodes = nodes;
  layout.ranks_per_node = static_cast<int>(node.gpus.size());
  for (const Gpu& g : node.gpus) layout.gpu_bus_ids.push_back(g.bus_id);
  return layout;
}

TEST(BandwidthModel, DgxOneNode) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100.xml", "dgx-h100");
  const JobLayout layout = all_gpus(node, 1);
  // 18 NVLink 4 links x 25 GB/s = 450 spec; x 20.6 (NCCL's figure) = 370.8 achievable.
  for (const Collective op : {Collective::allgather, Collective::reducescatter, Collective::broadcast,
                              Collective::reduce, Collective::alltoall, Collective::sendrecv, Collective::alltoallv}) {
    const TheoreticalBusbw bw = theoretical_busbw(op, node, layout);
    ASSERT_TRUE(bw.spec_gbps) << name_of(op) << ": " << bw.basis;
    EXPECT_DOUBLE_EQ(*bw.spec_gbps, 450.0) << name_of(op);
    EXPECT_NEAR(*bw.achievable_gbps, 370.8, 1e-9) << name_of(op);
  }
  EXPECT_EQ(theoretical_busbw(Collective::allgather, node, layout).basis,
            "intra-node: NVLink 4: 18 links x 25 GB/s per GPU (GPU 0) = 450 GB/s");
}

// Issue 14, defect 1: nccl-tests reads 450-480 GB/s allreduce busbw on such a node with
// NVLink SHARP; a spec of 450 made a healthy node read above 100 %.
TEST(BandwidthModel, DgxOneNodeAllreduceUsesNvls) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100.xml", "dgx-h100");
  const TheoreticalBusbw bw = theoretical_busbw(Collective::allreduce, node, all_gpus(node, 1));
  // Each GPU moves (k+1)/k of the buffer each way: 450 x 2(k-1)/(k+1) = 450 x 14/9.
  EXPECT_DOUBLE_EQ(*bw.spec_gbps, 700.0);
  // NCCL: 8 channels at 40 GB/s (9 x 40 of a GPU's 370.8), x 0.85 (nvlsEfficiency,
  // Hopper) x 2 x 7/8 each: 476, not 370.8 x 14/9 x 0.85 = 490.3.
  EXPECT_NEAR(*bw.achievable_gbps, 8 * 40 * 0.85 * 7.0 / 4.0, 1e-9);
  EXPECT_GE(*bw.spec_gbps, 480.0);  // the highest published figure for 8 x H100 SXM
  EXPECT_EQ(bw.algorithm, "NVLS");
  EXPECT_EQ(bw.basis,
            "NVLS: NVLink SHARP (the NVSwitches reduce): GPU 0: 18 NVSwitch links x 25 GB/s = 450 GB/s x 2(k-1)/(k+1) "
            "= 700 GB/s; achievable: NCCL plans 8 channels at 40 GB/s, x 0.85 (its NVLS efficiency) x 2(k-1)/k = "
            "476 GB/s");
}

TEST(BandwidthModel, DgxTwoAndFourNodes) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100.xml", "dgx-h100");
  for (const int nodes : {2, 4}) {
    const JobLayout layout = all_gpus(node, nodes);
    // Ring: min(450 NVLink, 8 x 50 GB/s NICs = 400); achievable min(370.8, 400 x 0.96 = 384).
    const TheoreticalBusbw ring = theoretical_busbw(Collective::allgather, node, layout);
    EXPECT_DOUBLE_EQ(*ring.spec_gbps, 400.0);
    EXPECT_NEAR(*ring.achievable_gbps, 370.8, 1e-9);
    // Allreduce: NVLS inside the node and a tree between nodes. Two nodes: the NICs carry
    // the buffer once each way, 400 x 2(n-1)/n = 750, as does NVLS (450 x 8/9 x 15/8);
    // achievable min(NVLS 476, 2 x 384, NCCL's cap of 57.7 per channel x 8 = 461.6). Four
    // nodes: SHARP could carry 400 x 31/16 = 775; NCCL's NVLS-tree cap (45.5 x 8 = 364)
    // falls below the ring's 370.8, the best NCCL plans there.
    const TheoreticalBusbw allreduce = theoretical_busbw(Collective::allreduce, node, layout);
    EXPECT_NEAR(*allreduce.spec_gbps, nodes == 2 ? 750.0 : 775.0, 1e-9);
    EXPECT_NEAR(*allreduce.achievable_gbps, nodes == 2 ? 8 * 57.7 : 370.8, 1e-9);
    EXPECT_EQ(allreduce.algorithm, nodes == 2 ? "NVLS-tree" : "CollNet");
    if (nodes == 4) EXPECT_NE(allreduce.basis.find("achievable by ring"), std::string::npos) << allreduce.basis;
    // All-to-all: n = 8 x nodes ranks, k = 8 per node; the NICs carry k(n-k)/n of a
    // rank's buffer per node: 400 x (n-1) / (k (n-k)).
    const double n = 8.0 * nodes, k = 8.0;
    const TheoreticalBusbw a2a = theoretical_busbw(Collective::alltoall, node, layout);
    EXPECT_NEAR(*a2a.spec_gbps, 400.0 * (n - 1) / (k * (n - k)), 1e-9);
    EXPECT_NEAR(*a2a.spec_gbps, nodes == 2 ? 93.75 : 64.583333333, 1e-6);  // 400 x 15/64, 400 x 31/192
    // Achievable: the NICs at 384 (x 0.96) bound it, not NVLink's 370.8 x (n-1)/(k-1).
    EXPECT_NEAR(*a2a.achievable_gbps, nodes == 2 ? 90.0 : 62.0, 1e-9);  // 384 x 15/64, 384 x 31/192
    // alltoallv gets alltoall's bound: the balanced exchange is the best any split can do.
    const TheoreticalBusbw a2av = theoretical_busbw(Collective::alltoallv, node, layout);
    EXPECT_EQ(a2av.spec_gbps, a2a.spec_gbps);
    EXPECT_EQ(a2av.achievable_gbps, a2a.achievable_gbps);
    EXPECT_EQ(a2av.basis, a2a.basis);
    // Send/recv: one flow leaves through the last GPU's own NIC: 50 GB/s.
    const TheoreticalBusbw p2p = theoretical_busbw(Collective::sendrecv, node, layout);
    EXPECT_DOUBLE_EQ(*p2p.spec_gbps, 50.0);
    EXPECT_DOUBLE_EQ(*p2p.achievable_gbps, 48.0);
  }
}

TEST(BandwidthModel, DegradedNodeIsBoundByItsWeakestPart) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100-degraded.xml", "degraded");
  // GPU 5 has 16 links: 400 spec, 16 x 20.6 = 329.6 achievable on one node.
  const TheoreticalBusbw one = theoretical_busbw(Collective::allgather, node, all_gpus(node, 1));
  EXPECT_DOUBLE_EQ(*one.spec_gbps, 400.0);
  EXPECT_NEAR(*one.achievable_gbps, 329.6, 1e-9);
  // Between nodes: mlx5_3 is down and mlx5_5 runs at 25 GB/s: 6 x 50 + 25 = 325.
  const TheoreticalBusbw two = theoretical_busbw(Collective::allgather, node, all_gpus(node, 2));
  EXPECT_DOUBLE_EQ(*two.spec_gbps, 325.0);
  EXPECT_NEAR(*two.achievable_gbps, 312.0, 1e-9);
  EXPECT_NE(two.basis.find("7 active NIC ports (mlx5_0,mlx5_1,mlx5_2,mlx5_4,mlx5_5,mlx5_6,mlx5_7) = 325 GB/s per node"),
            std::string::npos)
      << two.basis;
}

TEST(BandwidthModel, PcieServer) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("pcie-4gpu.xml", "pcie-4gpu");
  // Ring over the GPUs in bus order, every link Gen4 x16: 31.5 spec, x 12/15.75 achievable.
  const TheoreticalBusbw one = theoretical_busbw(Collective::allreduce, node, all_gpus(node, 1));
  EXPECT_NEAR(*one.spec_gbps, 31.508, 0.001);
  EXPECT_NEAR(*one.achievable_gbps, 31.508 * 12.0 / 15.75, 0.001);
  // The export names an Intel CPU without its model number, and NCCL's figure for the hop
  // between sockets depends on it: the achievable figure stays the PCIe one, and says why.
  EXPECT_NE(one.basis.find("crosses the CPU interconnect, whose bandwidth is not modelled: the CPU's family and "
                           "model numbers are not recorded"),
            std::string::npos)
      << one.basis;
  // Two nodes: GPUs 0/1 have no NIC on their switch, 2/3 neither (PHB): all RDMA ports
  // count, 2 x 25 = 50 GB/s per node, above the PCIe ring.
  const TheoreticalBusbw two = theoretical_busbw(Collective::allreduce, node, all_gpus(node, 2));
  EXPECT_NEAR(*two.spec_gbps, 31.508, 0.001);
  // Only GPUs 0 and 1: their switch path.
  JobLayout pair;
  pair.nodes = 1;
  pair.ranks_per_node = 2;
  pair.gpu_bus_ids = {"0000:03:00.0", "0000:04:00.0"};
  EXPECT_NEAR(*theoretical_busbw(Collective::sendrecv, node, pair).spec_gbps, 31.508, 0.001);
  EXPECT_EQ(theoretical_busbw(Collective::sendrecv, node, pair).basis, "intra-node: GPU 0 to GPU 1: PIX 31.51 GB/s");
}

// `nodes` nodes, each running one rank on each of these GPUs.
JobLayout gpus_by_bus_id(int nodes, std::vector<std::string> bus_ids) {
  JobLayout layout;
  layout.nodes = nodes;
  layout.ranks_per_node = static_cast<int>(bus_ids.size());
  layout.gpu_bus_ids = std::move(bus_ids);
  return layout;
}

// A GPU with no NIC on its switch still sends from the GPU: through the fastest compute
// port, but bounded by its own PCIe link, not modelled as a host rank.
TEST(BandwidthModel, AGpuWithoutANicOnItsSwitchIsStillBoundByItsOwnLink) {
  REQUIRE_HWLOC();
  NodeTopology node = offline("pcie-4gpu.xml", "pcie-4gpu");
  const JobLayout one_gpu = gpus_by_bus_id(2, {"0000:03:00.0"});
  EXPECT_DOUBLE_EQ(*theoretical_busbw(Collective::sendrecv, node, one_gpu).spec_gbps, 25.0);  // one 200G port
  for (const Gpu& gpu : node.gpus)
    if (gpu.bus_id == "0000:03:00.0") node.pci[static_cast<std::size_t>(gpu.pci)].link_gbps = 15.75;  // Gen3 x16
  const TheoreticalBusbw narrow = theoretical_busbw(Collective::sendrecv, node, one_gpu);
  EXPECT_DOUBLE_EQ(*narrow.spec_gbps, 15.75) << narrow.basis;
  EXPECT_EQ(narrow.basis, "inter-node: NIC mlx5_0 15.75 GB/s");  // the path to the port, through the GPU's link
}

// An export with host bridges names a path through the root complex itself (PHB), not by
// the NUMA-node fallback NCCL dumps need. On this Intel CPU NCCL charges such a hop 6/5,
// which the model follows; the PIX pair through a switch pays nothing. GPU 1 is moved from
// GPU 0's switch to the host bridge above it.
TEST(BandwidthModel, APhbPairOnAnIntelCpuPaysTheRootComplexCharge) {
  REQUIRE_HWLOC();
  NodeTopology node = offline("pcie-4gpu.xml", "pcie-4gpu");
  const JobLayout pair = gpus_by_bus_id(1, {"0000:03:00.0", "0000:04:00.0"});
  const TheoreticalBusbw pix = theoretical_busbw(Collective::sendrecv, node, pair);
  ASSERT_NE(pix.basis.find("PIX"), std::string::npos) << pix.basis;
  int host_bridge = node.gpus[0].pci;
  while (node.pci[static_cast<std::size_t>(host_bridge)].kind != PciKind::host_bridge)
    host_bridge = node.pci[static_cast<std::size_t>(host_bridge)].parent;
  node.pci[static_cast<std::size_t>(node.gpus[1].pci)].parent = host_bridge;
  const TheoreticalBusbw phb = theoretical_busbw(Collective::sendrecv, node, pair);
  ASSERT_NE(phb.basis.find("PHB"), std::string::npos) << phb.basis;
  EXPECT_NEAR(*phb.spec_gbps, *pix.spec_gbps, 1e-9);
  EXPECT_NEAR(*phb.achievable_gbps * 1.2, *pix.achievable_gbps, 1e-9) << phb.basis << " / " << pix.basis;
}

TEST(BandwidthModel, HostRanksSayWhatIsUnknown) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("pcie-4gpu.xml", "pcie-4gpu");
  JobLayout host;
  host.nodes = 1;
  host.ranks_per_node = 4;
  const TheoreticalBusbw local = theoretical_busbw(Collective::allreduce, node, host);
  EXPECT_FALSE(local.spec_gbps);
  EXPECT_EQ(
      local.basis,
      "intra-node bandwidth unknown: ranks on one node exchange through shared memory, which has no spec bandwidth");
  host.ranks_per_node = 1;
  host.nodes = 2;
  // One host rank per node: the RDMA ports carry it (2 x 200 Gb/s).
  const TheoreticalBusbw across = theoretical_busbw(Collective::broadcast, node, host);
  EXPECT_DOUBLE_EQ(*across.spec_gbps, 50.0);
  host.nodes = 1;
  EXPECT_EQ(theoretical_busbw(Collective::allreduce, node, host).basis, "one rank: nothing crosses a link");
}

TEST(BandwidthModel, HostRanksFallBackToEthernetAndSaySo) {
  NodeTopology node;
  Nic eth;
  eth.name = "eth0";
  eth.rdma = false;
  NicPort port;
  port.state_code = 4;
  port.state = "ACTIVE";
  port.rate_gbit = 100;
  port.link_layer = "Ethernet";
  eth.ports = {port};
  node.nics = {eth};
  JobLayout host;
  host.nodes = 2;
  host.ranks_per_node = 1;
  const TheoreticalBusbw bw = theoretical_busbw(Collective::allreduce, node, host);
  EXPECT_DOUBLE_EQ(*bw.spec_gbps, 12.5);
  EXPECT_EQ(bw.basis,
            "inter-node: 1 active NIC port (eth0) = 12.5 GB/s per node (assumes MPI uses the fastest active port)");
  node.nics[0].ports[0].state_code = 1;
  EXPECT_EQ(theoretical_busbw(Collective::allreduce, node, host).basis,
            "inter-node bandwidth unknown: no active NIC port found to carry traffic between nodes");
}

TEST(BandwidthModel, MissingGpuIsNamed) {
  NodeTopology node;
  JobLayout layout;
  layout.ranks_per_node = 2;
  layout.gpu_bus_ids = {"0000:01:00.0", "0000:02:00.0"};
  EXPECT_EQ(theoretical_busbw(Collective::allreduce, node, layout).basis,
            "intra-node bandwidth unknown: GPU 0000:01:00.0 is not in the probed topology");
  EXPECT_DOUBLE_EQ(nccl_model_nvlink_gbps(4), 20.6);
  EXPECT_DOUBLE_EQ(nccl_model_nvlink_gbps(5), 40.1);
}

TEST(CollectivesBandwidth, RowsGetSpecAchievableAndEfficiency) {
  CollectiveBandwidths model;
  model[Collective::allreduce] = {400.0, 370.8, "intra-node: NVLink", "NVLS"};
  model[Collective::broadcast] = {std::nullopt, std::nullopt, "one rank: nothing crosses a link"};
  ResultRow row;
  row.op_case.op = Collective::allreduce;
  row.busbw_gbps = 300.0;
  apply_bandwidth_model(model, row);
  EXPECT_DOUBLE_EQ(*row.theoretical_busbw_gbps, 400.0);
  EXPECT_DOUBLE_EQ(*row.achievable_busbw_gbps, 370.8);
  EXPECT_DOUBLE_EQ(*row.efficiency, 0.75);  // against spec, not achievable
  EXPECT_EQ(row.model_algo, "NVLS");        // the algorithm that bound is for
  ResultRow unknown;
  unknown.op_case.op = Collective::broadcast;
  apply_bandwidth_model(model, unknown);
  EXPECT_FALSE(unknown.theoretical_busbw_gbps);
  EXPECT_FALSE(unknown.efficiency);
  EXPECT_EQ(unknown.model_algo, "");  // no bound, no algorithm
  EXPECT_EQ(bandwidth_notes(model),
            (std::vector<std::string>{
                "theoretical busbw of allreduce: spec 400 GB/s, achievable 370.8 GB/s; intra-node: NVLink",
                "theoretical busbw of broadcast: unknown; one rank: nothing crosses a link"}));
}

}  // namespace
}  // namespace commbench
