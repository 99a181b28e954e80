#include "commbench/backend/arrival_census.hpp"

#include <fmt/format.h>

namespace commbench {

void ArrivalBoard::open(std::string step, int ranks, std::vector<std::string> hosts) {
  std::lock_guard lock(mutex_);
  open_ = true;
  step_ = std::move(step);
  arrived_.assign(static_cast<std::size_t>(ranks), false);
  if (!arrived_.empty()) arrived_[0] = true;
  hosts_ = std::move(hosts);
}

void ArrivalBoard::mark_arrived(int rank) {
  std::lock_guard lock(mutex_);
  if (rank >= 0 && static_cast<std::size_t>(rank) < arrived_.size()) arrived_[static_cast<std::size_t>(rank)] = true;
}

void ArrivalBoard::close() {
  std::lock_guard lock(mutex_);
  open_ = false;
}

std::string ArrivalBoard::describe() const {
  std::lock_guard lock(mutex_);
  if (!open_) return "";
  std::string missing;
  std::size_t missing_count = 0;
  for (std::size_t rank = 0; rank < arrived_.size(); ++rank) {
    if (arrived_[rank]) continue;
    // Enough to act on; a thousand-rank list would bury the line.
    if (++missing_count > 8) continue;
    const std::string host = rank < hosts_.size() ? hosts_[rank] : "unknown";
    missing += fmt::format("{}rank {} (host {})", missing.empty() ? "" : ", ", rank, host);
  }
  if (missing_count == 0) return fmt::format("every rank arrived at {}", step_);
  if (missing_count > 8) missing += fmt::format(" and {} more", missing_count - 8);
  return fmt::format("not arrived at {}: {}", step_, missing);
}

}  // namespace commbench
