// bench-patterns --schedule files. Whatever reads must give schedules whose waits name
// earlier steps and whose peer steps name a round the file listed, never a crash.
#include "commbench/pattern/schedule_file.hpp"
#include "fuzz_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commbench;
  const std::string& path = fuzz::input_file(data, size);
  fuzz::expect_value_or_usage_error([&] {
    const auto file = read_schedule_file(path);
    for (const RankSchedule& schedule : file->ranks)
      for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
        for (const std::size_t wait : schedule.steps[i].waits_for)
          if (wait >= i) std::abort();
        if (schedule.steps[i].kind == StepKind::peer && schedule.steps[i].peer_round >= schedule.peer_rounds.size())
          std::abort();
      }
    file->for_rank(0, static_cast<int>(file->ranks.size()));
  });
  return 0;
}
