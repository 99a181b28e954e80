// --schedule: a dump read back is the schedule that was dumped (every kind of step, peer
// rounds, waits), for a modelled pattern of every shape; a dump without compute keeps
// its communication and drops the waits on what it left out; malformed files name the
// line.
#include "commbench/pattern/schedule_file.hpp"

#include <gtest/gtest.h>

#include "commbench/pattern/schedule_json.hpp"
#include "schedule_test_support.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::TempDir;
using testing::usage_error_of;

void expect_same_schedule(const RankSchedule& read, const RankSchedule& built) {
  EXPECT_EQ(read.world_rank, built.world_rank);
  ASSERT_EQ(read.steps.size(), built.steps.size());
  for (std::size_t i = 0; i < built.steps.size(); ++i) {
    const ScheduleStep& a = read.steps[i];
    const ScheduleStep& b = built.steps[i];
    SCOPED_TRACE(b.label);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.stream, b.stream);
    EXPECT_EQ(a.phase, b.phase);
    EXPECT_EQ(a.label, b.label);
    EXPECT_EQ(a.layer, b.layer);
    EXPECT_EQ(a.micro_batch, b.micro_batch);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.waits_for, b.waits_for);
    if (b.kind == StepKind::compute) EXPECT_DOUBLE_EQ(a.compute_seconds, b.compute_seconds);
    if (b.kind == StepKind::compute) continue;
    EXPECT_EQ(a.group, b.group);
    EXPECT_EQ(a.dtype, b.dtype);
    if (b.kind == StepKind::peer) {
      EXPECT_EQ(read.peer_rounds.at(a.peer_round).transfers, built.peer_rounds.at(b.peer_round).transfers);
      continue;
    }
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.redop, b.redop);
  }
}

TEST(ScheduleFile, EveryRanksDumpReadsBackAsTheSchedule) {
  struct Case {
    PatternKind kind;
    int data, tensor, pipeline;
  };
  for (const Case c : {Case{PatternKind::ddp, 4, 1, 1}, Case{PatternKind::zero3, 4, 1, 1},
                       Case{PatternKind::fsdp, 2, 1, 1}, Case{PatternKind::tp, 1, 2, 2}}) {
    SCOPED_TRACE(std::string(name_of(c.kind)));
    const PatternConfig config = testing::config_of(c.kind, testing::small_llama(4), c.data, c.tensor, c.pipeline);
    const int ranks = config.layout.ranks();
    std::string lines;
    for (int rank = 0; rank < ranks; ++rank) lines += schedule_json_lines(build_schedule(config, rank), true);
    TempDir dir;
    const auto file = read_schedule_file(dir.write("s.jsonl", lines));
    ASSERT_EQ(file->ranks.size(), static_cast<std::size_t>(ranks));
    EXPECT_EQ(file->dropped_waits, 0u);
    for (int rank = 0; rank < ranks; ++rank)
      expect_same_schedule(file->for_rank(rank, ranks), build_schedule(config, rank));
  }
}

TEST(ScheduleFile, OneRanksFileStandsForEveryRankAndADumpWithoutComputeKeepsItsCommunication) {
  const PatternConfig config = testing::config_of(PatternKind::ddp, testing::small_llama(4), 4);
  const RankSchedule built = build_schedule(config, 0);
  TempDir dir;
  const auto file = read_schedule_file(dir.write("s.jsonl", schedule_json_lines(built)));
  EXPECT_TRUE(file->one_for_all());
  const RankSchedule third = file->for_rank(3, 4);
  EXPECT_EQ(third.world_rank, 3);
  const std::size_t communication =
      testing::count(built, [](const ScheduleStep& s) { return s.kind != StepKind::compute; });
  EXPECT_EQ(third.steps.size(), communication);
  EXPECT_GT(file->dropped_waits, 0u);  // the buckets waited for backward compute
  for (const ScheduleStep& step : third.steps)
    EXPECT_TRUE(step.waits_for.empty() || step.waits_for[0] < third.steps.size());
  PatternConfig from_file;
  from_file.schedule_file = file;
  from_file.layout.data = 2;
  from_file.layout.ranks_per_node = 2;
  EXPECT_EQ(build_schedule(from_file, 1).steps.size(), communication);
  EXPECT_EQ(pattern_name(from_file), "schedule");
}

