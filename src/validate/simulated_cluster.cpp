#include "commbench/validate/simulated_cluster.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/reading_budget.hpp"

namespace commbench {
namespace {

int node_number(std::string_view text, int nodes, std::string_view flag, std::string_view item) {
  int number = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty() || number < 0 || number >= nodes)
    throw UsageError(fmt::format("{}: '{}': node numbers run from 0 to {}", flag, item, nodes - 1));
  return number;
}

// "FROM-UNTIL" in modelled seconds, FROM < UNTIL.
void parse_window(std::string_view text, Degradation& degradation, std::string_view flag, std::string_view item) {
  const std::size_t dash = text.find('-');
  const auto seconds = [&](std::string_view part, double& value) {
    const std::string owned(part);
    char* end = nullptr;
    value = std::strtod(owned.c_str(), &end);
    return !owned.empty() && *end == '\0' && std::isfinite(value) && value >= 0;
  };
  if (dash == std::string_view::npos || !seconds(text.substr(0, dash), degradation.from_s) ||
      !seconds(text.substr(dash + 1), degradation.until_s) || degradation.from_s >= degradation.until_s)
    throw UsageError(fmt::format("{}: '{}': the window after / is FROM-UNTIL in seconds, FROM < UNTIL", flag, item));
}

bool holds_at(const Degradation& degradation, double seconds) {
  return seconds >= degradation.from_s && seconds < degradation.until_s;
}

}  // namespace

std::vector<Degradation> parse_degradations(std::string_view text, int nodes, double default_factor,
                                            std::string_view flag) {
  std::vector<Degradation> result;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    Degradation degradation;
    degradation.factor = default_factor;
    std::string_view target = item;
    if (const std::size_t slash = item.find('/'); slash != std::string_view::npos) {
      target = item.substr(0, slash);
      parse_window(item.substr(slash + 1), degradation, flag, item);
    }
    const std::string_view head = target;
    if (const std::size_t at = head.find('@'); at != std::string_view::npos) {
      target = head.substr(0, at);
      const std::string factor_text(head.substr(at + 1));
      char* end = nullptr;
      degradation.factor = std::strtod(factor_text.c_str(), &end);
      if (factor_text.empty() || *end != '\0' || !(degradation.factor > 0 && degradation.factor < 1))
        throw UsageError(fmt::format("{}: '{}': the factor after @ must lie between 0 and 1", flag, item));
    }
    if (target.starts_with("node:")) {
      degradation.node = node_number(target.substr(5), nodes, flag, item);
    } else if (target.starts_with("link:")) {
      const std::string_view ends = target.substr(5);
      const std::size_t dash = ends.find('-');
      if (dash == std::string_view::npos) throw UsageError(fmt::format("{}: '{}': a link is link:A-B", flag, item));
      const int a = node_number(ends.substr(0, dash), nodes, flag, item);
      const int b = node_number(ends.substr(dash + 1), nodes, flag, item);
      if (a == b) throw UsageError(fmt::format("{}: '{}': a link joins two different nodes", flag, item));
      degradation.link = {std::min(a, b), std::max(a, b)};
    } else {
      throw UsageError(fmt::format("{}: '{}' is neither node:K nor link:A-B", flag, item));
    }
    result.push_back(degradation);
    if (comma == text.size()) break;
  }
  return result;
}

std::string simulated_node_name(int node, int nodes) {
  const int width = std::max(2, static_cast<int>(std::to_string(std::max(nodes - 1, 0)).size()));
  return fmt::format("node{:0{}}", node, width);
}

SimulatedCluster::SimulatedCluster(SimulationModel model, std::vector<Degradation> degradations)
    : model_(model), generator_(model.seed) {
  for (const Degradation& degradation : degradations) (degradation.node >= 0 ? nodes_ : links_).push_back(degradation);
}

double SimulatedCluster::node_factor(int node, double at) const {
  double factor = 1;
  for (const Degradation& degradation : nodes_)
    if (degradation.node == node && holds_at(degradation, at)) factor = std::min(factor, degradation.factor);
  return factor;
}

double SimulatedCluster::noisy(double figure) { return figure * std::exp(model_.noise * normal_(generator_)); }

double SimulatedCluster::link_factor(int a, int b, double at) const {
  const RankPair pair{std::min(a, b), std::max(a, b)};
  double factor = 1;
  for (const Degradation& link : links_)
    if (link.link == pair && holds_at(link, at)) factor = std::min(factor, link.factor);
  return factor;
}

std::vector<std::vector<std::string>> SimulatedCluster::local_findings() {
  elapsed_ += model_.local_check_seconds;
  return std::vector<std::vector<std::string>>(static_cast<std::size_t>(model_.nodes));
}

std::vector<std::optional<double>> SimulatedCluster::intra_node_busbw() {
  std::vector<std::optional<double>> busbw;
  for (int node = 0; node < model_.nodes; ++node) busbw.emplace_back(noisy(model_.intra_busbw_gbps));
  elapsed_ += model_.round_seconds +
              static_cast<double>(model_.iterations * model_.message_bytes) * 2 / (model_.intra_busbw_gbps * 1e9);
  return busbw;
}

