// The validate layer: the CSV reader, baselines and threshold rules. Their verdicts:
// threshold_check_test.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/report/csv_reporter.hpp"
#include "commbench/validate/baseline.hpp"
#include "commbench/validate/csv_table.hpp"
#include "commbench/validate/threshold_check.hpp"
#include "commbench/validate/threshold_rule.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"
#include "validate_test_support.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;
using validate_test::csv_of;
using validate_test::row_of;

// ---- CSV -------------------------------------------------------------------------------

TEST(CsvTable, QuotesCommasLineBreaksAndLineNumbers) {
  const CsvTable t = parse_csv("a,b,c\r\n1,\"x,y\",\"say \"\"hi\"\"\"\n\n\"two\nlines\",,3\n4,5,\n", "f.csv");
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t.records.size(), 3u);
  EXPECT_EQ(t.records[0].fields, (std::vector<std::string>{"1", "x,y", "say \"hi\""}));
  EXPECT_EQ(t.records[0].line, 2u);
  EXPECT_EQ(t.records[1].fields, (std::vector<std::string>{"two\nlines", "", "3"}));
  EXPECT_EQ(t.records[1].line, 4u);  // line 3 is blank
  EXPECT_EQ(t.records[2].fields, (std::vector<std::string>{"4", "5", ""}));
  EXPECT_EQ(t.records[2].line, 6u);  // the quoted line break counts
  EXPECT_EQ(t.column("c"), 2u);
  EXPECT_FALSE(t.column("d").has_value());
}

TEST(CsvTable, CommentLinesBeforeTheHeaderAreSkippedAndLinesStillCount) {
  // A run under Slurm starts its CSV with "# slurm: ..."; a value there may hold a quote.
  const CsvTable t = parse_csv("# slurm: job_id=7 job_name=say\"hi\r\n#\na,b\n1,2\n", "f.csv");
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.records.size(), 1u);
  EXPECT_EQ(t.records[0].fields, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(t.records[0].line, 4u);
  // After the header a '#' is data, and a malformed record is still named by its line.
  EXPECT_EQ(usage_error_of([] { parse_csv("# c\na,b\n#x\n", "f.csv"); }),
            "f.csv line 3: has 1 fields, the header has 2");
  EXPECT_EQ(usage_error_of([] { parse_csv("# only a comment\n", "f.csv"); }), "f.csv: no header line");
}

TEST(CsvTable, MalformedInputNamesFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "f.csv: no header line"},
      {"\n\r\n", "f.csv: no header line"},
      {"a,b\n1\n", "f.csv line 2: has 1 fields, the header has 2"},
      {"a,b\n\"1\n2\",3,4\n", "f.csv line 2: has 3 fields, the header has 2"},
      {"a,,b\n", "f.csv line 1: column 2 has no name"},
      {"a,b,a\n", "f.csv line 1: column 'a' appears twice"},
      {"a\n\n\"open\n", "f.csv line 3: a quoted field is never closed"},
      {"a\n\"x\"y\n", "f.csv line 2: text after a closing quote"},
      {"a\nx\"y\n", "f.csv line 2: a quote inside an unquoted field"},
      {"a\rb\n", "f.csv line 1: a carriage return that does not end a line"},
      {std::string("a\nx\0y\n", 6), "f.csv line 2: a NUL byte (not a text file)"},
  };
  for (const auto& [text, message] : cases)
    EXPECT_EQ(usage_error_of([&] { parse_csv(text, "f.csv"); }), message) << text;
}

// ---- Baselines ---------------------------------------------------------------------------

