#include "commbench/core/reading_budget.hpp"

#include <algorithm>
#include <cmath>

namespace commbench {

double reading_budget_seconds(const ReadingBudget& budget, double fastest_iteration_seconds) {
  const double iteration = std::min(budget.expected_iteration_seconds, fastest_iteration_seconds);
  if (!std::isfinite(iteration)) return std::numeric_limits<double>::infinity();
  return std::max(budget.floor_seconds,
                  budget.factor * static_cast<double>(budget.planned_iterations) * std::max(iteration, 0.0));
}

double moved_gbps(std::uint64_t bytes, std::uint64_t iterations, double seconds) {
  if (iterations == 0 || !(seconds > 0)) return 0;
  return static_cast<double>(bytes) * static_cast<double>(iterations) / seconds / 1e9;
}

}  // namespace commbench
