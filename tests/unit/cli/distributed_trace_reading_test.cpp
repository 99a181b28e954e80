// bench-replay's reading divided between ranks: which rank reads which file, and a reading
// over one rank that is read_traces' own (files, notes, readings and error alike).
#include "commbench/analysis/distributed_trace_reading.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/core/error.hpp"
#include "commbench/replay/rank_trace_json.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(COMMBENCH_TOPOLOGY_FIXTURES).parent_path();

TEST(ReadersBySize, TheLargestFilesGoFirstToTheRankWithTheFewestBytes) {
  // 50 to rank 0; 20, 20 and 10 to rank 1 (20, 40, 50 bytes); 5 to rank 0, the lower of two at 50.
  EXPECT_EQ(readers_by_size({10, 50, 20, 20, 5}, 2), (std::vector<int>{1, 0, 1, 1, 0}));
  EXPECT_EQ(readers_by_size({3, 3, 3}, 5), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(readers_by_size({7, 1, 9}, 1), (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(readers_by_size({}, 4).empty());
}

TEST(ReadersBySize, SharesOfManyLikeFilesDifferByAtMostOneFile) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t i = 0; i < 1024; ++i) sizes.push_back(100 + i % 7);
  const std::vector<int> readers = readers_by_size(sizes, 24);
  std::vector<std::uint64_t> load(24, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) load[static_cast<std::size_t>(readers[i])] += sizes[i];
  const auto [least, most] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*most - *least, 106U);
}

std::string reading_text(const ReadInput& input) {
  std::string text = input.format + "\n";
  for (const std::string& file : input.files) text += file + "\n";
  for (const std::string& note : input.notes) text += "# " + note + "\n";
  for (const RankTrace& trace : input.traces) text += rank_trace_json(trace) + "\n";
  return text + input.summary.verdict;
}

// The reading as text, or the error it ended with.
std::string outcome_of(const std::function<ReadInput()>& read) {
  try {
    return reading_text(read());
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(ReadTracesOver, OneRankReadsWhatOneProcessReads) {
  testing::TempDir folder;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtures / "traces" / "llama-ddp"))
    std::filesystem::copy_file(entry.path(), folder.root() / entry.path().filename());
  folder.write("ds_config.json", "{\"train_batch_size\": 16}");
  LocalBootstrap world;
  const ReplayInputRequest request{.paths = {folder.root().string()}};
  const DividedReading divided = read_traces_over(world, request);
  ASSERT_TRUE(divided.slowest.has_value());
  EXPECT_EQ(divided.slowest->files, 5U);  // ds_config.json among them
  EXPECT_GT(divided.slowest->bytes, 100000U);
  const ReadInput& over = divided.input;
  EXPECT_EQ(over.files.size(), 4U);
  EXPECT_NE(reading_text(over).find("ds_config.json passed over"), std::string::npos);
  EXPECT_EQ(reading_text(over), reading_text(read_traces(request)));
}

TEST(ReadTracesOver, TheFirstBadFileIsTheOneProcesssError) {
  testing::TempDir folder;
  const std::filesystem::path fixture = kFixtures / "traces" / "llama-ddp";
  std::filesystem::copy_file(fixture / "rank0.json.gz", folder.root() / "rank0.json.gz");
  folder.write("rank1.json", "{\"traceEvents\": [");
  folder.write("rank2.json", "[1, 2");
  LocalBootstrap world;
  const ReplayInputRequest request{.paths = {folder.root().string()}};
  const std::string over = outcome_of([&] { return read_traces_over(world, request).input; });
  EXPECT_NE(over.find("rank1.json: "), std::string::npos) << over;
  EXPECT_EQ(over, outcome_of([&] { return read_traces(request); }));
}

TEST(ReadTracesOver, ReportsAreReadAsOneProcessReadsThem) {
  LocalBootstrap world;
  const ReplayInputRequest request{.paths = {(kFixtures / "nsys" / "nsys-llama-ddp").string()}};
  EXPECT_FALSE(read_traces_over(world, request).slowest.has_value());
  const std::string over = outcome_of([&] { return read_traces_over(world, request).input; });
  EXPECT_EQ(over.rfind("nsys\n", 0), 0U) << over;
  EXPECT_EQ(over, outcome_of([&] { return read_traces(request); }));
  const ReplayInputRequest with_ranks{.paths = {(kFixtures / "traces" / "llama-ddp").string()}, .ranks = 4};
  const std::string refused = outcome_of([&] { return read_traces_over(world, with_ranks).input; });
  EXPECT_EQ(refused, "--ranks: only for a DeepSpeed comms log (a trace says its world size)");
  EXPECT_EQ(refused, outcome_of([&] { return read_traces(with_ranks); }));
}

}  // namespace
}  // namespace commbench
