// Issue 14, defect 2: not every GPU pair is NVLinked. A ring through every GPU must then
// cross PCIe or the CPU interconnect, and an all-to-all sends to peers without NVLink
// through the GPU's PCIe link.
#include <gtest/gtest.h>

#include <algorithm>

#include "commbench/topology/allreduce_algorithms.hpp"
#include "commbench/topology/gpu_ring.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

using test::gpu_layout;
using test::model_fixture;

TEST(PartialMesh, BridgedPairsRingCrossesSys) {
  // 4 x A100 PCIe, NVLink bridges on 0-1 and 2-3 only: the old model gave 12 x 25 = 300.
  const NodeTopology node = model_fixture("ncv4-nvlink-pairs.xml");
  const TheoreticalBusbw allreduce = theoretical_busbw(Collective::allreduce, node, gpu_layout(node, 1));
  EXPECT_NEAR(*allreduce.spec_gbps, 31.5, 1e-9);  // PCIe Gen4 x16 on the SYS hop
  // NCCL plans the SYS hop at its AMD figure (16), below its Gen4 x16 figure (24).
  EXPECT_NEAR(*allreduce.achievable_gbps, 16.0, 1e-9);
  EXPECT_EQ(allreduce.basis,
            "intra-node: not every GPU pair is NVLinked, best ring 0>1>2>3: slowest hop GPU 1 to GPU 2 (SYS) 31.5 "
            "GB/s; the ring crosses the CPU interconnect (AMD xGMI: NCCL plans 16 GB/s)");
  // All-to-all: GPU 0 sends to 2 of its 3 peers through its own PCIe link: 31.5 x 3/2.
  const TheoreticalBusbw alltoall = theoretical_busbw(Collective::alltoall, node, gpu_layout(node, 1));
  EXPECT_NEAR(*alltoall.spec_gbps, 47.25, 1e-9);
  EXPECT_NEAR(*alltoall.achievable_gbps, 24.0, 1e-9);  // 16 x 3/2
  EXPECT_EQ(alltoall.basis,
            "intra-node: GPU 0 reaches 2 of its 3 peers without NVLink: PCIe 31.5 GB/s shared x 3/2; the path crosses "
            "the CPU interconnect (AMD xGMI: NCCL plans 16 GB/s)");
}

TEST(PartialMesh, BridgedPairAloneKeepsItsNvlinks) {
  const NodeTopology node = model_fixture("ncv4-nvlink-pairs.xml");
  const TheoreticalBusbw pair = theoretical_busbw(Collective::allreduce, node, gpu_layout(node, 1, {0, 1}));
  EXPECT_DOUBLE_EQ(*pair.spec_gbps, 300.0);
  EXPECT_DOUBLE_EQ(*pair.achievable_gbps, 230.0);  // 12 x 20, at most A100's 230
}

TEST(PartialMesh, SocketCrossingOfAnUnknownCpuIsSaidNotGuessed) {
  // 8 x A100 PCIe in NV12 pairs, four per socket (NVIDIA/nccl-tests issue 178): the ring
  // must cross sockets, and the dump names no CPU vendor, so NCCL's figure for that hop is
  // unknown; the achievable figure stays the PCIe path's.
  const NodeTopology node = model_fixture("a100-pcie-nv12-pairs-2socket.xml");
  const TheoreticalBusbw all = theoretical_busbw(Collective::allgather, node, gpu_layout(node, 1));
  EXPECT_NEAR(*all.spec_gbps, 31.5, 1e-9);
  EXPECT_NEAR(*all.achievable_gbps, 24.0, 1e-9);
  EXPECT_NE(all.basis.find("crosses the CPU interconnect, whose bandwidth is not modelled: the source does not "
                           "record the CPU vendor"),
            std::string::npos)
      << all.basis;
  // Three GPUs of one socket: the ring leaves NVLink but not the socket.
  const TheoreticalBusbw three = theoretical_busbw(Collective::allgather, node, gpu_layout(node, 1, {0, 1, 2}));
  EXPECT_NEAR(*three.achievable_gbps, 24.0, 1e-9);
  EXPECT_EQ(three.basis.find("CPU interconnect"), std::string::npos) << three.basis;
  // Named AMD, the ring's achievable figure is its smallest over every hop (a SYS hop at
  // 16), not that of the hop with the smallest spec (GPU 1 to GPU 2 inside a socket, 24).
  NodeTopology amd = node;
  amd.cpu_type = {"x86_64", "AuthenticAMD", 25, 1};
  const TheoreticalBusbw named = theoretical_busbw(Collective::allgather, amd, gpu_layout(amd, 1));
  EXPECT_NEAR(*named.spec_gbps, 31.5, 1e-9);
  EXPECT_NEAR(*named.achievable_gbps, 16.0, 1e-9);
  EXPECT_NE(named.basis.find("slowest hop GPU 1 to GPU 2"), std::string::npos) << named.basis;
}