TEST(Baseline, ReadsBackWhatTheCsvReporterWrites) {
  const std::vector<ResultRow> rows = {row_of(Collective::allreduce, 1 << 20, 4, 300.0),
                                       row_of(Collective::broadcast, 1 << 20, 4, 120.5),
                                       row_of(Collective::allgather, 1 << 20, 4, 99.25)};
  const Baseline b = parse_baseline(csv_of(rows), "--baseline b.csv");
  ASSERT_EQ(b.rows.size(), 3u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const BaselineRow* found = b.find(key_of(rows[i].op_case, 4));
    ASSERT_NE(found, nullptr) << i;
    EXPECT_DOUBLE_EQ(found->busbw_gbps, rows[i].busbw_gbps);
    EXPECT_NEAR(found->algbw_gbps, rows[i].algbw_gbps, 1e-8 * rows[i].algbw_gbps);
    EXPECT_NEAR(found->time_us, rows[i].time_us, 1e-8 * rows[i].time_us);
    EXPECT_EQ(found->line, i + 2);
  }
  // Another rank count is another measurement.
  EXPECT_EQ(b.find(key_of(rows[0].op_case, 8)), nullptr);
  EXPECT_EQ(describe(key_of(rows[1].op_case, 4)), "broadcast 1MiB float root 0 out-of-place on 4 ranks");
}

TEST(Baseline, ReadsTheCommittedHostRun) {
  // A real file written by an earlier schema (without achievable_busbw_gbps): baselines
  // are read by column name, so older runs still serve.
  const std::string path = std::string(COMMBENCH_SOURCE_DIR) + "/results/mpi-host-2core/default-sweep.csv";
  const Baseline b = parse_baseline(read_input_file(path, "--baseline " + path), "--baseline " + path);
  std::ifstream in(path);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  std::size_t lines = 1;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(b.rows.size(), lines);
  // Line 2 is the first row: op, bytes, ranks and busbw are columns 2, 7, 9 and 22.
  std::vector<std::string> f;
  std::stringstream s(first);
  for (std::string cell; std::getline(s, cell, ',');) f.push_back(cell);
  MeasurementKey key;
  key.op = parse_collective(f[1], "op");
  key.dtype = parse_data_type(f[3], "dtype");
  key.redop = f[4].empty() ? ReduceOp::none : parse_reduce_op(f[4], "redop");
  key.root = f[5].empty() ? -1 : std::stoi(f[5]);
  key.bytes = std::stoull(f[6]);
  key.ranks = std::stoi(f[8]);
  const BaselineRow* row = b.find(key);
  ASSERT_NE(row, nullptr);
  EXPECT_DOUBLE_EQ(row->busbw_gbps, std::stod(f[21]));
  EXPECT_EQ(row->line, 2u);
}

