#include "call_matching.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {

namespace {

// What makes two ranks' calls one: the operation and its size, but an all-to-all's size
// is what its own rank sends, which differs from rank to rank.
using CallKey = std::tuple<std::string, std::uint64_t>;

CallKey key_of(const TracedCollective& call) { return {call.op, call.op == "alltoall" ? 0 : call.bytes}; }

bool line_up_one_to_one(const std::vector<RankTrace>& traces) {
  const std::vector<TracedCollective>& first = traces.front().collectives;
  for (const RankTrace& trace : traces) {
    if (trace.collectives.size() != first.size()) return false;
    for (std::size_t i = 0; i < first.size(); ++i)
      if (trace.collectives[i].op != first[i].op) return false;
  }
  return true;
}

// A trace's calls by the thread that called them (one list where the trace does not
// say), the threads in the order of their first call.
std::vector<std::vector<std::size_t>> calls_by_thread(const RankTrace& trace) {
  std::vector<std::vector<std::size_t>> threads;
  std::map<std::optional<std::int64_t>, std::size_t> thread_index;
  for (std::size_t i = 0; i < trace.collectives.size(); ++i) {
    const auto [at, added] = thread_index.emplace(trace.collectives[i].thread, threads.size());
    if (added) threads.emplace_back();
    threads[at->second].push_back(i);
  }
  return threads;
}

struct CommonRun {
  std::size_t a = 0, b = 0;  // where it starts in each list
  std::size_t length = 0;
};

// How far apart in time two lists' calls are, matched along a run: the mean distance of
// their issue times.
double run_distance(const RankTrace& a, const std::vector<std::size_t>& a_calls, const RankTrace& b,
                    const std::vector<std::size_t>& b_calls, const CommonRun& run) {
  double distance = 0;
  for (std::size_t k = 0; k < run.length; ++k)
    distance += std::abs(a.collectives[a_calls[run.a + k]].issued_us - b.collectives[b_calls[run.b + k]].issued_us);
  return distance / static_cast<double>(run.length);
}

// The longest run of calls that two lists hold in the same order, one after the other.
// Steps repeat their calls, so several runs can be as long (a trace one step shorter
// matches the other's first steps as well as its last): of those, the one whose calls lie
// closest in time.
CommonRun longest_common_run(const RankTrace& a, const std::vector<std::size_t>& a_calls, const RankTrace& b,
                             const std::vector<std::size_t>& b_calls) {
  // Each key as a number: the table below compares every call with every other.
  std::map<CallKey, std::size_t> numbers;
  const auto number_of = [&](const TracedCollective& call) {
    return numbers.emplace(key_of(call), numbers.size()).first->second;
  };
  std::vector<std::size_t> b_keys;
  for (const std::size_t j : b_calls) b_keys.push_back(number_of(b.collectives[j]));
  std::vector<CommonRun> longest{CommonRun{}};
  std::vector<std::size_t> previous(b_calls.size() + 1, 0), current(b_calls.size() + 1, 0);
  for (std::size_t i = 0; i < a_calls.size(); ++i) {
    const std::size_t key = number_of(a.collectives[a_calls[i]]);
    for (std::size_t j = 0; j < b_keys.size(); ++j) {
      const std::size_t length = current[j + 1] = key == b_keys[j] ? previous[j] + 1 : 0;
      if (length == 0 || length < longest.front().length) continue;
      if (length > longest.front().length) longest.clear();
      longest.push_back({i + 1 - length, j + 1 - length, length});
    }
    std::swap(previous, current);
  }
  if (longest.front().length == 0) return {};
  return *std::min_element(longest.begin(), longest.end(), [&](const CommonRun& x, const CommonRun& y) {
    return run_distance(a, a_calls, b, b_calls, x) < run_distance(a, a_calls, b, b_calls, y);
  });
}

// For each of `reference`'s calls, the call of `other` that is the same collective, where
// one is: each thread of the reference paired with the other's thread that shares the
// longest run with it, the longest pairs first.
std::vector<std::optional<std::size_t>> match_pair(const RankTrace& reference, const RankTrace& other) {
  const auto a_threads = calls_by_thread(reference);
  const auto b_threads = calls_by_thread(other);
  std::vector<std::tuple<std::size_t, std::size_t, CommonRun>> pairs;
  for (std::size_t ta = 0; ta < a_threads.size(); ++ta)
    for (std::size_t tb = 0; tb < b_threads.size(); ++tb)
      pairs.emplace_back(ta, tb, longest_common_run(reference, a_threads[ta], other, b_threads[tb]));
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& x, const auto& y) { return std::get<2>(x).length > std::get<2>(y).length; });
  std::vector<bool> a_used(a_threads.size(), false), b_used(b_threads.size(), false);
  std::vector<std::optional<std::size_t>> matched(reference.collectives.size());
  for (const auto& [ta, tb, run] : pairs) {
    if (run.length == 0 || a_used[ta] || b_used[tb]) continue;
    a_used[ta] = b_used[tb] = true;
    for (std::size_t k = 0; k < run.length; ++k) matched[a_threads[ta][run.a + k]] = b_threads[tb][run.b + k];
  }
  return matched;
}

