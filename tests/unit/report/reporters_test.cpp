#include <gtest/gtest.h>

#include <sys/stat.h>
#include <functional>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commbench/core/error.hpp"
#include "commbench/core/record.hpp"
#include "commbench/report/console_reporter.hpp"
#include "commbench/report/csv_reporter.hpp"
#include "commbench/report/json_reporter.hpp"
#include "commbench/report/output_file.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

ResultRow sample_row() {
  ResultRow r;
  r.backend = "mpi";
  r.op_case.op = Collective::allreduce;
  r.op_case.dtype = DataType::float32;
  r.op_case.redop = ReduceOp::sum;
  r.op_case.shape = shape_for(Collective::allreduce, 1 << 20, 4, 4);
  r.ranks = 4;
  r.nodes = 1;
  r.iterations = 100;
  r.samples = 10;
  r.time_us = 500.0;
  r.time_min_us = 450.0;
  r.time_mean_us = 475.0;
  r.p50_us = 490.0;
  r.p99_us = 700.0;
  r.noise = 0.01;
  r.slowest_rank = 2;
  r.slowest_host = "node,07";  // a comma forces CSV quoting
  r.algbw_gbps = 2.097152;
  r.busbw_gbps = 3.145728;
  r.wrong = 0;
  r.stop_reason = StopReason::noise_target;
  return r;
}

RunContext sample_context() {
  RunContext c;
  c.program = "bench-collectives";
  c.version = "0.1.0";
  c.commit = "abc";
  c.backend = "mpi";
  c.backend_version = "Open MPI v4.1.4";
  c.mpi_version = "Open MPI v4.1.4";
  c.ranks = 4;
  c.nodes = 2;
  c.rank_hosts = {"a", "a", "b", "b"};
  c.command_line = "bench-collectives -b 8";
  c.environment = {{"NCCL_DEBUG", "INFO"}};
  return c;
}

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("commbench-unit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp.") != std::string::npos) names.push_back(entry.path().string());
  return names;
}

TEST(Csv, HeaderIsTheDocumentedColumnList) {
  EXPECT_EQ(csv_header(),
            "backend,op,placement,dtype,redop,root,bytes,count,ranks,nodes,iterations,samples,time_us,time_min_us,"
            "time_mean_us,p50_us,p99_us,noise,slowest_rank,slowest_host,algbw_gbps,busbw_gbps,"
            "theoretical_busbw_gbps,achievable_busbw_gbps,efficiency,wrong,threshold,stop_reason,nccl_algo,nccl_proto,"
            "nccl_channels,nccl_split,model_algo");
}

TEST(Csv, RowValuesEmptiesAndQuoting) {
  EXPECT_EQ(csv_line(row_fields(sample_row())),
            "mpi,allreduce,out,float,sum,,1048576,262144,4,1,100,10,500,450,475,490,700,0.01,2,\"node,07\","
            "2.097152,3.145728,,,,0,,noise_target,,,,,");
  ResultRow failed = sample_row();
  failed.threshold_passed = false;
  EXPECT_EQ(csv_line(row_fields(failed)).substr(csv_line(row_fields(failed)).rfind(",fail")),
            ",fail,noise_target,,,,,");
  failed.threshold_passed = true;
  failed.stop_reason = StopReason::time_limit;
  EXPECT_EQ(csv_line(row_fields(failed)).substr(csv_line(row_fields(failed)).rfind(",pass")), ",pass,time_limit,,,,,");
  ResultRow nccl = sample_row();
  nccl.nccl_algo = "RING";
  nccl.nccl_proto = "SIMPLE";
  nccl.nccl_channels = "mixed";
  nccl.nccl_split = "channels 16 3, 24 1";
  nccl.model_algo = "NVLS";
  EXPECT_EQ(csv_line(row_fields(nccl)).substr(csv_line(row_fields(nccl)).rfind(",noise_target")),
            ",noise_target,RING,SIMPLE,mixed,\"channels 16 3, 24 1\",NVLS");
}

