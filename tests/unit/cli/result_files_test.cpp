// The shell's guard of result files: two flags naming one file however it is spelt, a
// result file that is a file the run reads, and a file to read that is not there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/flag_values.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::TempDir;
using testing::usage_error_of;

// Runs `body` in `dir`, so relative paths are relative to it.
template <typename Body>
void inside(const TempDir& dir, Body body) {
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.root());
  body();
  std::filesystem::current_path(before);
}

TEST(ResultFiles, OneFileIsOneFileHoweverItIsSpelt) {
  TempDir dir;
  inside(dir, [&] {
    EXPECT_TRUE(same_file("a.csv", "./a.csv"));  // neither exists yet
    EXPECT_TRUE(same_file("a.csv", (dir.root() / "sub" / ".." / "a.csv").string()));
    EXPECT_FALSE(same_file("a.csv", "b.csv"));
    dir.write("real.json", "{}");
    std::filesystem::create_symlink(dir.root() / "real.json", dir.root() / "link.json");
    EXPECT_TRUE(same_file("link.json", "real.json"));
    EXPECT_EQ(usage_error_of([] { check_distinct_outputs("a.csv", "./a.csv"); }), "--json: same file as --csv (a.csv)");
  });
}

TEST(ResultFiles, AResultFileIsNeitherAnotherNorOneTheRunReads) {
  TempDir dir;
  const std::string sweep = dir.write("sweep.csv", "op\n");
  ResultFiles files{dir.path("r.csv"), dir.path("r.json"), true};
  EXPECT_NO_THROW(
      shell_detail::check_result_files_apart(files, {{dir.path("t.json"), "--trace"}}, {{sweep, "--from"}}));
  files.json_path = sweep;
  EXPECT_EQ(usage_error_of([&] {
              shell_detail::check_result_files_apart(files, {}, {{sweep, "--from"}});
            }),
            "--json " + sweep + ": a file this run reads (--from " + sweep + "); name another result file");
  files.json_path = dir.path("r.json");
  // A command may list --csv among the files it replaces: it is not another file.
  EXPECT_NO_THROW(shell_detail::check_result_files_apart(files, {{files.csv_path, "--csv"}}, {}));
  EXPECT_EQ(usage_error_of([&] {
              shell_detail::check_result_files_apart(files, {{dir.path("r.csv"), "--dump-schedule"}}, {});
            }),
            "--dump-schedule: same file as --csv (" + dir.path("r.csv") + ")");
}

TEST(ResultFiles, AFileToReadThatIsNotThereIsNamedWithItsFlag) {
  TempDir dir;
  EXPECT_EQ(usage_error_of([&] {
              shell_detail::check_files_exist({{"", "--from"}, {dir.path("x.csv"), "--from"}});
            }),
            "--from " + dir.path("x.csv") + ": cannot read (No such file or directory)");
  EXPECT_EQ(usage_error_of([&] {
              shell_detail::check_files_exist({{dir.path("t.json"), "TRACE"}});
            }),
            dir.path("t.json") + ": cannot read (No such file or directory)");
  EXPECT_NO_THROW(shell_detail::check_files_exist({{dir.write("t.json", "{}"), "TRACE"}}));
}

}  // namespace
}  // namespace commbench
