// bench-p2p --local's reading of a node's topology, on real NCCL topology dumps: which GPU
// pairs are NVLinked, each GPU's NUMA node, and the spec of every kind of cell.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "commbench/analysis/local_node_model.hpp"
#include "commbench/analysis/pair_cell_json.hpp"
#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/topology/nccl_topo_xml.hpp"

namespace commbench {
namespace {

NodeTopology fixture(const std::string& path) {
  return load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/" + path);
}

std::vector<std::string> bus_ids_of(const NodeTopology& topology) {
  std::vector<std::string> ids;
  for (const Gpu& gpu : topology.gpus) ids.push_back(gpu.bus_id);
  return ids;
}

// Every pair with peer access, except those named.
std::vector<std::vector<PeerAccess>> access_for(std::size_t gpus, std::set<std::pair<int, int>> without = {}) {
  std::vector<std::vector<PeerAccess>> access(gpus, std::vector<PeerAccess>(gpus));
  for (std::size_t source = 0; source < gpus; ++source)
    for (std::size_t destination = 0; destination < gpus; ++destination)
      access[source][destination].supported =
          source != destination &&
          without.count({static_cast<int>(source), static_cast<int>(destination)}) == 0;
  return access;
}

LocalLinkTest gpu_pair(int source, int destination) {
  LocalLinkTest test;
  test.source = source;
  test.destination = destination;
  return test;
}

LocalLinkTest host_test(int gpu, HostMemoryRole role) {
  LocalLinkTest test;
  test.transfer = LocalTransfer::host_to_gpu;
  test.gpu = gpu;
  test.role = role;
  return test;
}

TEST(LocalNodeModel, NvlinkPairsOfAPartialMeshAndNumaNodesPerGpu) {
  // Azure NCv4: 4 A100 PCIe, NVLink bridges on 0-1 and 2-3 only, each GPU on its own NUMA node.
  const NodeTopology topology = fixture("model/ncv4-nvlink-pairs.xml");
  const std::vector<std::string> buses = bus_ids_of(topology);
  const auto nvlink = nvlink_matrix(&topology, buses);
  EXPECT_EQ(nvlink[0][1], std::optional<bool>(true));
  EXPECT_EQ(nvlink[1][0], std::optional<bool>(true));
  EXPECT_EQ(nvlink[2][3], std::optional<bool>(true));
  EXPECT_EQ(nvlink[0][2], std::optional<bool>(false));
  EXPECT_EQ(nvlink[3][1], std::optional<bool>(false));
  EXPECT_EQ(nvlink[0][0], std::nullopt);

  const LocalNode node = describe_local_node(&topology, "ncv4", 0, buses, access_for(4, {{0, 2}}));
  EXPECT_EQ(node.gpu_numa, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(node.numa_nodes, (std::vector<int>{0, 1, 2, 3}));
  const PeerAccessCodes codes = peer_access_codes(node, nvlink);
  EXPECT_EQ(codes[0], (std::vector<std::string>{"X", "NV", "host", "P2P"}));

  // A pair without peer access is staged through the host, and the spec's text says so.
  const LinkSpec staged = local_link_spec(&topology, "", node, gpu_pair(0, 2));
  EXPECT_NE(staged.description.find("; no peer access: staged through host memory"), std::string::npos)
      << staged.description;
  const LinkSpec bridged = local_link_spec(&topology, "", node, gpu_pair(0, 1));
  ASSERT_TRUE(bridged.gbps);
  ASSERT_TRUE(staged.gbps);
  EXPECT_GT(*bridged.gbps, *staged.gbps);  // the bridge's 12 NVLinks against the path over PCIe
}

TEST(LocalNodeModel, EveryPairOfAnNvswitchNodeIsNvlinked) {
  const NodeTopology topology = fixture("nccl/dgx-h100.xml");
  const auto nvlink = nvlink_matrix(&topology, bus_ids_of(topology));
  for (std::size_t source = 0; source < 8; ++source)
    for (std::size_t destination = 0; destination < 8; ++destination)
      if (source != destination) EXPECT_EQ(nvlink[source][destination], std::optional<bool>(true));
  // A bus id the topology does not know: cannot say.
  EXPECT_EQ(nvlink_matrix(&topology, {"0000:18:00.0", "0000:ff:00.0"})[0][1], std::nullopt);
  EXPECT_EQ(nvlink_matrix(nullptr, {"a", "b"})[0][1], std::nullopt);
}

TEST(LocalNodeModel, HostTransfersAreReadAgainstTheGpusPcieLinkPageableAgainstNothing) {
  const NodeTopology topology = fixture("nccl/dgx-h100.xml");  // Gen5 x16 GPUs on 2 NUMA nodes
  const std::vector<std::string> buses = bus_ids_of(topology);
  const LocalNode node = describe_local_node(&topology, "dgx", 0, buses, access_for(8));
  EXPECT_EQ(node.gpu_numa, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));

  const LinkSpec near = local_link_spec(&topology, "", node, host_test(5, HostMemoryRole::pinned_near));
  EXPECT_EQ(near.gbps, std::optional<double>(63.0));
  EXPECT_EQ(near.description, "PCIe Gen5 x16: 63 GB/s per direction");
  const LinkSpec far = local_link_spec(&topology, "", node, host_test(5, HostMemoryRole::pinned_far));
  EXPECT_EQ(far.gbps, std::optional<double>(63.0));
  EXPECT_EQ(far.description, "PCIe Gen5 x16: 63 GB/s per direction, and the link between the NUMA nodes");
  const LinkSpec pageable = local_link_spec(&topology, "", node, host_test(5, HostMemoryRole::pageable));
  EXPECT_EQ(pageable.gbps, std::nullopt);
  EXPECT_NE(pageable.description.find("pageable memory is staged by the driver"), std::string::npos);

  // A GPU pair is the model's pair budget: 18 NVLink 4 links of 25 GB/s to the switches.
  const LinkSpec pair = local_link_spec(&topology, "", node, gpu_pair(0, 7));
  EXPECT_EQ(pair.gbps, std::optional<double>(450.0));
  EXPECT_EQ(pair.description, "GPU 0 to GPU 7: NV18 450 GB/s");

  PairCell cell;
  cell.gbps = 50.4;
  cell.link = "pages on NUMA node 0, not 1";
  apply_link_spec(far, cell);
  EXPECT_EQ(cell.theoretical_gbps, std::optional<double>(63.0));
  ASSERT_TRUE(cell.efficiency);
  EXPECT_DOUBLE_EQ(*cell.efficiency, 0.8);
  EXPECT_EQ(cell.link,
            "PCIe Gen5 x16: 63 GB/s per direction, and the link between the NUMA nodes; pages on NUMA node 0, not 1");
}

TEST(LocalNodeModel, WithoutATopologyNothingIsKnownAndTheFailureIsSaid) {
  const LocalNode node = describe_local_node(nullptr, "h", 0, {"0000:01:00.0", "0000:02:00.0"}, access_for(2));
  EXPECT_EQ(node.gpu_numa, (std::vector<int>{-1, -1}));
  EXPECT_TRUE(node.numa_nodes.empty());
  const LinkSpec spec = local_link_spec(nullptr, "hwloc: no such file", node, gpu_pair(0, 1));
  EXPECT_EQ(spec.gbps, std::nullopt);
  EXPECT_EQ(spec.description, "topology probe failed: hwloc: no such file");
  // A GPU the topology does not list has no PCIe link to read against.
  const NodeTopology topology = fixture("nccl/dgx-h100.xml");
  const LinkSpec unknown = local_link_spec(&topology, "", node, host_test(0, HostMemoryRole::pinned_near));
  EXPECT_EQ(unknown.gbps, std::nullopt);
  EXPECT_EQ(unknown.description, "the GPU's PCIe link is unknown to the topology probe");
}

// bench-p2p --local sends each node's cells to rank 0 through the typed exchange.
TEST(PairCellExchange, ACellTravelsToRankZeroWithEveryField) {
  LocalBootstrap group;
  PairCell cell;
  cell.src_rank = 3;
  cell.dst_rank = 3;
  cell.src_host = cell.dst_host = "gpu07";
  cell.src_device = "host NUMA 1 pinned";
  cell.dst_device = "GPU 0000:18:00.0";
  cell.bytes = 64ULL << 20;
  cell.direction = PairDirection::both;
  cell.round = 2;
  cell.rail = 5;
  cell.gbps = 48.25;
  cell.latency_us = 1.5;
  cell.theoretical_gbps = 63.0;
  cell.efficiency = 48.25 / 63.0;
  cell.link = "PCIe Gen5 x16";
  cell.flagged = true;
  cell.flag_reason = "why";
  cell.method = "pinned-far";
  cell.nics = "gpu07 mlx5_0:1 0.61 GB/s";
  const PairCell back = all_gather_as(group, cell).at(0);
  EXPECT_EQ(cells_csv({back}), cells_csv({cell}));
  EXPECT_EQ(cell_json(back), cell_json(cell));
  EXPECT_EQ(back.direction, PairDirection::both);
  EXPECT_EQ(back.nics, cell.nics);

  PairCell sparse;  // what is unknown stays unknown
  const PairCell sparse_back = all_gather_as(group, sparse).at(0);
  EXPECT_EQ(sparse_back.latency_us, std::nullopt);
  EXPECT_EQ(sparse_back.theoretical_gbps, std::nullopt);
  EXPECT_EQ(sparse_back.rail, std::nullopt);
  EXPECT_EQ(sparse_back.method, "send/recv");
}

}  // namespace
}  // namespace commbench