TEST(Csv, ExtraFieldsFollowTheDeclaredColumnsInTheirOrder) {
  const std::vector<std::string> extra{"group", "step"};
  EXPECT_EQ(csv_header(extra).substr(csv_header().size()), ",group,step");
  ResultRow row = sample_row();
  row.extra = {ExtraField{"step", std::string("backward")}, ExtraField{"group", std::int64_t{3}}};
  const RecordKind& rows = record_kind("row");
  const std::string line = csv_record_line(row_record(row), rows, extra);
  EXPECT_EQ(line.substr(line.rfind(",noise_target")), ",noise_target,,,,,,3,backward");  // nccl_*, model_algo empty
  // A declared column the row lacks stays empty; an undeclared field is refused, since it
  // would shift every later column.
  row.extra = {ExtraField{"step", std::string("forward")}};
  const std::string partial = csv_record_line(row_record(row), rows, extra);
  EXPECT_EQ(partial.substr(partial.rfind(",noise_target")), ",noise_target,,,,,,,forward");
  row.extra.push_back(ExtraField{"peer", std::int64_t{1}});
  EXPECT_THROW(csv_record_line(row_record(row), rows, extra), BackendError);
}

TEST(Csv, ReporterWritesHeaderAndFlushesEachRow) {
  const fs::path path = temp_dir() / "rows.csv";
  {
    FileHandle file = open_output_file(path.string(), "--csv", true);
    CsvReporter csv(file.get());
    csv.begin(sample_context());
    csv.add_row(sample_row());
    // Flushed per row: visible before the reporter or file is closed.
    const std::string partial = read_file(path);
    EXPECT_EQ(std::count(partial.begin(), partial.end(), '\n'), 2);
  }
  fs::remove_all(path.parent_path());
}

TEST(Json, WritesWholeDocumentAtomicallyAndParsesBack) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "run.json";
  JsonReporter json(path.string(), nullptr);
  json.begin(sample_context());
  json.add_row(sample_row());
  json.add_row(sample_row());
  EXPECT_FALSE(fs::exists(path)) << "nothing is written before finish()";
  RunSummary summary;
  summary.rows = 2;
  summary.average_busbw_gbps = 3.145728;
  json.finish(summary);
  EXPECT_TRUE(temporaries_in(dir).empty());
  const auto doc = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(doc["schema"], "commbench.collectives/2");
  EXPECT_EQ(doc["complete"], true);
  EXPECT_EQ(doc["provenance"]["ranks"], 4);
  EXPECT_EQ(doc["provenance"]["environment"]["NCCL_DEBUG"], "INFO");
  ASSERT_EQ(doc["rows"].size(), 2u);
  const auto& row = doc["rows"][0];
  EXPECT_EQ(row["op"], "allreduce");
  EXPECT_EQ(row["bytes"], 1048576);
  EXPECT_TRUE(row["root"].is_null());
  EXPECT_TRUE(row["theoretical_busbw_gbps"].is_null());
  EXPECT_DOUBLE_EQ(row["busbw_gbps"].get<double>(), 3.145728);
  EXPECT_EQ(row["slowest_host"], "node,07");
  EXPECT_EQ(doc["summary"]["rows"], 2);
  fs::remove_all(dir);
}