std::string matched_note(std::size_t matched, const RankTrace& trace) {
  const std::size_t calls = trace.collectives.size();
  return fmt::format("matched {} of {} of rank {}; {} outside the common window", matched, count_text(calls, "call"),
                     trace.rank, calls - matched);
}

bool every_call_numbered(const std::vector<RankTrace>& traces) {
  return std::all_of(traces.begin(), traces.end(), [](const RankTrace& trace) {
    return std::all_of(trace.collectives.begin(), trace.collectives.end(),
                       [](const TracedCollective& c) { return c.sequence.has_value(); });
  });
}

// Where every call carries PyTorch's sequence number, a call is the one of that number in
// its process group on every rank: the ranks' windows and threads need not line up.
MatchedCalls match_by_sequence(const std::vector<RankTrace>& traces) {
  using Key = std::pair<std::string, std::int64_t>;
  std::vector<std::map<Key, std::size_t>> numbered(traces.size());
  for (std::size_t r = 0; r < traces.size(); ++r)
    for (std::size_t i = 0; i < traces[r].collectives.size(); ++i)
      numbered[r].emplace(Key{traces[r].collectives[i].process_group, *traces[r].collectives[i].sequence}, i);
  MatchedCalls result;
  result.one_to_one = false;
  const RankTrace& reference = traces.front();
  for (std::size_t i = 0; i < reference.collectives.size(); ++i) {
    const Key key{reference.collectives[i].process_group, *reference.collectives[i].sequence};
    std::vector<std::size_t> row;
    for (const auto& calls : numbered)
      if (const auto found = calls.find(key); found != calls.end()) row.push_back(found->second);
    if (row.size() == traces.size()) result.rows.push_back(std::move(row));
  }
  if (result.rows.empty())
    throw UsageError(fmt::format("the {} traces share no call of one sequence number in one process group: the "
                                 "traces do not line up (different runs)",
                                 traces.size()));
  result.notes.push_back(
      "the ranks' calls do not line up one to one: they are matched on PyTorch's sequence numbers of the calls in "
      "their process groups (record_param_comms' Seq)");
  for (const RankTrace& trace : traces)
    if (result.rows.size() < trace.collectives.size()) result.notes.push_back(matched_note(result.rows.size(), trace));
  return result;
}

}  // namespace

MatchedCalls match_calls(const std::vector<RankTrace>& traces) {
  MatchedCalls result;
  const RankTrace& reference = traces.front();
  if (line_up_one_to_one(traces)) {
    for (std::size_t i = 0; i < reference.collectives.size(); ++i) result.rows.emplace_back(traces.size(), i);
    return result;
  }
  if (every_call_numbered(traces)) return match_by_sequence(traces);
  result.one_to_one = false;
  std::vector<std::vector<std::optional<std::size_t>>> by_trace;
  for (const RankTrace& trace : traces) {
    if (&trace == &reference) {
      by_trace.emplace_back();
      for (std::size_t i = 0; i < reference.collectives.size(); ++i) by_trace.back().emplace_back(i);
      continue;
    }
    by_trace.push_back(match_pair(reference, trace));
    if (std::none_of(by_trace.back().begin(), by_trace.back().end(), [](const auto& m) { return m.has_value(); }))
      throw UsageError(fmt::format(
          "{} and {} share no call of one operation and size: the traces do not line up (different runs or steps)",
          trace.path, reference.path));
  }
  for (std::size_t i = 0; i < reference.collectives.size(); ++i) {
    std::vector<std::size_t> row;
    for (const auto& matched : by_trace)
      if (matched[i]) row.push_back(*matched[i]);
    if (row.size() == traces.size()) result.rows.push_back(std::move(row));
  }
  if (result.rows.empty())
    throw UsageError(
        fmt::format("the {} traces share no call that every one holds: the traces do not line up "
                    "(different runs or steps)",
                    traces.size()));
  result.notes.push_back(
      "the ranks' calls do not line up one to one (profilers started at different steps, or calls issued from "
      "several threads): they are matched on the calls they share, each thread's longest common run of calls of "
      "one operation and size");
  for (const RankTrace& trace : traces)
    if (result.rows.size() < trace.collectives.size()) result.notes.push_back(matched_note(result.rows.size(), trace));
  return result;
}

}  // namespace commbench
