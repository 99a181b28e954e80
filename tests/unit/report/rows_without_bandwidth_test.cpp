// Figures that cannot mean bandwidth are not printed as bandwidth: one rank's busbw is
// empty in every reporter and left out of the average; a figure wider than its column
// keeps the table aligned; an unchecked run says so instead of "0 wrong"; a command's own
// row fields are columns of the console table too.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commbench/core/result_row.hpp"
#include "commbench/report/console_reporter.hpp"
#include "commbench/report/csv_reporter.hpp"
#include "commbench/report/json_reporter.hpp"
#include "commbench/report/provenance.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

ResultRow broadcast_row(int ranks, double algbw_gbps) {
  ResultRow r;
  r.backend = "mpi";
  r.op_case.op = Collective::broadcast;
  r.op_case.dtype = DataType::float32;
  r.op_case.root = 0;
  r.op_case.shape = shape_for(Collective::broadcast, 1 << 20, 4, ranks);
  r.ranks = ranks;
  r.nodes = 1;
  r.iterations = 10;
  r.samples = 10;
  r.time_us = 0.09;
  r.p99_us = 0.5;
  r.algbw_gbps = algbw_gbps;
  r.busbw_gbps = algbw_gbps;  // broadcast's factor is 1
  return r;
}

RunContext context_of(int ranks) {
  RunContext c;
  c.program = "bench-collectives";
  c.backend = "mpi";
  c.backend_version = "Open MPI v4.1.4";
  c.mpi_version = c.backend_version;
  c.ranks = ranks;
  c.nodes = 1;
  return c;
}

std::string printed_by(const std::function<void(ConsoleReporter&)>& steps) {
  char* text = nullptr;
  std::size_t length = 0;
  std::FILE* out = open_memstream(&text, &length);
  {
    ConsoleReporter console(out);
    steps(console);
  }
  std::fclose(out);
  const std::string printed(text, length);
  std::free(text);
  return printed;
}

std::vector<std::string> table_lines(const std::string& printed) {
  std::vector<std::string> lines;
  std::istringstream in(printed);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; in >> cell;) cells.push_back(cell);
  return cells;
}

TEST(RowsWithoutBandwidth, OneRanksBusbwIsEmptyInTheFields) {
  EXPECT_FALSE(has_bus_bandwidth(broadcast_row(1, 12334394.773)));
  EXPECT_TRUE(has_bus_bandwidth(broadcast_row(2, 1.5)));
  const std::string one = csv_line(row_fields(broadcast_row(1, 12334394.773)));
  const std::string two = csv_line(row_fields(broadcast_row(2, 1.5)));
  // algbw, then busbw: empty for one rank, the figure for two.
  EXPECT_NE(one.find(",12334394.8,,"), std::string::npos) << one;
  EXPECT_NE(two.find(",1.5,1.5,"), std::string::npos) << two;
}

TEST(RowsWithoutBandwidth, TotalsAverageOnlyRowsWithABusbwAndCountOnlyCheckedRows) {
  RowTotals none;
  EXPECT_EQ(none.average_busbw_gbps(), 0.0);  // nothing measured: nccl-tests' 0
  EXPECT_FALSE(none.wrong_elements().has_value());
  RowTotals one_rank;
  one_rank.add(broadcast_row(1, 12334394.773));
  EXPECT_FALSE(one_rank.average_busbw_gbps().has_value());
  RowTotals two_ranks;
  ResultRow checked = broadcast_row(2, 2.0);
  checked.wrong = 3;
  two_ranks.add(checked);
  two_ranks.add(broadcast_row(2, 4.0));
  EXPECT_EQ(two_ranks.average_busbw_gbps(), 3.0);
  EXPECT_EQ(two_ranks.wrong_elements(), 3u);
}