// A run of two kinds (bench-patterns): one CSV with the settings on every line, one JSON
// array per kind from the start, and the notes learned after the files began.
TEST(Json, MixedKindsSettingsInCsvAndLateNotes) {
  const fs::path dir = temp_dir();
  RunContext context = sample_context();
  context.record_kind = "step";
  context.mixed_record_kinds = {"type", "step"};
  context.settings = {{"pattern", "ddp"}, {"model", "a,b"}};
  context.settings_in_csv = true;
  context.notes = {"at the start"};
  const Record step{&record_kind("step"), {std::int64_t{0}, 0.5, 0.25, 0.375, 0.3, 0.25, 0.125}, {}};
  {
    FileHandle file = open_output_file((dir / "p.csv").string(), "--csv", true);
    CsvReporter csv(file.get());
    JsonReporter json((dir / "p.json").string(), nullptr);
    csv.begin(context);
    json.begin(context);
    csv.add_record(step);
    json.add_record(step);
    RunSummary summary;
    summary.complete = false;
    summary.notes = {"interrupted by SIGTERM after 1 of 9 timed steps"};
    csv.finish(summary);
    json.finish(summary);
  }
  const std::string text = read_file(dir / "p.csv");
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header.substr(0, 12), "record,type,");
  EXPECT_EQ(header.substr(header.size() - 14), ",pattern,model");
  const std::string line = text.substr(header.size() + 1);
  EXPECT_EQ(line.substr(0, 5), "step,");
  EXPECT_EQ(line.substr(line.size() - 11), ",ddp,\"a,b\"\n");
  const auto doc = nlohmann::json::parse(read_file(dir / "p.json"));
  EXPECT_EQ(doc["complete"], false);
  ASSERT_EQ(doc["steps"].size(), 1u);
  EXPECT_EQ(doc["steps"][0]["step"], 0);
  EXPECT_FALSE(doc["steps"][0].contains("pattern")) << "the settings are the CSV's only";
  EXPECT_TRUE(doc["types"].is_array());
  EXPECT_EQ(doc["types"].size(), 0u);
  EXPECT_EQ(doc["provenance"]["notes"],
            nlohmann::json::array({"at the start", "interrupted by SIGTERM after 1 of 9 timed steps"}));
  fs::remove_all(dir);
}

// bench-patterns --tune's trials: the settings lead every line, the knobs follow the
// kind's columns as extra fields, and the CSV's own comment lines come before the header.
TEST(Csv, SettingsLeadTheLineAfterTheCommentLines) {
  const testing::TempDir dir;
  RunContext context = sample_context();
  context.record_kind = "trial";
  context.settings = {{"pattern", "ddp"}, {"model", "a,b"}};
  context.settings_in_csv = true;
  context.settings_lead_csv = true;
  context.extra_columns = {"bucket_cap_mb"};
  context.csv_comments = {"simulated: 8 nodes"};
  const Record trial{&record_kind("trial"),
                     {std::int64_t{1}, std::string("bucket_cap_mb"), std::string("5"), std::string("kept"), 0.25, 0.125,
                      0.2, 0.01, FieldValue{}, std::int64_t{3 << 20}},
                     {ExtraField{"bucket_cap_mb", std::string("5")}}};
  {
    FileHandle file = open_output_file(dir.path("t.csv"), "--csv", true);
    CsvReporter csv(file.get());
    csv.begin(context);
    csv.add_record(trial);
    csv.finish(RunSummary{});
  }
  EXPECT_EQ(read_file(dir.path("t.csv")),
            "# simulated: 8 nodes\n"
            "pattern,model,trial,knob,value,verdict,step_seconds,exposed_seconds,communication_seconds,noise,"
            "predicted_seconds,memory_bytes,bucket_cap_mb\n"
            "ddp,\"a,b\",1,bucket_cap_mb,5,kept,0.25,0.125,0.2,0.01,,3145728,5\n");
}

TEST(OutputFile, RefusesToOverwriteWithoutForce) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "nested" / "out.csv";
  { FileHandle f = open_output_file(path.string(), "--csv", false); }  // creates parent directories
  EXPECT_TRUE(fs::exists(path));
  try {
    open_output_file(path.string(), "--csv", false);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--csv " + path.string() + ": file exists; pass --force to overwrite it");
  }
  EXPECT_NO_THROW(open_output_file(path.string(), "--csv", true));
  EXPECT_THROW(check_output_path(dir.string(), "--json", true, OutputKind::replaced), UsageError);
  fs::remove_all(dir);
}

// What a console reporter prints while `steps` drive it.
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