TEST(Baseline, MalformedRowsNameLineAndColumn) {
  const std::string header = "op,placement,dtype,redop,root,bytes,ranks,time_us,algbw_gbps,busbw_gbps\n";
  const std::string good = "allreduce,out,float,sum,,1048576,4,10,100,150\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {header, "b.csv: no measurements (only a header)"},
      {"op,placement,dtype,redop,root,bytes,ranks,time_us,algbw_gbps\nallreduce,out,float,sum,,8,4,1,1\n",
       "b.csv line 1: no 'busbw_gbps' column (a baseline is the --csv file of an earlier bench-collectives run)"},
      {header + "gather,out,float,sum,,8,4,1,1,1\n", "b.csv line 2: op: unknown value 'gather'"},
      {header + "allreduce,both,float,sum,,8,4,1,1,1\n", "b.csv line 2: placement 'both' is not out or in"},
      {header + "allreduce,out,float9,sum,,8,4,1,1,1\n", "b.csv line 2: dtype: unknown value 'float9'"},
      {header + "allreduce,out,float,,,8,4,1,1,1\n", "b.csv line 2: redop: unknown value ''"},
      {header + "allgather,out,float,sum,,8,4,1,1,1\n",
       "b.csv line 2: redop 'sum' is not empty (allgather does not reduce)"},
      {header + "broadcast,out,float,,,8,4,1,1,1\n", "b.csv line 2: root '' is not a whole number in [0, 16777215]"},
      {header + "allreduce,out,float,sum,0,8,4,1,1,1\n", "b.csv line 2: root '0' is not empty (allreduce has no root)"},
      {header + "allreduce,out,float,sum,,0,4,1,1,1\n", "b.csv line 2: bytes '0' is not a whole number in [1, "},
      {header + "allreduce,out,float,sum,,-8,4,1,1,1\n", "b.csv line 2: bytes '-8' is not a whole number"},
      {header + "allreduce,out,float,sum,,1e3,4,1,1,1\n", "b.csv line 2: bytes '1e3' is not a whole number"},
      {header + "allreduce,out,float,sum,,8,0,1,1,1\n", "b.csv line 2: ranks '0' is not a whole number in [1, "},
      {header + "allreduce,out,float,sum,,8,4,1,1,nan\n", "b.csv line 2: busbw_gbps 'nan' is not a number >= 0"},
      {header + "allreduce,out,float,sum,,8,4,1,1,inf\n", "b.csv line 2: busbw_gbps 'inf' is not a number >= 0"},
      {header + "allreduce,out,float,sum,,8,4,-1,1,1\n", "b.csv line 2: time_us '-1' is not a number >= 0"},
      {header + "allreduce,out,float,sum,,8,4,1,fast,1\n", "b.csv line 2: algbw_gbps 'fast' is not a number >= 0"},
      {header + good + good,
       "b.csv line 3: the same measurement as line 2 (allreduce 1MiB float sum out-of-place on 4 ranks)"},
      {"\n {\"schema\": \"commbench.collectives/2\",\n \"rows\": []}\n",
       "b.csv: a JSON file; a baseline is the --csv file of an earlier bench-collectives run"},
  };
  for (const auto& [text, message] : cases) {
    const std::string error = usage_error_of([&] { parse_baseline(text, "b.csv"); });
    EXPECT_EQ(error.substr(0, message.size()), message) << text;
  }
}

// A one-rank run's CSV leaves busbw empty (nothing crosses a link): as a baseline it reads 0.
TEST(Baseline, AOneRankRowsEmptyBusbwReadsAsNone) {
  const std::string header = "op,placement,dtype,redop,root,bytes,ranks,time_us,algbw_gbps,busbw_gbps\n";
  const Baseline b = parse_baseline(header + "allreduce,out,float,sum,,1048576,1,10,100,\n", "b.csv");
  ASSERT_EQ(b.rows.size(), 1u);
  EXPECT_EQ(b.rows.begin()->second.busbw_gbps, 0.0);
  EXPECT_EQ(b.rows.begin()->second.algbw_gbps, 100.0);
}

// How bench-collectives reads --baseline and --thresholds (rank 0 reads, all parse).
TEST(InputFile, ErrorsNameTheFlagAndFile) {
  testing::TempDir dir;
  const auto label = [](const std::string& path) { return "--baseline " + path; };
  EXPECT_EQ(usage_error_of([&] { read_input_file(dir.path("none.csv"), label(dir.path("none.csv"))); }),
            "--baseline " + dir.path("none.csv") + ": cannot read (No such file or directory)");
  EXPECT_EQ(usage_error_of([&] { read_input_file(dir.root().string(), label(dir.root().string())); }),
            "--baseline " + dir.root().string() + ": cannot read (is a directory)");
  const std::string empty = dir.write("empty.csv", "");
  EXPECT_EQ(usage_error_of([&] { read_input_file(empty, label(empty)); }), "--baseline " + empty + ": empty file");
  const std::string huge = dir.write("huge.csv", "");
  std::filesystem::resize_file(huge, kMaxInputFileBytes + 1);  // sparse: nothing is written
  EXPECT_EQ(usage_error_of([&] { read_input_file(huge, label(huge)); }), "--baseline " + huge + ": larger than 64 MiB");
  const std::string rules = dir.write("t.txt", "busbw>=2\n");
  EXPECT_EQ(read_input_file(rules, "--thresholds " + rules), "busbw>=2\n");
}

