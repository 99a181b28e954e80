#include "commbench/core/peer_distribution.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

[[noreturn]] void refuse(std::string_view text, std::string_view flag, std::string_view why) {
  throw UsageError(std::string(flag) + ": '" + one_line(excerpt(text)) + "' " + std::string(why) +
                   "; expected uniform, zipf:S (skew S >= 0) or hot:F (fraction 0 <= F <= 1)");
}

double parse_parameter(std::string_view parameter, std::string_view text, std::string_view flag) {
  double value = 0;
  const auto [end, error] = std::from_chars(parameter.data(), parameter.data() + parameter.size(), value);
  if (parameter.empty() || error != std::errc{} || end != parameter.data() + parameter.size() || !std::isfinite(value))
    refuse(text, flag, "has no number after the ':'");
  return value;
}

// Relative weight of destination `d`; only ratios matter.
double weight(const PeerDistribution& distribution, int d, int ranks) {
  switch (distribution.kind) {
    case PeerDistribution::Kind::uniform: return 1.0;
    case PeerDistribution::Kind::zipf: return 1.0 / std::pow(static_cast<double>(d) + 1.0, distribution.parameter);
    case PeerDistribution::Kind::hot:
      if (ranks == 1) return 1.0;
      return d == 0 ? distribution.parameter : (1.0 - distribution.parameter) / static_cast<double>(ranks - 1);
  }
  return 1.0;
}

std::vector<std::uint64_t> packed_offsets(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> offsets(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), std::uint64_t{0});
  return offsets;
}

}  // namespace

PeerDistribution parse_peer_distribution(std::string_view text, std::string_view flag) {
  const std::string lowered = detail::lower_case(text);
  const std::string_view value = lowered;
  const std::size_t colon = value.find(':');
  const std::string_view name = value.substr(0, colon);
  const bool has_parameter = colon != std::string_view::npos;
  if (name == "uniform") {
    if (has_parameter) refuse(text, flag, "takes no parameter after uniform");
    return {};
  }
  if (name != "zipf" && name != "hot") refuse(text, flag, "is not a distribution");
  if (!has_parameter) refuse(text, flag, "needs a parameter");
  const double parameter = parse_parameter(value.substr(colon + 1), text, flag);
  if (name == "zipf") {
    if (parameter < 0) refuse(text, flag, "has a negative skew");
    return {PeerDistribution::Kind::zipf, parameter};
  }
  if (parameter < 0 || parameter > 1) refuse(text, flag, "has a fraction outside 0..1");
  return {PeerDistribution::Kind::hot, parameter};
}

std::string to_string(const PeerDistribution& distribution) {
  if (distribution.kind == PeerDistribution::Kind::uniform) return "uniform";
  char number[32];
  const auto [end, error] = std::to_chars(number, number + sizeof number, distribution.parameter);
  const std::string parameter = error == std::errc{} ? std::string(number, end) : "?";
  return (distribution.kind == PeerDistribution::Kind::zipf ? "zipf:" : "hot:") + parameter;
}

std::vector<std::uint64_t> destination_counts(const PeerDistribution& distribution, std::uint64_t elements_per_rank,
                                              int ranks) {
  std::vector<double> cumulative(static_cast<std::size_t>(ranks) + 1, 0.0);
  for (int d = 0; d < ranks; ++d)
    cumulative[static_cast<std::size_t>(d) + 1] =
        cumulative[static_cast<std::size_t>(d)] + weight(distribution, d, ranks);
  // Rounding the cumulative boundaries (not each share) makes the counts sum exactly to
  // elements_per_rank and gives uniform splits of a multiple of `ranks` exactly equal shares.
  const double total = cumulative.back();
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(ranks), 0);
  std::uint64_t previous = 0;
  for (int d = 0; d < ranks; ++d) {
    const double fraction = cumulative[static_cast<std::size_t>(d) + 1] / total;
    const std::uint64_t boundary =
        d + 1 == ranks ? elements_per_rank
                       : static_cast<std::uint64_t>(std::llround(static_cast<double>(elements_per_rank) * fraction));
    counts[static_cast<std::size_t>(d)] = boundary - previous;
    previous = boundary;
  }
  return counts;
}

std::uint64_t PeerCounts::received() const {
  return std::accumulate(recv_counts.begin(), recv_counts.end(), std::uint64_t{0});
}

std::uint64_t most_received(const PeerDistribution& distribution, std::uint64_t elements_per_rank, int ranks) {
  // Every source sends destination d the same share, so d receives ranks x that share.
  const std::vector<std::uint64_t> shares = destination_counts(distribution, elements_per_rank, ranks);
  return static_cast<std::uint64_t>(ranks) * *std::max_element(shares.begin(), shares.end());
}

PeerCounts peer_counts(const PeerDistribution& distribution, std::uint64_t elements_per_rank, int ranks, int rank) {
  PeerCounts counts;
  counts.send_counts = destination_counts(distribution, elements_per_rank, ranks);
  // Every source splits the same way, so what `rank` receives from each is its own share.
  counts.recv_counts.assign(static_cast<std::size_t>(ranks), counts.send_counts[static_cast<std::size_t>(rank)]);
  counts.send_offsets = packed_offsets(counts.send_counts);
  counts.recv_offsets = packed_offsets(counts.recv_counts);
  return counts;
}

}  // namespace commbench
