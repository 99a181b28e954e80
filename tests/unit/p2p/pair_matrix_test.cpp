#include <gtest/gtest.h>

#include <sstream>

#include "commbench/p2p/pair_matrix.hpp"

namespace commbench {
namespace {

// Every ordered pair of `ranks` at `gbps`, one way; `slow` (if any) at `slow_gbps` both
// as sender and receiver.
std::vector<PairCell> matrix(int ranks, double gbps, int slow = -1, double slow_gbps = 0) {
  std::vector<PairCell> cells;
  for (int src = 0; src < ranks; ++src)
    for (int dst = 0; dst < ranks; ++dst) {
      if (src == dst) continue;
      PairCell cell;
      cell.src_rank = src;
      cell.dst_rank = dst;
      cell.src_host = "n" + std::to_string(src);
      cell.dst_host = "n" + std::to_string(dst);
      cell.bytes = 1 << 20;
      cell.gbps = src == slow || dst == slow ? slow_gbps : gbps + 0.01 * (src + dst);
      cells.push_back(cell);
    }
  return cells;
}

TEST(PairMatrix, ASlowRanksRowAndColumnAreFlaggedAndNothingElse) {
  std::vector<PairCell> cells = matrix(8, 10.0, 3, 1.0);
  flag_outliers(cells, kDefaultOutlierFraction);
  for (const PairCell& cell : cells)
    EXPECT_EQ(cell.flagged, cell.src_rank == 3 || cell.dst_rank == 3) << cell.src_rank << "->" << cell.dst_rank;
  EXPECT_EQ(slow_ranks(cells), std::vector<int>{3});
  const auto flagged = std::find_if(cells.begin(), cells.end(), [](const PairCell& c) { return c.flagged; });
  EXPECT_EQ(flagged->flag_reason, "1 GB/s is 10% of the ranks' median 10.06 GB/s");
}

TEST(PairMatrix, OneSlowLinkIsALinkNotTwoSlowRanks) {
  std::vector<PairCell> cells = matrix(4, 10.0);
  for (PairCell& cell : cells)
    if ((cell.src_rank == 1 && cell.dst_rank == 2) || (cell.src_rank == 2 && cell.dst_rank == 1)) cell.gbps = 2.0;
  flag_outliers(cells, kDefaultOutlierFraction);
  int flagged = 0;
  for (const PairCell& cell : cells) flagged += cell.flagged;
  EXPECT_EQ(flagged, 2);
  EXPECT_TRUE(slow_ranks(cells).empty());
}

TEST(PairMatrix, AHealthyMatrixHasNoOutlierAndTheSpecFlagsWhatTheMedianCannot) {
  std::vector<PairCell> cells = matrix(4, 10.0);
  flag_outliers(cells, kDefaultOutlierFraction);
  for (const PairCell& cell : cells) EXPECT_FALSE(cell.flagged);
  // Every link at 10 GB/s where the spec says 25: uniformly slow, which only the spec sees.
  for (PairCell& cell : cells) cell.theoretical_gbps = 25.0;
  flag_outliers(cells, kDefaultOutlierFraction);
  for (const PairCell& cell : cells) EXPECT_TRUE(cell.flagged);
  EXPECT_EQ(cells.front().flag_reason, "10.01 GB/s is 40% of the link's 25 GB/s");
}

TEST(PairMatrix, BothWaysCellsAreComparedWithTheirOwnKind) {
  std::vector<PairCell> cells = matrix(4, 10.0);
  std::vector<PairCell> together = matrix(4, 5.0);  // half per direction while both send
  for (PairCell& cell : together) cell.direction = PairDirection::both;
  cells.insert(cells.end(), together.begin(), together.end());
  flag_outliers(cells, kDefaultOutlierFraction);
  for (const PairCell& cell : cells) EXPECT_FALSE(cell.flagged);
  EXPECT_EQ(direction_text(cells.front()), "one-way");
  EXPECT_EQ(direction_text(cells.back()), "both");
}

// The host link of one H100 as bench-p2p --local measured it (2026-11-26, PCIe Gen5 x16,
// 63 GB/s per direction): alone 53.75 to the GPU and 55.09 back, both at once 43.99 each
// way. Inside a node a both-ways cell is read against its peers, not the one-way spec.
TEST(PairMatrix, InsideANodeBothWaysCellsAreNotReadAgainstTheOneWaySpec) {
  const auto host_cell = [](const std::string& gpu, bool to_gpu, PairDirection direction, double gbps) {
    PairCell cell;
    cell.src_host = cell.dst_host = "vm";
    cell.method = "pinned-near";
    cell.src_device = to_gpu ? "host NUMA 0 pinned" : gpu;
    cell.dst_device = to_gpu ? gpu : "host NUMA 0 pinned";
    cell.direction = direction;
    cell.gbps = gbps;
    cell.theoretical_gbps = 63.0;
    return cell;
  };
  std::vector<PairCell> cells{host_cell("GPU 0000:00:06.0", true, PairDirection::forward, 53.75),
                              host_cell("GPU 0000:00:06.0", false, PairDirection::forward, 55.09),
                              host_cell("GPU 0000:00:06.0", true, PairDirection::both, 43.99),
                              host_cell("GPU 0000:00:06.0", false, PairDirection::both, 43.99)};
  flag_outliers(cells, kDefaultOutlierFraction);
  for (const PairCell& cell : cells) EXPECT_FALSE(cell.flagged) << cell.flag_reason;
  EXPECT_TRUE(read_against_spec(cells[0]));
  EXPECT_FALSE(read_against_spec(cells[2]));

  // A link that lost half its lanes still shows in its one-way cell.
  cells[0].gbps = 27.0;
  flag_outliers(cells, kDefaultOutlierFraction);
  EXPECT_TRUE(cells[0].flagged);
  EXPECT_EQ(cells[0].flag_reason, "27 GB/s is 43% of the link's 63 GB/s");

  // Both ways at once, a GPU far below the other GPUs' both-ways cells is still flagged.
  std::vector<PairCell> node;
  for (const std::string gpu : {"GPU 0000:1b:00.0", "GPU 0000:43:00.0", "GPU 0000:52:00.0", "GPU 0000:61:00.0"})
    for (const bool to_gpu : {true, false})
      node.push_back(host_cell(gpu, to_gpu, PairDirection::both, gpu == "GPU 0000:52:00.0" ? 20.0 : 44.0));
  flag_outliers(node, kDefaultOutlierFraction);
  for (const PairCell& cell : node)
    EXPECT_EQ(cell.flagged, cell.src_device == "GPU 0000:52:00.0" || cell.dst_device == "GPU 0000:52:00.0");

  // Between ranks --both-ways replaces the one-way cells: there the spec still judges.
  std::vector<PairCell> ranks = matrix(4, 10.0);
  for (PairCell& cell : ranks) {
    cell.direction = PairDirection::both;
    cell.theoretical_gbps = 25.0;
  }
  flag_outliers(ranks, kDefaultOutlierFraction);
  for (const PairCell& cell : ranks) EXPECT_TRUE(cell.flagged);
}

TEST(PairMatrix, TheMatrixAndTheCsv) {
  std::vector<PairCell> cells = matrix(3, 10.0, 2, 1.0);
  // Ranks 0 and 1 meet the slow rank in half their cells: their medians fall halfway
  // (5.5 GB/s), still far above the slow rank's 1 GB/s.
  cells[0].latency_us = 2.5;
  flag_outliers(cells, kDefaultOutlierFraction);
  EXPECT_EQ(matrix_text(cells, 3, false),
            "    GB/s         0         1         2\n"
            "       0         -     10.01     1.00!\n"
            "       1     10.01         -     1.00!\n"
            "       2     1.00!     1.00!         -\n");
  EXPECT_EQ(matrix_text(cells, 3, true),
            "      us         0         1         2\n"
            "       0         -      2.50         -\n"
            "       1         -         -         -\n"
            "       2         -         -         -\n");
  std::istringstream csv(cells_csv(cells));
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header,
            "src_host,src_rank,src_device,dst_host,dst_rank,dst_device,bytes,direction,round,gbps,latency_us,"
            "theoretical_gbps,efficiency,flagged,reason,link,rail,method,nics");
  EXPECT_EQ(first, "n0,0,,n1,1,,1048576,one-way,0,10.01,2.5,,,false,,,,send/recv,");  // no rail without --per-rail
  cells.front().rail = 1;
  cells.front().nics = "n0 eth0 1 GB/s (busiest 2 GB/s); n1 eth0 0.1 GB/s (busiest 0.2 GB/s), short";
  std::istringstream per_rail(cells_csv(cells));
  std::getline(per_rail, header);
  std::getline(per_rail, first);
  EXPECT_EQ(first,
            "n0,0,,n1,1,,1048576,one-way,0,10.01,2.5,,,false,,,1,send/recv,"
            "\"n0 eth0 1 GB/s (busiest 2 GB/s); n1 eth0 0.1 GB/s (busiest 0.2 GB/s), short\"");
}

TEST(PairMatrix, FindingsNameTheSlowRankWithItsRailAndEachOutlier) {
  std::vector<PairCell> cells = matrix(4, 10.0, 2, 1.0);
  for (PairCell& cell : cells) {
    cell.src_device = "GPU " + std::to_string(cell.src_rank);
    cell.dst_device = "GPU " + std::to_string(cell.dst_rank);
    cell.link = "NIC";
  }
  std::vector<PairCell> healthy = matrix(4, 10.0);
  EXPECT_EQ(findings_text(healthy, {}), "no outlier among 12 cells\n");
  flag_outliers(cells, kDefaultOutlierFraction);
  std::istringstream lines(findings_text(cells, slow_ranks(cells)));
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(first, "SLOW RANK 2 (n2): every pair it is part of is an outlier");
  EXPECT_EQ(second.rfind("OUTLIER 0 (n0, GPU 0) -> 2 (n2, GPU 2) one-way: 1 GB/s is 10% of the ranks' median", 0), 0u)
      << second;
  EXPECT_NE(second.find("; link: NIC"), std::string::npos) << second;
  for (PairCell& cell : cells) cell.rail = cell.src_rank % 2;  // as --per-rail records it
  std::istringstream per_rail(findings_text(cells, slow_ranks(cells)));
  std::getline(per_rail, first);
  std::getline(per_rail, second);
  EXPECT_EQ(first, "SLOW RANK 2 (n2, rail 0): every pair it is part of is an outlier");
  EXPECT_EQ(second.rfind("OUTLIER 0 (n0, GPU 0) -> 2 (n2, GPU 2) one-way rail 0: ", 0), 0u) << second;
}

}  // namespace
}  // namespace commbench