// ---- Rules -------------------------------------------------------------------------------

struct GoodRule {
  std::string text;
  std::vector<Collective> ops;
  std::uint64_t min_bytes, max_bytes;
  ThresholdMetric metric;
  Comparison comparison;
  double value;
  Reference reference;
};

TEST(ThresholdRule, ParsesEveryForm) {
  constexpr std::uint64_t kAny = std::numeric_limits<std::uint64_t>::max();
  const std::vector<GoodRule> cases = {
      {"busbw>=300", {}, 0, kAny, ThresholdMetric::busbw, Comparison::at_least, 300, Reference::none},
      {"allreduce@64M..:busbw>=300GB/s",
       {Collective::allreduce},
       64u << 20,
       kAny,
       ThresholdMetric::busbw,
       Comparison::at_least,
       300,
       Reference::none},
      {" allreduce , allgather @ 1K .. 8K : algbw > 2.5 ",
       {Collective::allreduce, Collective::allgather},
       1024,
       8192,
       ThresholdMetric::algbw,
       Comparison::above,
       2.5,
       Reference::none},
      {"@1M:time<=12.5us", {}, 1u << 20, 1u << 20, ThresholdMetric::time, Comparison::at_most, 12.5, Reference::none},
      {"*@..1M:time_us<1.1*baseline",
       {},
       0,
       1u << 20,
       ThresholdMetric::time,
       Comparison::below,
       1.1,
       Reference::baseline},
      {"busbw>=90%*baseline", {}, 0, kAny, ThresholdMetric::busbw, Comparison::at_least, 0.9, Reference::baseline},
      {"busbw>=baseline", {}, 0, kAny, ThresholdMetric::busbw, Comparison::at_least, 1, Reference::baseline},
      {"efficiency>=70%", {}, 0, kAny, ThresholdMetric::efficiency, Comparison::at_least, 0.7, Reference::none},
      {"efficiency>=0.7", {}, 0, kAny, ThresholdMetric::efficiency, Comparison::at_least, 0.7, Reference::none},
      {"BUSBW>=0.8*Achievable", {}, 0, kAny, ThresholdMetric::busbw, Comparison::at_least, 0.8, Reference::achievable},
      {"reducescatter:busbw>=0.5*theoretical",
       {Collective::reducescatter},
       0,
       kAny,
       ThresholdMetric::busbw,
       Comparison::at_least,
       0.5,
       Reference::theoretical},
  };
  for (const GoodRule& c : cases) {
    SCOPED_TRACE(c.text);
    const ThresholdRule r = parse_threshold_rule(c.text, "--threshold");
    EXPECT_EQ(r.text, c.text);
    EXPECT_EQ(r.ops, c.ops);
    EXPECT_EQ(r.min_bytes, c.min_bytes);
    EXPECT_EQ(r.max_bytes, c.max_bytes);
    EXPECT_EQ(r.metric, c.metric);
    EXPECT_EQ(r.comparison, c.comparison);
    EXPECT_DOUBLE_EQ(r.value, c.value);
    EXPECT_EQ(r.reference, c.reference);
  }
  // "all" and "*" mean every collective the run has: an empty list, not all seven.
  EXPECT_TRUE(parse_threshold_rule("all:busbw>=1", "--threshold").ops.empty());
  EXPECT_TRUE(parse_threshold_rule("*@1M..:busbw>=1", "--threshold").ops.empty());
}

