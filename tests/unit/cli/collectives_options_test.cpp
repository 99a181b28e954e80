#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "commbench/cli/collectives_options.hpp"
#include "commbench/core/error.hpp"
#include "commbench/runner/batch_length.hpp"

namespace commbench {
namespace {

ParsedCommandLine parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"bench-collectives"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_collectives_command_line(static_cast<int>(argv.size()), argv.data());
}

CollectivesOptions options(std::initializer_list<const char*> args) {
  auto parsed = parse(args);
  EXPECT_TRUE(parsed.options.has_value());
  return *parsed.options;
}

TEST(CollectivesOptions, Defaults) {
  const CollectivesOptions o = options({});
  EXPECT_EQ(o.ops.size(), 4u);
  EXPECT_EQ(o.sweep.min_bytes, 8u);
  EXPECT_EQ(o.sweep.max_bytes, 64u << 20);
  EXPECT_DOUBLE_EQ(o.sweep.step_factor, 2.0);
  EXPECT_EQ(o.stopping.fixed_iterations, 0u);
  EXPECT_DOUBLE_EQ(o.stopping.target_noise, 0.01);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.job.backend, "auto");
  EXPECT_EQ(o.dtypes, std::vector<DataType>{DataType::float32});
  EXPECT_EQ(o.redops, std::vector<ReduceOp>{ReduceOp::sum});
  EXPECT_EQ(o.placements, std::vector<Placement>{Placement::out_of_place});
  EXPECT_EQ(o.stdout_format, OutputFormat::table);
}

TEST(CollectivesOptions, NcclTestsStyleFlags) {
  const CollectivesOptions o = options({"-b", "1K", "-e",         "1G", "-f",  "4",  "-n", "20", "-w", "3",    "-c",
                                        "1",  "-d", "half,float", "-o", "max", "-r", "1",  "-T", "60", "--op", "all"});
  EXPECT_EQ(o.sweep.min_bytes, 1024u);
  EXPECT_EQ(o.sweep.max_bytes, 1u << 30);
  EXPECT_DOUBLE_EQ(o.sweep.step_factor, 4.0);
  EXPECT_EQ(o.stopping.fixed_iterations, 20u);
  EXPECT_EQ(o.warmup_iterations, 3u);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.dtypes.size(), 2u);
  EXPECT_EQ(o.redops, std::vector<ReduceOp>{ReduceOp::max});
  EXPECT_EQ(o.root, 1);
  EXPECT_DOUBLE_EQ(o.job.timeout_seconds, 60.0);
  EXPECT_EQ(o.ops.size(), 7u);
  EXPECT_TRUE(options({"--check"}).check);
  EXPECT_FALSE(options({"-c", "0"}).check);
  EXPECT_EQ(options({"-i", "1M"}).sweep.step_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(options({"--target-noise", "0.5%"}).stopping.target_noise, 0.005);
  EXPECT_TRUE(options({"-d", "all"}).dtypes_all);
}

TEST(CollectivesOptions, NicCounters) {
  EXPECT_EQ(options({}).nic_counters, NicCounting::automatic);
  EXPECT_DOUBLE_EQ(options({}).nic_fraction, 0.7);
  EXPECT_EQ(options({"--nic-counters", "on"}).nic_counters, NicCounting::on);
  EXPECT_EQ(options({"--nic-counters", "off"}).nic_counters, NicCounting::off);
  EXPECT_DOUBLE_EQ(options({"--nic-fraction", "0.5"}).nic_fraction, 0.5);
  const auto settings = options({"--nic-counters", "off"}).describe();
  EXPECT_NE(std::find(settings.begin(), settings.end(), std::pair<std::string, std::string>{"nic_counters", "off"}),
            settings.end());
}

TEST(CollectivesOptions, HelpAndVersionPrintInsteadOfRunning) {
  const auto help = parse({"--help"});
  EXPECT_FALSE(help.options.has_value());
  EXPECT_NE(help.text_to_print.find("--max-bytes"), std::string::npos);
  EXPECT_EQ(parse({"--version"}).text_to_print.rfind("bench-collectives ", 0), 0u);
}

TEST(CollectivesOptions, HelpListsEveryAcceptedType) {
  const std::string help = parse({"--help"}).text_to_print;
  EXPECT_NE(help.find("f8e4m3, f8e5m2, all"), std::string::npos) << help;
  EXPECT_NE(help.find("bf16"), std::string::npos) << help;
  EXPECT_EQ(options({"-d", "fp8_e4m3"}).dtypes, std::vector<DataType>{DataType::float8_e4m3});
}