TEST(Console, TableHeaderRowAndSummary) {
  const std::string printed = printed_by([&](ConsoleReporter& console) {
    console.begin(sample_context());
    console.add_row(sample_row());
    RunSummary s;
    s.rows = 1;
    s.average_busbw_gbps = 3.145728;
    console.finish(s);
  });
  EXPECT_NE(printed.find("# backend: mpi (Open MPI v4.1.4)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("#   rank 0-1 a\n#   rank 2-3 b\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("      allreduce   out    float   sum    -      1048576       262144     500.00     700.00   "
                         "1.00     2.097     3.146         -      -       0     -\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("# Avg bus bandwidth    : 3.14573 GB/s"), std::string::npos) << printed;
}

TEST(Console, WithNcclWhatItChoseAndTheModelsAlgorithmEndEachRow) {
  const std::string printed = printed_by([&](ConsoleReporter& console) {
    RunContext context = sample_context();
    context.backend = "nccl";
    console.begin(context);
    ResultRow chosen = sample_row();
    chosen.nccl_algo = "RING";
    chosen.nccl_proto = "LL128";
    chosen.nccl_channels = "16";
    chosen.model_algo = "NVLS";
    console.add_row(chosen);
    console.add_row(sample_row());  // nothing reported, no model bound
    console.finish(RunSummary{});
  });
  EXPECT_NE(printed.find("   thr               nccl     model\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("(algo/proto/ch)    (algo)\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("       0     -      RING/LL128/16      NVLS\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("       0     -                  -         -\n"), std::string::npos) << printed;
}

TEST(Console, ThresholdVerdictsAndFailures) {
  const std::string printed = printed_by([&](ConsoleReporter& console) {
    console.begin(sample_context());
    ResultRow row = sample_row();
    row.threshold_passed = false;
    console.add_row(row);
    RunSummary s;
    s.rows = 1;
    s.threshold_rows = 1;
    s.threshold_failures = {"allreduce 1MiB ...: busbw 3.1 GB/s, needs >= 5 GB/s; rule 'busbw>=5' (--threshold)"};
    console.finish(s);
  });
  EXPECT_NE(printed.find("-      -       0  FAIL\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("# thresholds: 1 row checked, 1 rule failure\n# threshold failed: allreduce 1MiB ...: busbw "
                         "3.1 GB/s, needs >= 5 GB/s; rule 'busbw>=5' (--threshold)\n"),
            std::string::npos)
      << printed;
}

// Any kind renders without code of its own: here bench-topology's links.
TEST(Console, RecordsOfAnyKindUnderTheirColumnsAndUnits) {
  const std::string printed = printed_by([&](ConsoleReporter& console) {
    RunContext context = sample_context();
    context.record_kind = "link";
    console.begin(context);
    Record link{&record_kind("link"),
                {std::string("node1"), std::string("mlx5_0 port 1"), std::string("network"), std::string("InfiniBand"),
                 std::int64_t{4}, 50.0, std::string("ACTIVE")}};
    console.add_record(link);
    Record unknown = link;
    unknown.values[4] = std::monostate{};
    unknown.values[5] = std::monostate{};
    console.add_record(unknown);
    RunSummary s;
    s.complete = false;
    console.finish(s);
  });
  EXPECT_NE(printed.find("#host            from            to              type                       count   spec_gbps"
                         "  state         \n#                                                                (lanes or "
                         "links)      (GB/s)                \n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find(" node1           mlx5_0 port 1   network         InfiniBand                     4          50"
                         "  ACTIVE        \n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("InfiniBand                     -           -  ACTIVE"), std::string::npos) << printed;
  EXPECT_NE(printed.find("# records: 2  complete: no\n"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("Avg bus bandwidth"), std::string::npos) << printed;
}

TEST(Console, RankHostRanges) {
  EXPECT_EQ(rank_host_ranges({"a", "a", "b", "a"}), (std::vector<std::string>{"0-1 a", "2 b", "3 a"}));
  EXPECT_TRUE(rank_host_ranges({}).empty());
}

}  // namespace
}  // namespace commbench

namespace commbench {
namespace {

TEST(OutputFile, AtomicWriteLeavesTheWholeFileAndNoTemporary) {
  const testing::TempDir dir;
  const std::string path = dir.path("doc.json");
  // An unrelated file of the user's that happens to be called FILE.tmp is not touched.
  dir.write("doc.json.tmp", "mine");
  const mode_t mask = ::umask(022);
  write_file_atomically(path, "{\"a\": 1}\n", "--json");
  ::umask(mask);
  EXPECT_EQ(read_file(path), "{\"a\": 1}\n");
  EXPECT_EQ(read_file(dir.path("doc.json.tmp")), "mine");
  EXPECT_TRUE(temporaries_in(dir.root()).empty());
  // The mode a plain fopen would give, not mkstemp's private 0600.
  EXPECT_EQ(fs::status(path).permissions(), fs::perms(0644));
}

TEST(OutputFile, ForceThroughASymlinkWritesItsTarget) {
  const testing::TempDir dir;
  const std::string target = dir.write("real.json", "old");
  fs::create_directories(dir.root() / "links");
  const std::string link = dir.path("links/latest.json");
  fs::create_symlink(target, link);
  write_file_atomically(link, "new", "--json");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_file(target), "new");
  EXPECT_TRUE(temporaries_in(dir.root()).empty());
  EXPECT_TRUE(temporaries_in(dir.root() / "links").empty());

  // A dangling link: '>' creates the file it points to, and so does this.
  const std::string dangling = dir.path("links/next.json");
  fs::create_symlink("../new.json", dangling);
  write_file_atomically(dangling, "created", "--json");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(read_file(dir.path("new.json")), "created");
}

TEST(OutputFile, FailedWriteNamesFlagAndPathAndLeavesNothing) {
  const testing::TempDir dir;
  const std::string path = dir.path("missing/doc.json");
  try {
    write_file_atomically(path, "{}", "--json");
    FAIL() << "wrote into a directory that does not exist";
  } catch (const BackendError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--json " + path + ": cannot create a temporary file beside it: No such file or directory");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(temporaries_in(dir.root()).empty());
}

TEST(OutputFile, PathsThatCannotBeAFileAreRefusedUpFront) {
  EXPECT_THROW(check_output_path("results/", "--json", true, OutputKind::replaced), UsageError);
}

TEST(OutputFile, DevicesAreStreamedIntoButNeverRenamedOver) {
  // A CSV may go to a device or FIFO (opened in place); JSON would replace it.
  EXPECT_NO_THROW(check_output_path("/dev/null", "--csv", true, OutputKind::streamed));
  try {
    check_output_path("/dev/null", "--json", true, OutputKind::replaced);
    FAIL() << "accepted /dev/null for a renamed file";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--json /dev/null: not a regular file (results are renamed into place, which would replace it)");
  }
  const testing::TempDir dir;
  const std::string link = dir.path("null.json");
  fs::create_symlink("/dev/null", link);
  EXPECT_THROW(check_output_path(link, "--json", true, OutputKind::replaced), UsageError);
  EXPECT_THROW(write_file_atomically(link, "{}", "--json"), UsageError);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(Csv, AFullDiskStopsTheRunNamingTheFile) {
  FileHandle full(std::fopen("/dev/full", "w"));
  ASSERT_TRUE(full);
  CsvReporter csv(full.get(), "--csv /dev/full");
  try {
    csv.begin(sample_context());
    csv.add_row(sample_row());
    FAIL() << "a failed write went unnoticed";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(), "--csv /dev/full: write failed: No space left on device");
  }
  // A row, not only the header: every line is checked.
  FileHandle again(std::fopen("/dev/full", "w"));
  ASSERT_TRUE(again);
  CsvReporter rows(again.get(), "--csv /dev/full");
  EXPECT_THROW(rows.add_row(sample_row()), BackendError);
  EXPECT_THROW(create_parent_directories("/proc/commbench/x.json", "--json"), UsageError);
}

}  // namespace
}  // namespace commbench
