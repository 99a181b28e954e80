// NCCL's algorithm against the model's: which names are the same algorithm, and the note
// that names the sizes where NCCL ran another.
#include "commbench/analysis/algorithm_comparison.hpp"

#include <gtest/gtest.h>

namespace commbench {
namespace {

ResultRow row(Collective op, std::uint64_t bytes, std::string nccl_algo, std::string model_algo) {
  ResultRow r;
  r.op_case.op = op;
  r.op_case.shape.bytes = bytes;
  r.nccl_algo = std::move(nccl_algo);
  r.model_algo = std::move(model_algo);
  return r;
}

TEST(AlgorithmComparison, NcclsNamesMatchTheModelsWhateverTheirSpelling) {
  EXPECT_TRUE(same_algorithm("ring", "RING"));
  EXPECT_TRUE(same_algorithm("NVLS-tree", "NVLS_TREE"));
  EXPECT_TRUE(same_algorithm("CollNet", "COLLNET_DIRECT"));
  EXPECT_TRUE(same_algorithm("CollNet", "COLLNET_CHAIN"));
  EXPECT_FALSE(same_algorithm("NVLS", "NVLS_TREE"));
  EXPECT_FALSE(same_algorithm("ring", "PAT"));
  EXPECT_FALSE(same_algorithm("ring", "mixed"));
}

TEST(AlgorithmComparison, OneNotePerCollectiveWithItsSizesInRuns) {
  AlgorithmComparison comparison;
  for (const std::uint64_t bytes : {8ull, 1024ull, 65536ull})
    comparison.add(row(Collective::allreduce, bytes, "TREE", "NVLS"));
  comparison.add(row(Collective::allreduce, 131072, "RING", "NVLS"));
  comparison.add(row(Collective::allreduce, 1 << 30, "NVLS", "NVLS"));  // the same: no mention
  comparison.add(row(Collective::allgather, 1 << 20, "PAT", "ring"));
  comparison.add(row(Collective::allgather, 1 << 20, "PAT", "ring"));   // a soak's next pass
  comparison.add(row(Collective::broadcast, 1 << 20, "", "ring"));      // nothing reported
  comparison.add(row(Collective::reducescatter, 1 << 20, "RING", ""));  // no model bound
  EXPECT_EQ(comparison.notes(),
            (std::vector<std::string>{
                "allreduce: NCCL ran TREE from 8B to 64KiB, RING at 128KiB; the model's bound (theoretical busbw) "
                "is for NVLS (nccl_algo and model_algo in each row)",
                "allgather: NCCL ran PAT at 1MiB; the model's bound (theoretical busbw) is for ring (nccl_algo and "
                "model_algo in each row)"}));
  // The console prints them after the table, a note line each.
  EXPECT_EQ(comparison.console_text(),
            "# note: " + comparison.notes()[0] + "\n# note: " + comparison.notes()[1] + "\n");
}

TEST(AlgorithmComparison, NothingToSayWithoutNcclsChoices) {
  AlgorithmComparison comparison;
  comparison.add(row(Collective::allreduce, 8, "", "ring"));
  EXPECT_TRUE(comparison.notes().empty());
}

}  // namespace
}  // namespace commbench