TEST(ScheduleFile, MalformedFilesNameTheLine) {
  TempDir dir;
  const std::string good =
      R"({"step":0,"rank":0,"kind":"collective","op":"allreduce","bytes":8,"dtype":"float","group":"data",)"
      R"("stream":"data","phase":"forward","label":"x","layer":-1,"micro_batch":-1,"waits_for":[]})";
  const auto error_of = [&](const std::string& text) {
    const std::string path = dir.write("bad.jsonl", text);
    return usage_error_of([&] { read_schedule_file(path); }).substr(path.size() + 13);
  };
  EXPECT_EQ(error_of(good + "\n{\"step\":1\n"), "line 2: not a JSON line of --dump-schedule's format");
  std::string unknown = good;
  unknown.replace(unknown.find("allreduce"), 9, "allsum");
  EXPECT_NE(error_of(unknown).find("line 1: op: unknown value 'allsum'"), std::string::npos) << error_of(unknown);
  std::string group = good;
  group.replace(group.find("\"data\""), 6, "\"row\"");
  EXPECT_EQ(error_of(group), "line 1: \"group\": unknown group 'row'");
  std::string later = good;
  later.replace(later.find("[]"), 2, "[0]");
  EXPECT_EQ(error_of(later), "line 1: step 0 waits for step 0, not an earlier one");
  EXPECT_EQ(error_of(good + "\n" + good), "line 2: step 0 of rank 0 after step 0: steps are listed in order");
  std::string rank_two = good;
  rank_two.replace(rank_two.find("\"rank\":0"), 8, "\"rank\":2");
  EXPECT_EQ(error_of(good + "\n" + rank_two), "rank 1 is missing (the ranks must be 0 to 1)");
  EXPECT_EQ(error_of("\n\n"), "no step in the file");
  std::string float_step = good;
  float_step.replace(float_step.find("\"step\":0"), 8, "\"step\":1e300");
  EXPECT_EQ(error_of(float_step), "line 1: \"step\" is 1e+300");
  std::string huge = good;
  huge.replace(huge.find("\"bytes\":8"), 9, "\"bytes\":2000000000000");
  EXPECT_EQ(error_of(huge), "line 1: \"bytes\" 2000000000000 is more than 1 TiB");
  std::string no_bytes = good;
  no_bytes.erase(no_bytes.find("\"bytes\":8,"), 10);
  EXPECT_EQ(error_of(no_bytes), "line 1: no \"bytes\"");
}

TEST(ScheduleFile, RanksWhoseGroupCallsDoNotLineUpAreRefusedBeforeTheyCouldWaitForever) {
  const PatternConfig tp = testing::config_of(PatternKind::tp, testing::small_llama(4), 1, 2, 2);
  std::string lines;
  for (int rank = 0; rank < 4; ++rank) lines += schedule_json_lines(build_schedule(tp, rank), true);
  TempDir dir;
  check_groups_line_up(*read_schedule_file(dir.write("tp.jsonl", lines)), tp.layout);  // a dump lines up
  const PatternConfig ddp = testing::config_of(PatternKind::ddp, testing::small_llama(2), 2);
  std::string rank1 = schedule_json_lines(build_schedule(ddp, 1), true);
  const std::size_t collective = rank1.find("\"kind\":\"collective\"");
  const std::size_t bytes = rank1.find("\"bytes\":", collective);
  rank1.insert(bytes + 8, "1");  // rank 1's first collective ten times larger and more
  const std::string path = dir.write("ddp.jsonl", schedule_json_lines(build_schedule(ddp, 0), true) + rank1);
  const auto file = read_schedule_file(path);
  EXPECT_EQ(usage_error_of([&] { check_groups_line_up(*file, ddp.layout); }),
            "--schedule " + path + ": rank 1 and rank 0 part at their collective 1 on the data group (" +
                std::to_string(testing::count(build_schedule(ddp, 1),
                                              [](const ScheduleStep& s) {
                                                return s.kind == StepKind::collective && s.group == GroupRole::data;
                                              })) +
                " and " +
                std::to_string(testing::count(build_schedule(ddp, 0),
                                              [](const ScheduleStep& s) {
                                                return s.kind == StepKind::collective && s.group == GroupRole::data;
                                              })) +
                " calls there); run, they would wait for each other forever");
}

TEST(ScheduleFile, ARankCountOtherThanTheJobsIsRefused) {
  const PatternConfig config = testing::config_of(PatternKind::ddp, testing::small_llama(2), 2);
  TempDir dir;
  const std::string path = dir.write(
      "two.jsonl", schedule_json_lines(build_schedule(config, 0)) + schedule_json_lines(build_schedule(config, 1)));
  const auto file = read_schedule_file(path);
  EXPECT_EQ(usage_error_of([&] { file->for_rank(0, 4); }),
            "--schedule " + path +
                ": holds 2 ranks' schedules, the job has 4 ranks (a file of one rank's stands for "
                "every rank)");
}

}  // namespace
}  // namespace commbench