// The moment after `from` at which a window of a degradation on a pair begins or ends;
// infinity when none does.
double next_change(const std::vector<Degradation>& degradations, double from) {
  double next = std::numeric_limits<double>::infinity();
  for (const Degradation& degradation : degradations)
    for (const double edge : {degradation.from_s, degradation.until_s})
      if (edge > from) next = std::min(next, edge);
  return next;
}

double SimulatedCluster::pair_factor(int a, int b, double at) const {
  return std::min({node_factor(a, at), node_factor(b, at), link_factor(a, b, at)});
}

// What a pair reads when its transfer outlasts a change of its degradation: the bytes
// move at each stretch's rate, so a reading that a window opens on is slow and long, and
// one that a window closes on ends soon after. Nullopt when the rate holds throughout.
std::optional<double> SimulatedCluster::stretched_gbps(int a, int b) const {
  const double bytes = static_cast<double>(model_.iterations * model_.message_bytes);
  const double first_rate = model_.nic_gbps * 1e9 * pair_factor(a, b, elapsed_);
  double now = elapsed_, left = bytes, rate = first_rate;
  bool rate_changed = false;
  // Each step passes a window's edge, and there are two per degradation.
  for (std::size_t stretch = 0; stretch <= 2 * (nodes_.size() + links_.size()); ++stretch) {
    const double change = std::min(next_change(nodes_, now), next_change(links_, now));
    if (left / rate <= change - now)
      return rate_changed ? std::optional<double>(bytes / (now + left / rate - elapsed_) / 1e9) : std::nullopt;
    left -= rate * (change - now);
    now = change;
    const double next_rate = model_.nic_gbps * 1e9 * pair_factor(a, b, now);
    rate_changed = rate_changed || next_rate != rate;
    rate = next_rate;
  }
  return std::nullopt;
}

std::vector<double> SimulatedCluster::bounded_seconds(const std::vector<double>& gbps, double bytes_per_iteration,
                                                      double expected_gbps) {
  last_cuts_ = {};
  std::vector<double> seconds;
  const double iterations = static_cast<double>(model_.iterations);
  // No faster than the NIC, however the noise reads it.
  for (const double rate : gbps)
    seconds.push_back(iterations * bytes_per_iteration / (std::min(rate, model_.nic_gbps) * 1e9));
  if (!expectation_ || seconds.empty()) return seconds;
  ReadingBudget budget;
  budget.planned_iterations = model_.iterations;
  if (expected_gbps > 0) budget.expected_iteration_seconds = bytes_per_iteration / (expected_gbps * 1e9);
  const double fastest = *std::min_element(seconds.begin(), seconds.end()) / iterations;
  const double limit = reading_budget_seconds(budget, fastest);
  for (double& reading : seconds) {
    const bool cut = reading > limit;
    // Checked between iterations: the iteration that spends the budget ends first.
    const double iteration = reading / iterations;
    if (cut) reading = std::max(iteration, std::ceil(limit / iteration) * iteration);
    last_cuts_.cut_short.push_back(cut);
  }
  last_cuts_.seconds = *std::max_element(seconds.begin(), seconds.end());
  last_cuts_.budget_seconds = limit;
  return seconds;
}

std::vector<double> SimulatedCluster::measure_pairs(const PairRound& round) {
  std::vector<double> gbps;
  for (const auto& [a, b] : round) {
    const std::optional<double> stretched = stretched_gbps(a, b);
    gbps.push_back(noisy(stretched.value_or(model_.nic_gbps * pair_factor(a, b, elapsed_))));
  }
  const std::vector<double> seconds = bounded_seconds(gbps, static_cast<double>(model_.message_bytes),
                                                      expectation_ ? expectation_->pair_gbps : 0);
  const double longest = seconds.empty() ? static_cast<double>(model_.iterations * model_.message_bytes) /
                                              (model_.nic_gbps * 1e9)
                                        : *std::max_element(seconds.begin(), seconds.end());
  elapsed_ += model_.round_seconds + longest;
  return gbps;
}

std::vector<double> SimulatedCluster::measure_groups(const std::vector<std::vector<int>>& groups) {
  last_cuts_ = {};  // a modelled collective is not cut short
  std::vector<double> busbw;
  double longest = 0;
  std::size_t largest = 0;
  for (const std::vector<int>& group : groups) {
    double factor = 1;
    for (const int node : group) factor = std::min(factor, node_factor(node, elapsed_));
    for (const Degradation& link : links_)
      if (holds_at(link, elapsed_) && std::binary_search(group.begin(), group.end(), link.link.first) &&
          std::binary_search(group.begin(), group.end(), link.link.second))
        factor = std::min(factor, link.factor);
    busbw.push_back(noisy(model_.nic_gbps * model_.collective_share * factor));
    // A ring allreduce moves 2(n-1)/n of the message per rank at the bus rate.
    const double n = static_cast<double>(group.size());
    longest = std::max(longest, static_cast<double>(model_.iterations * model_.message_bytes) * 2 * (n - 1) / n /
                                    (busbw.back() * 1e9));
    largest = std::max(largest, group.size());
  }
  elapsed_ += model_.group_setup_seconds + model_.group_setup_per_node * static_cast<double>(largest) + longest;
  return busbw;
}

}  // namespace commbench
