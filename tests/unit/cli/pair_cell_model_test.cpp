// A bench-p2p cell between nodes reads against the NICs NCCL gives the sending GPU among
// the GPUs of the sender's own host; inside a node against the GPUs' path. NDv4 (two GPUs
// and two HDR NICs per PCIe switch): host a runs all eight GPUs, host b GPU 0 alone.
#include <gtest/gtest.h>

#include "commbench/analysis/pair_cell_model.hpp"
#include "../topology/model_fixtures.hpp"

namespace commbench {
namespace {

std::string bus_of_device(const NodeTopology& node, int index) {
  for (const Gpu& gpu : node.gpus)
    if (gpu.index == index) return gpu.bus_id;
  ADD_FAILURE() << "no GPU " << index;
  return "";
}

struct TwoHosts {
  NodeTopology node = test::model_fixture("ndv4-a100-nvswitch.xml");
  std::vector<std::string> hostnames, bus_ids;  // per rank: 0-7 on a (GPUs 0-7), 8 on b (GPU 0)
  TwoHosts() {
    test::ports_active(node, "InfiniBand");
    for (int device = 0; device < 8; ++device) {
      hostnames.push_back("a");
      bus_ids.push_back(bus_of_device(node, device));
    }
    hostnames.push_back("b");
    bus_ids.push_back(bus_of_device(node, 0));
  }
  PairCell cell(int src, int dst, double gbps) const {
    PairCell result;
    result.src_rank = src;
    result.dst_rank = dst;
    result.src_host = hostnames[static_cast<std::size_t>(src)];
    result.dst_host = hostnames[static_cast<std::size_t>(dst)];
    result.gbps = gbps;
    return result;
  }
  // The cell src -> dst at `gbps` as apply_link_model reads it, with these ranks' GPUs.
  PairCell modelled(int src, int dst, double gbps, const std::vector<std::string>& gpus) const {
    PairCell result = cell(src, dst, gbps);
    apply_link_model(node, "", gpus, hostnames, result);
    return result;
  }
  PairCell modelled(int src, int dst, double gbps) const { return modelled(src, dst, gbps, bus_ids); }
};

TEST(PairCellModel, BetweenNodesTheSendersHostDecidesItsNics) {
  const TwoHosts hosts;
  // GPU 1 of a full host: one NIC of its switch, mlx5_1.
  const PairCell out = hosts.modelled(1, 8, 20.0);
  ASSERT_TRUE(out.theoretical_gbps) << out.link;
  EXPECT_DOUBLE_EQ(*out.theoretical_gbps, 25.0);
  EXPECT_EQ(out.link.rfind("NIC mlx5_1 25 GB/s", 0), 0u) << out.link;
  EXPECT_DOUBLE_EQ(*out.efficiency, 0.8);
  // GPU 0 alone on b: both NICs of its switch, behind its Gen4 x16 link.
  const PairCell back = hosts.modelled(8, 1, 20.0);
  ASSERT_TRUE(back.theoretical_gbps) << back.link;
  EXPECT_NEAR(*back.theoretical_gbps, 31.5, 0.01);
  EXPECT_EQ(back.link.rfind("NIC mlx5_0,mlx5_1 50 GB/s", 0), 0u) << back.link;
}

TEST(PairCellModel, InsideANodeTheGpusPathAndHostRanksTheFastestPort) {
  const TwoHosts hosts;
  const PairCell inside = hosts.modelled(0, 1, 200.0);
  ASSERT_TRUE(inside.theoretical_gbps) << inside.link;
  EXPECT_DOUBLE_EQ(*inside.theoretical_gbps, 300.0);  // 12 NVLink 3 links x 25 through the NVSwitches
  const PairCell host_ranks = hosts.modelled(1, 8, 20.0, std::vector<std::string>(hosts.bus_ids.size()));
  ASSERT_TRUE(host_ranks.theoretical_gbps) << host_ranks.link;
  EXPECT_DOUBLE_EQ(*host_ranks.theoretical_gbps, 25.0);  // one HDR port
  PairCell unknown = hosts.cell(1, 8, 20.0);
  apply_link_model(std::nullopt, "hwloc said no", hosts.bus_ids, hosts.hostnames, unknown);
  EXPECT_FALSE(unknown.theoretical_gbps);
  EXPECT_EQ(unknown.link, "topology probe failed: hwloc said no");
}

}  // namespace
}  // namespace commbench
