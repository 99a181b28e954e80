#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "commbench/p2p/local_link_plan.hpp"

namespace commbench {
namespace {

// A node of `gpus` GPUs, the first half on NUMA node 0 and the rest on 1 (`numa_nodes`
// of them in all), every pair with peer access unless `no_access` names it.
LocalNode node_of(int gpus, int numa_nodes = 2, std::set<std::pair<int, int>> no_access = {}) {
  LocalNode node;
  node.host = "gpu01";
  node.rank = 3;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    node.bus_ids.push_back("0000:" + std::to_string(10 + gpu) + ":00.0");
    node.gpu_numa.push_back(numa_nodes == 0 ? -1 : std::min(gpu * 2 / gpus, numa_nodes - 1));
  }
  for (int numa = 0; numa < numa_nodes; ++numa) node.numa_nodes.push_back(numa);
  node.access.assign(static_cast<std::size_t>(gpus), std::vector<PeerAccess>(static_cast<std::size_t>(gpus)));
  for (int source = 0; source < gpus; ++source)
    for (int destination = 0; destination < gpus; ++destination)
      node.access[static_cast<std::size_t>(source)][static_cast<std::size_t>(destination)].supported =
          source != destination && no_access.count({source, destination}) == 0;
  return node;
}

std::vector<LocalLinkTest> of_transfer(const LocalLinkPlan& plan, LocalTransfer transfer) {
  std::vector<LocalLinkTest> tests;
  for (const LocalLinkTest& test : plan.tests)
    if (test.transfer == transfer) tests.push_back(test);
  return tests;
}

TEST(LocalLinkPlan, EveryOrderedGpuPairOnceOneWayByEveryMethodAndEachPairOnceBothWays) {
  LocalPlanRequest request;
  request.both_ways = true;
  request.host = false;
  const LocalLinkPlan plan = plan_local_links(node_of(4), request);
  std::set<std::tuple<GpuCopyMethod, int, int, bool>> seen;
  for (const LocalLinkTest& test : plan.tests) {
    EXPECT_EQ(test.transfer, LocalTransfer::gpu_to_gpu);
    EXPECT_NE(test.source, test.destination);
    if (test.both_ways) EXPECT_LT(test.source, test.destination);
    EXPECT_TRUE(seen.insert({test.method, test.source, test.destination, test.both_ways}).second);
  }
  // 3 methods x (12 ordered pairs one way + 6 pairs both ways).
  EXPECT_EQ(plan.tests.size(), 3u * (12 + 6));
  EXPECT_TRUE(plan.notes.empty());
}

TEST(LocalLinkPlan, APairWithoutPeerAccessHasNoSmCopyButTheOtherMethodsStillRun) {
  LocalPlanRequest request;
  request.host = false;
  request.both_ways = true;
  const LocalLinkPlan plan = plan_local_links(node_of(2, 2, {{0, 1}}), request);
  std::vector<std::string> tests;
  for (const LocalLinkTest& test : plan.tests)
    tests.push_back(method_text(test) + " " + std::to_string(test.source) + "->" + std::to_string(test.destination) +
                    (test.both_ways ? " both" : ""));
  EXPECT_EQ(tests, (std::vector<std::string>{"copy-engine 0->1", "copy-engine 0->1 both", "copy-engine 1->0",
                                             "sm-copy 1->0", "nccl 0->1", "nccl 0->1 both", "nccl 1->0"}));
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_EQ(plan.notes.front(),
            "no sm-copy 0 -> 1: GPU 0000:10:00.0 cannot reach GPU 0000:11:00.0's memory (no peer access)");
}

TEST(LocalLinkPlan, HostMemoryNearFarAndPageableForEveryGpuBothDirections) {
  LocalPlanRequest request;
  request.methods = {};
  const LocalNode node = node_of(4, 2);
  const LocalLinkPlan plan = plan_local_links(node, request);
  ASSERT_EQ(plan.tests.size(), 4u * 3 * 2);
  for (const LocalLinkTest& test : plan.tests) {
    const int own = node.gpu_numa[static_cast<std::size_t>(test.gpu)];
    switch (test.role) {
      case HostMemoryRole::pinned_near: EXPECT_EQ(test.memory.numa, own); EXPECT_TRUE(test.memory.pinned); break;
      case HostMemoryRole::pinned_far: EXPECT_EQ(test.memory.numa, 1 - own); EXPECT_TRUE(test.memory.pinned); break;
      case HostMemoryRole::pageable: EXPECT_FALSE(test.memory.pinned); break;
    }
  }
  EXPECT_EQ(of_transfer(plan, LocalTransfer::host_to_gpu).size(), 12u);
  EXPECT_EQ(of_transfer(plan, LocalTransfer::gpu_to_host).size(), 12u);
  EXPECT_TRUE(plan.notes.empty());

  // Both ways: pinned memory near and far, never pageable (the driver would copy the two
  // directions one after the other with the calling thread).
  request.both_ways = true;
  const LocalLinkPlan both = plan_local_links(node, request);
  std::vector<HostMemoryRole> roles;
  for (const LocalLinkTest& test : both.tests)
    if (test.both_ways && test.gpu == 0) roles.push_back(test.role);
  EXPECT_EQ(roles, (std::vector<HostMemoryRole>{HostMemoryRole::pinned_near, HostMemoryRole::pinned_far}));
  EXPECT_EQ(both.tests.size(), 4u * (3 * 2 + 2));
  ASSERT_EQ(both.notes.size(), 1u);
  EXPECT_EQ(both.notes.front().rfind("pageable memory is not measured both ways", 0), 0u);
}

TEST(LocalLinkPlan, FarIsTheNextNumaNodeAndAOneNodeHostHasNoFarTest) {
  LocalPlanRequest request;
  request.methods = {};
  LocalNode four = node_of(2, 4);  // GPU 0 on node 0, GPU 1 on node 1, nodes 0..3
  for (const LocalLinkTest& test : plan_local_links(four, request).tests)
    if (test.role == HostMemoryRole::pinned_far) EXPECT_EQ(test.memory.numa, test.gpu == 0 ? 1 : 2);
  four.gpu_numa = {3, 3};
  for (const LocalLinkTest& test : plan_local_links(four, request).tests)
    if (test.role == HostMemoryRole::pinned_far) EXPECT_EQ(test.memory.numa, 0);  // wraps around

  const LocalLinkPlan one = plan_local_links(node_of(2, 1), request);
  for (const LocalLinkTest& test : one.tests) EXPECT_NE(test.role, HostMemoryRole::pinned_far);
  EXPECT_EQ(one.notes, std::vector<std::string>{"the host has one NUMA node: no pinned-far test"});

  const LocalLinkPlan unknown = plan_local_links(node_of(2, 0), request);
  EXPECT_EQ(unknown.tests.size(), 2u * 2 * 2);  // near (not bound) and pageable
  EXPECT_EQ(unknown.notes.size(), 1u);
}

TEST(LocalLinkPlan, CellsNameTheDevicesTheMethodAndBothDirectionsOfABothWaysTest) {
  const LocalNode node = node_of(2, 2);
  CopyRequest request;
  request.bytes = 1 << 20;
  CopyTiming timing;
  timing.seconds = 1e-5;  // 1 MiB in 10 us: 104.8576 GB/s
  LocalLinkTest test;
  test.method = GpuCopyMethod::sm_kernel;
  test.source = 1;
  test.destination = 0;
  test.both_ways = true;
  const std::vector<PairCell> both = local_cells(node, test, request, timing);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].src_device, "GPU 0000:11:00.0");
  EXPECT_EQ(both[0].dst_device, "GPU 0000:10:00.0");
  EXPECT_EQ(both[1].src_device, "GPU 0000:10:00.0");
  EXPECT_EQ(both[1].dst_device, "GPU 0000:11:00.0");
  for (const PairCell& cell : both) {
    EXPECT_EQ(cell.method, "sm-copy");
    EXPECT_EQ(cell.direction, PairDirection::both);
    EXPECT_DOUBLE_EQ(cell.gbps, 104.8576);
    EXPECT_EQ(cell.src_rank, 3);
    EXPECT_EQ(cell.dst_host, "gpu01");
  }
  LocalLinkTest host;
  host.transfer = LocalTransfer::gpu_to_host;
  host.role = HostMemoryRole::pinned_far;
  host.memory = {true, 1};
  host.gpu = 0;
  timing.note = "pages on NUMA node 0, not 1";
  const std::vector<PairCell> back = local_cells(node, host, request, timing);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].src_device, "GPU 0000:10:00.0");
  EXPECT_EQ(back[0].dst_device, "host NUMA 1 pinned");
  EXPECT_EQ(back[0].method, "pinned-far");
  EXPECT_EQ(back[0].link, "pages on NUMA node 0, not 1");
  EXPECT_FALSE(between_peers(back[0]));
  EXPECT_TRUE(between_peers(both[0]));
}

