#include "commbench/runner/phase_progress.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace commbench {
namespace {

using std::chrono::milliseconds;

// What a PhaseProgress printed into a temporary file.
class PrintedLines {
 public:
  PrintedLines() : file_(std::tmpfile()) {}
  ~PrintedLines() { std::fclose(file_); }
  PrintedLines(const PrintedLines&) = delete;
  PrintedLines& operator=(const PrintedLines&) = delete;
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string all;
    char chunk[512];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file_)) > 0;) all.append(chunk, n);
    return all;
  }

 private:
  std::FILE* file_;
};

TEST(PhaseProgress, ALogGetsALinePerPhaseAndPlainProgressLinesNowAndThen) {
  PrintedLines out;
  PhaseProgress progress(out.file(), false);
  const auto start = PhaseProgress::Clock::now();
  progress.begin_phase("allocation");
  progress.begin_phase("allocation");  // said again by the measurement: one line
  progress.begin_phase("warm-up", 8);
  progress.advance_phase(2);
  progress.tick(start + milliseconds(1000));  // too soon for progress
  progress.tick(start + PhaseProgress::kFirstProgress + milliseconds(1000));
  progress.tick(start + PhaseProgress::kFirstProgress + milliseconds(2000));  // within kLogEvery: none
  const std::string text = out.text();
  EXPECT_EQ(text.rfind("# allocation\n# warm-up: 8 steps\n# warm-up: step 3 of 8, 4", 0), 0u) << text;
  EXPECT_NE(text.find(" s elapsed, about "), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  EXPECT_EQ(progress.phase(), "warm-up");
  EXPECT_EQ(progress.phase_with_progress(), "warm-up (step 3 of 8)");
}

TEST(PhaseProgress, ATerminalRewritesTheProgressLineInPlaceAndEndsItForTheNextPhase) {
  PrintedLines out;
  PhaseProgress progress(out.file(), true);
  const auto start = PhaseProgress::Clock::now();
  progress.begin_phase("measurement", 3, "case");
  progress.tick(start + PhaseProgress::kFirstProgress + milliseconds(100));
  progress.advance_phase(1);
  progress.tick(start + PhaseProgress::kFirstProgress + PhaseProgress::kTerminalEvery + milliseconds(200));
  progress.begin_phase("writing");
  const std::string text = out.text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 2) << text;
  EXPECT_NE(text.find("\r# measurement: case 1 of 3, 3"), std::string::npos) << text;
  EXPECT_NE(text.find("\r# measurement: case 2 of 3, 3"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 11), "\n# writing\n") << text;
}

TEST(PhaseProgress, ALogByDefaultGetsTheProgressOfAPhasePastHalfAMinuteOnly) {
  PrintedLines out;
  PhaseProgress progress(out.file(), false, false);
  const auto start = PhaseProgress::Clock::now();
  progress.begin_phase("allocation");
  progress.tick(start + milliseconds(1000));  // a short phase: nothing
  progress.begin_phase("warm-up", 8);
  progress.advance_phase(1);
  progress.tick(start + PhaseProgress::kFirstProgress + milliseconds(1500));  // not yet: a phase of seconds
  progress.tick(start + PhaseProgress::kQuietLogEvery + milliseconds(1500));
  progress.tick(start + PhaseProgress::kQuietLogEvery + PhaseProgress::kLogEvery + milliseconds(1500));  // not yet
  progress.tick(start + 2 * PhaseProgress::kQuietLogEvery + milliseconds(1600));
  const std::string text = out.text();
  EXPECT_EQ(text.rfind("# warm-up: step 2 of 8, ", 0), 0u) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_EQ(text.find("allocation"), std::string::npos) << text;
}

TEST(PhaseProgress, WithoutAnOutputItOnlyKeepsThePhase) {
  PhaseProgress progress(nullptr, false);
  EXPECT_EQ(progress.phase(), "");
  progress.begin_phase("tuning trial 2");
  progress.tick(PhaseProgress::Clock::now() + milliseconds(60000));
  EXPECT_EQ(progress.phase_with_progress(), "tuning trial 2");
}

}  // namespace
}  // namespace commbench