TEST(PartialMesh, CubeMeshAlltoallIsBoundBySysHops) {
  // DGX-1 V100: rings stay on NVLink (6 links x 25), but 3 of 7 peers have no NVLink:
  // they share the GPU's Gen3 x16 link, 15.75 x 7/3 = 36.75 (the old model said 150). They
  // sit on the other socket: NCCL plans that hop at 10 GB/s on Skylake, 10 x 7/3 = 23.33.
  const NodeTopology node = model_fixture("dgx1-v100-cube-mesh.xml");
  const JobLayout layout = gpu_layout(node, 1);
  const TheoreticalBusbw ring = theoretical_busbw(Collective::allreduce, node, layout);
  EXPECT_DOUBLE_EQ(*ring.spec_gbps, 150.0);
  EXPECT_DOUBLE_EQ(*ring.achievable_gbps, 120.0);
  EXPECT_EQ(ring.algorithm, "ring");  // V100 NVLink: no NVSwitch, no NVLS
  const TheoreticalBusbw alltoall = theoretical_busbw(Collective::alltoall, node, layout);
  EXPECT_NEAR(*alltoall.spec_gbps, 36.75, 1e-9);
  EXPECT_NEAR(*alltoall.achievable_gbps, 10.0 * 7 / 3, 1e-9);
  // Sendrecv between neighbours in bus order: GPU 3 to GPU 4 crosses sockets.
  const TheoreticalBusbw pair = theoretical_busbw(Collective::sendrecv, node, layout);
  EXPECT_NEAR(*pair.spec_gbps, 15.75, 1e-9);
  EXPECT_NEAR(*pair.achievable_gbps, 10.0, 1e-9);
  EXPECT_EQ(pair.basis,
            "intra-node: GPU 3 to GPU 4: SYS 15.75 GB/s; the path crosses the CPU interconnect (Intel Skylake UPI: "
            "NCCL plans 10 GB/s)");
  EXPECT_EQ(alltoall.basis,
            "intra-node: GPU 0 reaches 3 of its 7 peers without NVLink: PCIe 15.75 GB/s shared x 7/3; the path "
            "crosses the CPU interconnect (Intel Skylake UPI: NCCL plans 10 GB/s)");
}

TEST(PartialMesh, BestRingPrefersNvlinkHops) {
  const NodeTopology node = model_fixture("dgx1-v100-cube-mesh.xml");
  std::vector<int> gpus(node.gpus.size());
  for (std::size_t g = 0; g < gpus.size(); ++g) gpus[g] = static_cast<int>(g);
  std::string why;
  const std::optional<GpuRing> ring = best_gpu_ring(node, gpus, why);
  ASSERT_TRUE(ring) << why;
  EXPECT_TRUE(ring->nvlink_only);
  // A ring of NV2 hops exists (0>3>2>1>5>6>7>4): the search finds it.
  EXPECT_DOUBLE_EQ(ring->slowest.spec_gbps, 50.0);
  EXPECT_FALSE(all_pairs_nvlinked(node, gpus));
  EXPECT_TRUE(all_pairs_nvlinked(node, {0, 1, 2, 3}));
}

}  // namespace
}  // namespace commbench
