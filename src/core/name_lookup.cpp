#include "commbench/core/name_lookup.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace commbench::detail {

std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

// Edit distance with adjacent transpositions (optimal string alignment): "flaot" is one
// step from "float", as a typist would count it.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(std::string_view typed, std::span<const std::string_view> candidates) {
  const std::string wanted = lower_case(typed);
  const std::size_t allowed = std::max<std::size_t>(1, wanted.size() / 3);
  std::string_view best;
  std::size_t best_distance = allowed + 1;
  for (const std::string_view candidate : candidates) {
    const std::size_t distance = edit_distance(wanted, lower_case(candidate));
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return std::string(best);
}

std::string did_you_mean(std::string_view typed, std::span<const std::string_view> candidates) {
  const std::string nearest = nearest_name(typed, candidates);
  return nearest.empty() ? std::string() : fmt::format(" (did you mean {}?)", nearest);
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::string current;
  for (char c : text) {
    if (c == ',') {
      items.push_back(current);
      current.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      current.push_back(c);
    }
  }
  items.push_back(current);
  return items;
}

}  // namespace commbench::detail