// CLI11 reads values before it looks for --help: a bad value next to --help or --version
// must not hide them.
TEST(CollectivesOptions, HelpAndVersionWinOverABadValue) {
  EXPECT_NE(parse({"-d", "float128", "--help"}).text_to_print.find("--max-bytes"), std::string::npos);
  EXPECT_TRUE(parse({"-b", "0", "-V"}).version_requested);
}

TEST(CollectivesOptions, TypedValuesAndBareSwitches) {
  const CollectivesOptions o = options(
      {"-c", "-z", "--backend", "MPI", "--format", "CSV", "--placement", "both", "--target-noise", "2", "-o", "all"});
  EXPECT_TRUE(o.check);
  EXPECT_TRUE(o.blocking);
  EXPECT_EQ(o.job.backend, "mpi");
  EXPECT_EQ(o.stdout_format, OutputFormat::csv);
  EXPECT_EQ(o.placements.size(), 2u);
  EXPECT_DOUBLE_EQ(o.stopping.target_noise, 0.02);
  EXPECT_TRUE(o.redops_all);
  EXPECT_EQ(o.redops.size(), 5u);
  EXPECT_FALSE(o.dtypes_all);
}

struct BadInput {
  std::vector<const char*> args;
  const char* expected_in_message;
};

class CollectivesOptionsBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CollectivesOptionsBadInput, OneLineNamingTheFlag) {
  const BadInput& bad = GetParam();
  std::vector<const char*> argv{"bench-collectives"};
  argv.insert(argv.end(), bad.args.begin(), bad.args.end());
  try {
    parse_collectives_command_line(static_cast<int>(argv.size()), argv.data());
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(bad.expected_in_message), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, CollectivesOptionsBadInput,
    ::testing::Values(
        BadInput{{"-b", "1M", "-e", "1K"}, "-b/--min-bytes"}, BadInput{{"-b", "0"}, "-b/--min-bytes"},
        BadInput{{"--nic-counters", "yes"}, "--nic-counters: expected auto, on or off (got yes)"},
        BadInput{{"--nic-fraction", "1"}, "--nic-fraction: must be between 0 and 1 (got 1)"},
        BadInput{{"--nic-fraction", "x"}, "--nic-fraction"}, BadInput{{"-e", "-5"}, "-e/--max-bytes"},
        BadInput{{"-e", "lots"}, "-e/--max-bytes"}, BadInput{{"-e", "99999999999999999999"}, "-e/--max-bytes"},
        BadInput{{"-f", "1"}, "-f/--step-factor"}, BadInput{{"-f", "0.5"}, "-f/--step-factor"},
        BadInput{{"-f", "x"}, "-f/--step-factor"}, BadInput{{"-i", "0"}, "-i/--step-bytes"},
        BadInput{{"-f", "2", "-i", "1K"}, "excludes"}, BadInput{{"-n", "0"}, "-n/--iters"},
        BadInput{{"-n", "ten"}, "-n/--iters"}, BadInput{{"-w", "-1"}, "-w/--warmup"},
        BadInput{{"-c", "2"}, "-c/--check: expected 0 or 1 (got 2)"},
        BadInput{{"-z", "x"}, "-z/--blocking: expected 0 or 1 (got x)"},
        BadInput{{"-z", "-G", "2"}, "-z/--blocking: cannot be combined with -G/--cuda-graph"},
        BadInput{{"-g", "1025"}, "-g/--gpus-per-process: at most 1024"}, BadInput{{"-d", "float128"}, "-d/--dtype"},
        BadInput{{"-o", "mean"}, "-o/--redop"}, BadInput{{"--op", "allreduc"}, "--op"},
        BadInput{{"-r", "-1"}, "-r/--root"}, BadInput{{"-T", "-3"}, "-T/--timeout"},
        BadInput{{"--backend", "gloo"}, "--backend"}, BadInput{{"--placement", "sideways"}, "--placement"},
        BadInput{{"--format", "xml"}, "--format"}, BadInput{{"--max-time-per-size", "0"}, "--max-time-per-size"},
        BadInput{{"--target-noise", "0"}, "--target-noise"}, BadInput{{"--target-noise", "150%"}, "--target-noise"},
        BadInput{{"--batch-time", "-1"}, "--batch-time"}, BadInput{{"--min-samples", "0"}, "--min-samples"},
        BadInput{{"--csv", "same.out", "--json", "same.out"}, "--json"},
        BadInput{{"--csv", ""}, "--csv: empty file name"}, BadInput{{"--json", ""}, "--json: empty file name"},
        BadInput{{"--no-such-flag"}, "unknown flag --no-such-flag (see --help)"}, BadInput{{"stray"}, "stray"},
        BadInput{{"--max-byte", "1M"}, "unknown flag --max-byte (did you mean --max-bytes?) (see --help)"},
        BadInput{{"--max-byte=1M"}, "unknown flag --max-byte (did you mean --max-bytes?) (see --help)"},
        BadInput{{"-e", "8", "--itres", "5"}, "unknown flag --itres (did you mean --iters?) (see --help)"},
        BadInput{{"--op", "allreduc"}, "--op: unknown value 'allreduc' (did you mean allreduce?); expected one of"},
        BadInput{{"-d", "flaot"}, "-d/--dtype: unknown value 'flaot' (did you mean float?); expected one of"},
        BadInput{{"-e", "1.5M"},
                 "-e/--max-bytes: '1.5M' has a fraction; sizes are whole numbers of bytes or units: "
                 "write 1536K"},
        BadInput{{"--threshold", "busbw>>1"}, "--threshold 'busbw>>1': '>1' is not a number"},
        BadInput{{"--threshold"}, "--threshold"}, BadInput{{"--thresholds", ""}, "--thresholds: empty file name"},
        BadInput{{"--baseline", ""}, "--baseline: empty file name"},
        BadInput{{"--op", "alltoallv", "--alltoallv-distribution", "zipf:-2"}, "--alltoallv-distribution"},
        BadInput{{"--op", "alltoallv", "--alltoallv-distribution", "pareto:1"}, "--alltoallv-distribution"},
        BadInput{{"--alltoallv-distribution", "hot:0.5"}, "--alltoallv-distribution: applies to alltoallv only"}));

TEST(CollectivesOptions, AlltoallvDistributionIsParsedAndRecorded) {
  const CollectivesOptions named = options({"--op", "alltoall,alltoallv", "--alltoallv-distribution", "zipf:1.1"});
  EXPECT_EQ(named.ops, (std::vector<Collective>{Collective::alltoall, Collective::alltoallv}));
  EXPECT_EQ(named.alltoallv_distribution, (PeerDistribution{PeerDistribution::Kind::zipf, 1.1}));
  bool recorded = false;
  for (const auto& [key, value] : named.describe())
    if (key == "alltoallv_distribution") recorded = value == "zipf:1.1";
  EXPECT_TRUE(recorded);
  // The default is uniform, and runs without alltoallv do not mention it.
  EXPECT_EQ(options({"--op", "alltoallv"}).alltoallv_distribution, PeerDistribution{});
  for (const auto& [key, value] : options({"--op", "all"}).describe()) EXPECT_NE(key, "alltoallv_distribution");
  // --op all is nccl-tests' set: alltoallv only when named.
  const std::vector<Collective> all = options({"--op", "all"}).ops;
  EXPECT_EQ(std::count(all.begin(), all.end(), Collective::alltoallv), 0);
}

TEST(CollectivesOptions, ThresholdRulesRepeatAndAreRecorded) {
  const CollectivesOptions o = options({"--threshold", "allreduce@1M..:busbw>=300", "--threshold", "time<=2*baseline",
                                        "--baseline", "good.csv", "--thresholds", "rules.txt"});
  ASSERT_EQ(o.threshold_rules.size(), 2u);
  EXPECT_EQ(o.threshold_rules[0].min_bytes, 1u << 20);
  EXPECT_EQ(o.threshold_rules[1].reference, Reference::baseline);
  EXPECT_EQ(o.baseline_path, "good.csv");
  EXPECT_EQ(o.thresholds_path, "rules.txt");
  const auto settings = o.describe();
  const auto value_of = [&](const std::string& key) {
    for (const auto& [k, v] : settings)
      if (k == key) return v;
    return std::string("(absent)");
  };
  EXPECT_EQ(value_of("threshold"), "allreduce@1M..:busbw>=300 ; time<=2*baseline");
  EXPECT_EQ(value_of("baseline"), "good.csv");
  EXPECT_EQ(value_of("thresholds"), "rules.txt");
  for (const auto& [k, v] : options({}).describe()) EXPECT_NE(k.find("threshold"), 0u) << k;  // none without rules
}

TEST(CollectivesOptions, BatchTimeIsTheBackendsUnlessGiven) {
  EXPECT_FALSE(options({}).batch_seconds.has_value());
  EXPECT_EQ(options({"--batch-time", "0.02"}).batch_seconds, 0.02);
  // On a GPU a batch's own cost (its first launch, about 5.5 us) stays at or below 0.11 %.
  EXPECT_GE(default_batch_seconds("nccl"), 5.5e-6 / 0.002);
  EXPECT_EQ(default_batch_seconds("mpi"), 0.001);
}

TEST(CollectivesOptions, RootMustBeARank) {
  const CollectivesOptions o = options({"-r", "4"});
  EXPECT_NO_THROW(validate_for_ranks(o, 5));
  try {
    validate_for_ranks(o, 4);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "-r/--root: 4 is outside [0, 4)");
  }
}

}  // namespace
}  // namespace commbench