TEST(ThresholdRule, EveryMistakeIsOneLineNamingTheRule) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty rule; a rule reads [OPS][@SIZES]:METRIC>=VALUE"},
      {"   ", "empty rule"},
      {"busbw", "no comparison after busbw; expected >=, <=, > or <"},
      {"busbw=>1", "no comparison after busbw"},
      {"busbw>=", "no value after >="},
      {"bw>=1", "unknown metric 'bw'; expected busbw, algbw, time or efficiency"},
      {">=1", "no metric; expected busbw"},
      {"allreduce", "unknown metric 'allreduce'"},
      {"busbw>=-1", "'-1' is negative"},
      {"busbw>=abc", "'abc' is not a number"},
      {"busbw>=1e999", "'1e999' is not a number"},
      {"busbw>=nan", "'nan' is not a number"},
      {"busbw>=1GB/s/s", "'1GB/s/s' is not a number"},
      {"busbw>=1 GB/s", ""},  // passes: spaces are dropped, the unit stripped (checked below)
      {"time<=5ms", "'5ms' is not a number"},
      {"busbw>=0.9*base", "'base' is not a reference; expected baseline, theoretical or achievable after '*'"},
      {"busbw>=x*baseline", "'x' is not a number"},
      {"efficiency>=0.9*baseline", "efficiency is already busbw / theoretical"},
      {"algbw>=0.9*theoretical", "theoretical is a busbw bound; compare busbw with it, or algbw with baseline"},
      {"time<=achievable", "achievable is a busbw bound"},
      {"efficiency>=80", "efficiency is a fraction (0.8) or a percentage (80%), not 80"},
      {"gather:busbw>=1", "collective: unknown value 'gather'"},
      {",:busbw>=1", "collective: empty item in list ','"},
      {"@:busbw>=1", "size: '' is empty"},
      {"@..:busbw>=1", "'@..' selects no size range"},
      {"@8K..1K:busbw>=1", "size range 8KiB..1KiB is empty"},
      {"@1X:busbw>=1", "size: '1X' has an unknown unit"},
      {"@0..:busbw>=1", "size: '0' is zero"},
      {"busbw>=1\nfake line", "a control character in the rule"},
      {"allreduce\v@1M:busbw>=1", "a control character in the rule"},
      {"busbw>=400Gb/s", "'Gb/s' is gigabits per second; busbw is in GB/s (gigabytes): divide by 8"},
      {"algbw>=50 gbps", "'gbps' is gigabits per second"},
  };
  for (const auto& [text, message] : cases) {
    if (message.empty()) {
      EXPECT_DOUBLE_EQ(parse_threshold_rule(text, "--threshold").value, 1.0) << text;
      continue;
    }
    const std::string error = usage_error_of([&] { parse_threshold_rule(text, "--threshold"); });
    const std::string prefix = "--threshold " + single_quoted(one_line(text)) + ": ";
    EXPECT_EQ(error.substr(0, prefix.size()), prefix) << text;
    EXPECT_NE(error.find(message), std::string::npos) << text << " -> " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(ThresholdRule, FilesHaveCommentsBlankLinesAndLineNumbers) {
  const auto rules =
      parse_threshold_rules("# cluster acceptance\nbusbw>=1 # any row\n\r\n  allreduce:time<=5\r\n", "--thresholds t");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].origin, "--thresholds t line 2");
  EXPECT_EQ(rules[0].text, "busbw>=1 ");
  EXPECT_EQ(rules[1].origin, "--thresholds t line 4");
  EXPECT_EQ(rules[1].metric, ThresholdMetric::time);
  EXPECT_EQ(rules[1].label(), "'  allreduce:time<=5' (--thresholds t line 4)");

  EXPECT_EQ(usage_error_of([] { parse_threshold_rules("busbw>=1\n\nxx>=1\n", "--thresholds t"); }).substr(0, 48),
            "--thresholds t line 3 'xx>=1': unknown metric 'x");
  EXPECT_EQ(usage_error_of([] { parse_threshold_rules("# nothing\n\n", "--thresholds t"); }),
            "--thresholds t: no rules (only blank lines and comments)");
  EXPECT_EQ(usage_error_of([] { parse_threshold_rules(std::string("busbw>=1\0", 9), "--thresholds t"); }),
            "--thresholds t line 1: a NUL byte (not a text file)");
}

}  // namespace
}  // namespace commbench
