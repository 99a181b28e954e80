// NCCL's algorithm beside the bandwidth model's: the model's theoretical busbw is the
// bound of one algorithm (model_algo), and a row whose launches NCCL ran with another
// (nccl_algo) is held against a bound it did not aim at. One note per collective names
// the sizes where they differ, so a low efficiency there reads as "NCCL chose otherwise"
// before "the fabric is slow".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/core/result_row.hpp"

namespace commbench {

// Whether NCCL's name (RING, TREE, NVLS, NVLS_TREE, COLLNET_DIRECT, COLLNET_CHAIN, PAT) is
// the model's ("ring", "tree", "NVLS", "NVLS-tree", "CollNet").
bool same_algorithm(std::string_view model_algo, std::string_view nccl_algo);

class AlgorithmComparison {
 public:
  // Rows without both names are passed over (MPI backend, no plugin, no model bound).
  void add(const ResultRow& row);
  // "allreduce: NCCL ran TREE from 8B to 64KiB, RING from 128KiB to 1GiB; the model's
  // bound (theoretical busbw) is for NVLS", one per collective with a difference.
  std::vector<std::string> notes() const;
  // The same as "# note: ..." lines for the console, after the table.
  std::string console_text() const;

 private:
  struct Differing {
    std::uint64_t bytes;
    std::string nccl_algo;
  };
  // Per collective: the model's algorithm and the differing rows in the order they ran.
  std::map<Collective, std::pair<std::string, std::vector<Differing>>> differing_;
};

}  // namespace commbench