TEST(RowsWithoutBandwidth, ConsoleShowsADashAndKeepsTheColumnsAligned) {
  const std::string printed = printed_by([](ConsoleReporter& console) {
    console.begin(context_of(1));
    console.add_row(broadcast_row(1, 12334394.773));
    console.add_row(broadcast_row(1, 1.5));
    RunSummary summary;
    summary.rows = 2;
    console.finish(summary);
  });
  const std::vector<std::string> lines = table_lines(printed);
  ASSERT_EQ(lines.size(), 2u) << printed;
  EXPECT_EQ(lines[0].size(), lines[1].size()) << printed;
  const std::vector<std::string> wide = cells_of(lines[0]);
  ASSERT_EQ(wide.size(), 16u) << lines[0];
  EXPECT_EQ(wide[10], "12334395");  // algbw, in the column's 9 characters
  EXPECT_EQ(wide[11], "-");         // busbw
  EXPECT_EQ(wide[14], "N/A");       // #wrong: not checked ...
  EXPECT_NE(printed.find("# rows: 2  wrong elements: not checked  complete: yes\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("# Avg bus bandwidth    : -\n"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("GB/s\n"), std::string::npos) << printed;
}

TEST(RowsWithoutBandwidth, ConsoleFooterOfACheckedRunOnSeveralRanksIsUnchanged) {
  const std::string printed = printed_by([](ConsoleReporter& console) {
    console.begin(context_of(2));
    console.add_row(broadcast_row(2, 1.5));
    RunSummary summary;
    summary.rows = 1;
    summary.wrong_elements = 0;
    summary.average_busbw_gbps = 1.5;
    console.finish(summary);
  });
  EXPECT_NE(printed.find("# rows: 1  wrong elements: 0  complete: yes\n# Avg bus bandwidth    : 1.5 GB/s\n"),
            std::string::npos)
      << printed;
}

TEST(RowsWithoutBandwidth, JsonHasNullsWhereNothingWasChecked) {
  testing::TempDir dir;
  const std::string path = dir.path("run.json");
  JsonReporter json(path, nullptr);
  RunContext context = context_of(1);
  context.schema = "commbench.collectives/2";
  json.begin(context);
  json.add_row(broadcast_row(1, 12334394.773));
  RunSummary summary;
  summary.rows = 1;
  json.finish(summary);
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
  EXPECT_TRUE(doc["rows"][0]["busbw_gbps"].is_null());
  EXPECT_DOUBLE_EQ(doc["rows"][0]["algbw_gbps"].get<double>(), 12334394.773);
  EXPECT_TRUE(doc["summary"]["wrong_elements"].is_null());
  EXPECT_TRUE(doc["summary"]["average_busbw_gbps"].is_null());
}

TEST(RowsWithoutBandwidth, TheCommandsOwnFieldsAreConsoleColumns) {
  const std::string printed = printed_by([](ConsoleReporter& console) {
    RunContext context = context_of(4);
    context.extra_columns = {"group_size", "groups"};
    console.begin(context);
    for (const std::int64_t size : {2, 4}) {
      ResultRow row = broadcast_row(static_cast<int>(size), 1.5);
      row.extra = {ExtraField{"group_size", size}, ExtraField{"groups", 4 / size}};
      console.add_row(row);
    }
  });
  EXPECT_NE(printed.find("thr group_size groups\n"), std::string::npos) << printed;
  const std::vector<std::string> lines = table_lines(printed);
  ASSERT_EQ(lines.size(), 2u) << printed;
  const std::vector<std::string> k2 = cells_of(lines[0]), k4 = cells_of(lines[1]);
  ASSERT_EQ(k2.size(), 18u) << lines[0];
  EXPECT_EQ(std::vector<std::string>(k2.end() - 2, k2.end()), (std::vector<std::string>{"2", "2"}));
  EXPECT_EQ(std::vector<std::string>(k4.end() - 2, k4.end()), (std::vector<std::string>{"4", "1"}));
}

TEST(RowsWithoutBandwidth, OneRankNoteSaysWhyAndWhetherALauncherStartedIt) {
  EXPECT_EQ(one_rank_note(1, "row", true),
            "one rank: nothing crosses a link, so busbw is empty (- in the table) and has no average");
  EXPECT_EQ(one_rank_note(1, "row", false),
            "ran one rank (started without mpirun or srun): nothing crosses a link, so busbw is empty (- in the "
            "table) and has no average; start more with mpirun -np N or srun -n N");
  EXPECT_FALSE(one_rank_note(2, "row", false).has_value());
  EXPECT_FALSE(one_rank_note(1, "cell", false).has_value());
}

}  // namespace
}  // namespace commbench