// The cells of a whole node as bench-p2p --local makes them: every method one way, and
// host memory both directions, GPU `slow` at `slow_gbps` in all its GPU-to-GPU transfers.
std::vector<PairCell> node_cells(const LocalNode& node, double gbps, int slow = -1, double slow_gbps = 0) {
  LocalPlanRequest request;
  std::vector<PairCell> cells;
  CopyRequest copy;
  copy.bytes = 1 << 30;
  for (const LocalLinkTest& test : plan_local_links(node, request).tests) {
    const bool slow_pair = test.transfer == LocalTransfer::gpu_to_gpu && (test.source == slow || test.destination == slow);
    // The host tests are slower than NVLink, and each memory differs: compared among their own.
    double rate = test.transfer != LocalTransfer::gpu_to_gpu ? gbps / 10 / (1 + static_cast<int>(test.role)) : gbps;
    if (slow_pair) rate = slow_gbps;
    CopyTiming timing;
    timing.seconds = static_cast<double>(copy.bytes) / (rate * 1e9);
    for (PairCell& cell : local_cells(node, test, copy, timing)) cells.push_back(cell);
  }
  return cells;
}

TEST(LocalLinkPlan, OutliersAreReadAmongCellsOfTheSameMethodAndASlowGpuIsNamed) {
  const LocalNode node = node_of(4, 2);
  std::vector<PairCell> healthy = node_cells(node, 300);
  flag_outliers(healthy, kDefaultOutlierFraction);
  for (const PairCell& cell : healthy) EXPECT_FALSE(cell.flagged) << cell.method << " " << cell.flag_reason;
  EXPECT_TRUE(slow_devices(healthy).empty());

  std::vector<PairCell> cells = node_cells(node, 300, 2, 40);
  flag_outliers(cells, kDefaultOutlierFraction);
  for (const PairCell& cell : cells) {
    const bool involves_slow = between_peers(cell) &&
                               (cell.src_device == "GPU 0000:12:00.0" || cell.dst_device == "GPU 0000:12:00.0");
    EXPECT_EQ(cell.flagged, involves_slow) << cell.method << " " << cell.src_device << " -> " << cell.dst_device;
  }
  using Device = std::pair<std::string, std::string>;
  EXPECT_EQ(slow_devices(cells), (std::vector<Device>{{"gpu01", "GPU 0000:12:00.0"}}));
  const auto flagged = std::find_if(cells.begin(), cells.end(), [](const PairCell& cell) { return cell.flagged; });
  EXPECT_EQ(flagged->flag_reason, "40 GB/s is 13% of the GPUs' median 300 GB/s");
  std::istringstream findings(findings_text(cells, slow_ranks(cells)));
  std::string first, second;
  std::getline(findings, first);
  std::getline(findings, second);
  EXPECT_EQ(first, "SLOW GPU 0000:12:00.0 (gpu01): every transfer with another GPU is an outlier");
  EXPECT_EQ(second.rfind("OUTLIER 3 (gpu01, GPU 0000:10:00.0) -> 3 (gpu01, GPU 0000:12:00.0) one-way copy-engine: ", 0),
            0u)
      << second;
  EXPECT_TRUE(slow_ranks(cells).empty());  // one rank measured them all
}

