#include "straggler_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/core/statistics.hpp"

namespace commbench {

namespace {

// The rank that caused the most waiting, and what says how sure that is.
struct Candidate {
  const RankTraceSummary* rank = nullptr;
  double share = 0;     // of all the waiting the ranks caused
  double lateness = 0;  // seconds after the others' median, on average over the calls it came last to
  double spread = 0;    // seconds the others lay from their median at those calls, on average
};

// Milliseconds, or seconds from one second on.
std::string ms(double seconds) {
  if (seconds >= 1) return fmt::format("{} s", significant_text(seconds, 3));
  return fmt::format("{} ms", significant_text(seconds * 1e3, 3));
}

std::string percent(double share) { return fmt::format("{:.0f} %", share * 100); }

std::string rank_name(const RankTraceSummary& rank) {
  return rank.host.empty() ? fmt::format("rank {}", rank.rank) : fmt::format("rank {} ({})", rank.rank, rank.host);
}

// A step's length: the ranks' median of their mean step; none without steps.
std::optional<double> typical_step(const TraceSummary& summary) {
  if (summary.steps.empty()) return std::nullopt;
  std::vector<double> steps;
  for (const RankTraceSummary& rank : summary.ranks)
    if (rank.step_seconds && rank.steps > 0) steps.push_back(*rank.step_seconds / rank.steps);
  if (steps.empty()) return std::nullopt;
  return median_of(steps);
}

std::optional<Candidate> most_waiting_caused(const TraceSummary& summary, const std::vector<double>& spread_seconds) {
  double total = 0;
  std::size_t top = 0;
  for (std::size_t r = 0; r < summary.ranks.size(); ++r) {
    total += summary.ranks[r].caused_wait_seconds;
    if (summary.ranks[r].caused_wait_seconds > summary.ranks[top].caused_wait_seconds) top = r;
  }
  const RankTraceSummary& rank = summary.ranks[top];
  if (total <= 0 || rank.last_arrivals == 0) return std::nullopt;
  const double calls = static_cast<double>(rank.last_arrivals);
  return Candidate{&rank, rank.caused_wait_seconds / total, rank.lateness_seconds.value_or(0),
                   spread_seconds[top] / calls};
}

// The chance that one of `ranks` ranks, none late of its own, arrives last at `last` of
// `calls` calls or more: each is last at a call with chance 1/ranks.
double chance_of_being_last(std::uint64_t last, std::uint64_t calls, std::size_t ranks) {
  const double p = 1.0 / static_cast<double>(ranks);
  double tail = 0;
  for (std::uint64_t k = last; k <= calls; ++k) {
    const double n = static_cast<double>(calls), j = static_cast<double>(k);
    tail += std::exp(std::lgamma(n + 1) - std::lgamma(j + 1) - std::lgamma(n - j + 1) + j * std::log(p) +
                     (n - j) * std::log1p(-p));
  }
  return std::min(1.0, tail * static_cast<double>(ranks));
}

std::string chance_percent(double chance) {
  if (chance < 0.001) return "under 0.1 %";
  return chance >= 0.1 ? fmt::format("{:.0f} %", chance * 100) : fmt::format("{} %", significant_text(chance * 100, 2));
}

std::string chance_text(const TraceSummary& summary, const Candidate& candidate) {
  const double chance = chance_of_being_last(candidate.rank->last_arrivals, summary.calls, summary.ranks.size());
  return fmt::format("by chance alone one of {} ranks is last at {} of {} calls {} of the time", summary.ranks.size(),
                     candidate.rank->last_arrivals, summary.calls, chance_percent(chance));
}

// Why the rank that caused the most waiting is not named; empty where it is. Beyond the
// arrival noise, its lateness must also be either beyond chance (last at so many calls
// that no rank is by chance 1 time in 20) or at a tenth of a step or more.
std::string reason_not_named(const TraceSummary& summary, const Candidate& candidate) {
  const RankTraceSummary& rank = *candidate.rank;
  if (candidate.share <= 0.5) return "but not most of it";
  if (rank.last_arrivals < 2) return "but it arrives last at one call only";
  if (summary.ranks.size() == 2) {
    if (summary.calls < 10 || rank.last_arrivals * 10 < summary.calls * 9)
      return "but of two ranks one is always last, and it takes one last at 90 % of 10 calls or more";
  } else if (candidate.lateness <= 2 * candidate.spread) {
    return fmt::format("but its lateness, {} after the others' median, is within twice their own spread ({})",
                       ms(candidate.lateness), ms(candidate.spread));
  }
  if (chance_of_being_last(rank.last_arrivals, summary.calls, summary.ranks.size()) < 0.05) return {};
  const auto step = typical_step(summary);
  if (step && candidate.lateness >= 0.1 * *step) return {};
  return fmt::format("but {}, and its lateness, {} after the others' median, is {}", chance_text(summary, candidate),
                     ms(candidate.lateness),
                     step ? fmt::format("under a tenth of a step ({})", ms(*step)) : std::string("no step's"));
}

// How sure the naming is: its lateness against the others' own spread, and the chance of
// its last arrivals.
std::string sureness(const TraceSummary& summary, const Candidate& candidate) {
  const std::string against =
      candidate.spread > 0
          ? fmt::format("{} times the others' own spread", significant_text(candidate.lateness / candidate.spread, 2))
          : std::string("the others arriving together");
  // Of two ranks the other's spread is none: no noise to hold it against.
  if (summary.ranks.size() == 2) return chance_text(summary, candidate);
  return fmt::format("{}; {}", against, chance_text(summary, candidate));
}

}  // namespace

void judge_straggler(TraceSummary& summary, const std::vector<double>& spread_seconds) {
  summary.straggler.reset();
  const std::string matched = fmt::format("{} matched", count_text(summary.calls, "call"));
  // A rank not read may be the one the others waited for.
  if (summary.ranks.size() < static_cast<std::size_t>(summary.world_size)) {
    summary.verdict = fmt::format(
        "no straggler can be named: {} of the job's {} ranks {} read, and the rank the others waited for may be "
        "among those not read (give every rank's trace)",
        summary.ranks.size(), summary.world_size, summary.ranks.size() == 1 ? "was" : "were");
    return;
  }
  if (summary.ranks.size() == 1) {
    summary.verdict = "no straggler: one rank, with no other to wait for";
    return;
  }
  const std::optional<Candidate> candidate = most_waiting_caused(summary, spread_seconds);
  if (!candidate) {
    summary.verdict = fmt::format("no straggler: the ranks arrived together ({})", matched);
    return;
  }
  const RankTraceSummary& rank = *candidate->rank;
  const std::string caused = fmt::format("{} caused the most waiting, {} ({} of it)", rank_name(rank),
                                         ms(rank.caused_wait_seconds), percent(candidate->share));
  if (const std::string reason = reason_not_named(summary, *candidate); !reason.empty()) {
    summary.verdict = fmt::format("no straggler named: {}, {} ({})", caused, reason, matched);
    return;
  }
  summary.straggler = rank.rank;
  summary.verdict = fmt::format(
      "straggler: {} cost the others {} of waiting, {} of all the waiting; it arrives last at {} of {} calls, {} "
      "after the others' median ({})",
      rank_name(rank), ms(rank.caused_wait_seconds), percent(candidate->share), rank.last_arrivals, summary.calls,
      ms(candidate->lateness), sureness(summary, *candidate));
}

}  // namespace commbench
