#include "commbench/analysis/algorithm_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "commbench/core/size.hpp"

namespace commbench {
namespace {

// Upper case with '-' as '_': "NVLS-tree" and "NVLS_TREE" read alike.
std::string normalized(std::string_view name) {
  std::string text(name);
  for (char& c : text) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// Runs of the same NCCL algorithm over consecutive sizes: "TREE from 8B to 64KiB".
std::string size_runs(std::vector<std::pair<std::uint64_t, std::string>> sizes) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::string text;
  for (std::size_t first = 0; first < sizes.size();) {
    std::size_t last = first;
    while (last + 1 < sizes.size() && sizes[last + 1].second == sizes[first].second) ++last;
    const std::string& algo = sizes[first].second;
    text += (text.empty() ? "" : ", ") + (last == first
                                              ? fmt::format("{} at {}", algo, format_size(sizes[first].first))
                                              : fmt::format("{} from {} to {}", algo, format_size(sizes[first].first),
                                                            format_size(sizes[last].first)));
    first = last + 1;
  }
  return text;
}

}  // namespace

bool same_algorithm(std::string_view model_algo, std::string_view nccl_algo) {
  const std::string model = normalized(model_algo), nccl = normalized(nccl_algo);
  if (model == "COLLNET") return nccl.rfind("COLLNET", 0) == 0;
  return model == nccl;
}

void AlgorithmComparison::add(const ResultRow& row) {
  if (row.model_algo.empty() || row.nccl_algo.empty() || same_algorithm(row.model_algo, row.nccl_algo)) return;
  auto& [model, rows] = differing_[row.op_case.op];
  model = row.model_algo;
  rows.push_back({row.op_case.shape.bytes, row.nccl_algo});
}

std::vector<std::string> AlgorithmComparison::notes() const {
  std::vector<std::string> notes;
  for (const auto& [op, entry] : differing_) {
    std::vector<std::pair<std::uint64_t, std::string>> sizes;
    for (const Differing& row : entry.second) sizes.emplace_back(row.bytes, row.nccl_algo);
    notes.push_back(
        fmt::format("{}: NCCL ran {}; the model's bound (theoretical busbw) is for {} (nccl_algo and "
                    "model_algo in each row)",
                    name_of(op), size_runs(std::move(sizes)), entry.first));
  }
  return notes;
}

std::string AlgorithmComparison::console_text() const {
  std::string text;
  for (const std::string& note : notes()) text += fmt::format("# note: {}\n", note);
  return text;
}

}  // namespace commbench
