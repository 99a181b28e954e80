// A reading's time budget (bench-validate's pair and group readings): a reading of a link
// at a hundredth of its rate must not take a hundred times as long, so each reading may
// run for a few times what its expected rate needs and is then cut short, scored from
// the bytes it moved. The budget is checked between iterations on figures every rank
// agrees on, so the ranks of a pair stop after the same iteration and no transfer is left
// waiting for a partner that has stopped.
#pragma once

#include <cstdint>
#include <limits>

namespace commbench {

struct ReadingBudget {
  // Iterations the reading plans to run: warm-up, calibration and timed.
  std::uint64_t planned_iterations = 0;
  // Seconds per iteration at the expected rate; infinity where no rate is known yet, and
  // the fastest rank of the reading stands for it.
  double expected_iteration_seconds = std::numeric_limits<double>::infinity();
  // Whether this rank's own iterations count as the reading's fastest (an idle rank's do not).
  bool takes_part = true;
  double factor = 3;          // times what the expected rate needs
  double floor_seconds = 1;   // never less: start-up costs dominate small readings
};

// The seconds a reading may run: `factor` x planned iterations x the shorter of the
// expected iteration time and `fastest_iteration_seconds` (the fastest taking part rank's
// mean so far), at least `floor_seconds`. Infinity while neither time is known.
double reading_budget_seconds(const ReadingBudget& budget, double fastest_iteration_seconds);

// The rate of a reading cut short, from what it moved: `bytes` per iteration over
// `iterations` in `seconds` (GB/s; 0 when nothing moved or no time passed).
double moved_gbps(std::uint64_t bytes, std::uint64_t iterations, double seconds);

}  // namespace commbench