TEST(LocalLinkPlan, TheReportShowsAMatrixPerMethodAndTheHostTable) {
  const LocalNode node = node_of(2, 2);
  std::vector<PairCell> cells = node_cells(node, 300);
  for (PairCell& cell : cells)
    if (cell.method == "copy-engine" && cell.src_device == "GPU 0000:10:00.0") cell.latency_us = 1.25;
  flag_outliers(cells, kDefaultOutlierFraction);
  const std::string text = local_report_text(node, cells);
  EXPECT_NE(text.find("gpu01: 2 GPUs: 0 0000:10:00.0, 1 0000:11:00.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("copy-engine bandwidth (GB/s), one direction at a time, 1GiB messages; rows send, columns "
                      "receive; ! = outlier\n"
                      "    GB/s         0         1\n"
                      "       0         -    300.00\n"
                      "       1    300.00         -\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sm-copy bandwidth"), std::string::npos);
  EXPECT_NE(text.find("nccl bandwidth"), std::string::npos);
  EXPECT_NE(text.find("load latency (us): one 8-byte load by a GPU (row) from a peer's memory (column)\n"
                      "      us         0         1\n"
                      "       0         -      1.25\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    GB/s pinned-near h2d pinned-near d2h  pinned-far h2d  pinned-far d2h    pageable h2d    pageable d2h\n"
                      "       0           30.00           30.00           15.00           15.00           10.00           10.00\n"),
            std::string::npos)
      << text;
}

TEST(LocalLinkPlan, PeerAccessCodesSayNvlinkPciePeerOrStagedThroughTheHost) {
  const LocalNode node = node_of(3, 2, {{0, 2}, {2, 0}});
  const std::vector<std::vector<std::optional<bool>>> nvlink{
      {std::nullopt, true, false}, {true, std::nullopt, std::nullopt}, {false, std::nullopt, std::nullopt}};
  const PeerAccessCodes codes = peer_access_codes(node, nvlink);
  EXPECT_EQ(codes, (PeerAccessCodes{{"X", "NV", "host"}, {"NV", "X", "P2P?"}, {"host", "P2P?", "X"}}));
  EXPECT_EQ(peer_access_text(codes),
            "  access      0      1      2\n"
            "       0      X     NV   host\n"
            "       1     NV      X   P2P?\n"
            "       2   host   P2P?      X\n");
}

}  // namespace
}  // namespace commbench
