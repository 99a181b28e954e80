#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commbench/core/buffer_region.hpp"
#include "commbench/core/check_pattern.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/host_buffer_check.hpp"
#include "commbench/core/output_check.hpp"

namespace commbench {
namespace {

// The spec a backend builds for a float32 case of `op` (through check_spec_for, as they do).
CheckSpec spec_of(Collective op, ReduceOp redop, int root, int rank, int ranks, std::uint64_t count) {
  OpCase c;
  c.op = op;
  c.redop = redop;
  c.root = root;
  c.shape.count = count;
  return check_spec_for(c, rank, ranks);
}

TEST(CheckPattern, HandComputedValues) {
  CheckSpec s = spec_of(Collective::allreduce, ReduceOp::sum, 0, 0, 2, 4);
  // rank r, index i -> (3r + i) % 7: rank 0 gives 0,1,2,3; rank 1 gives 3,4,5,6.
  EXPECT_EQ(input_value(s, 0, 2), 2);
  EXPECT_EQ(input_value(s, 1, 2), 5);
  EXPECT_EQ(reduced_value<int>(s, 2), 7);
  s.redop = ReduceOp::max;
  EXPECT_EQ(reduced_value<int>(s, 0), 3);
  s.redop = ReduceOp::min;
  EXPECT_EQ(reduced_value<int>(s, 0), 0);
  s.redop = ReduceOp::prod;  // exactly one rank contributes 2
  EXPECT_EQ(reduced_value<int>(s, 0), 2);
  EXPECT_EQ(reduced_value<int>(s, 1), 2);
  s.redop = ReduceOp::avg;
  EXPECT_DOUBLE_EQ(reduced_value<double>(s, 2), 3.5);
  // Data movement: (131 r + 7 i) % 127.
  const CheckSpec gather = spec_of(Collective::allgather, ReduceOp::none, 0, 1, 2, 3);
  EXPECT_EQ(input_value(gather, 1, 1), (131 + 7) % 127);
  EXPECT_EQ(expected_output<int>(gather, 4), input_value(gather, 1, 1));  // chunk 1, element 1
}

TEST(CheckPattern, Int8SumsWrapLikeTheHardware) {
  // 64 ranks of values up to 6 overflow int8; the expectation wraps modulo 256 too.
  const CheckSpec s = spec_of(Collective::allreduce, ReduceOp::sum, 0, 0, 64, 1);
  int exact = 0;
  for (int r = 0; r < 64; ++r) exact += static_cast<int>(input_value(s, r, 0));
  EXPECT_EQ(reduced_value<std::int8_t>(s, 0), static_cast<std::int8_t>(exact));
}

TEST(CheckPattern, IntegerAverageDividesIn64BitsLikeNccl) {
  // T(256) is 0 for uint8 and T(128) is -128 for int8: the division must not use T.
  CheckSpec s = spec_of(Collective::allreduce, ReduceOp::avg, 0, 0, 256, 1);
  std::uint64_t sum = 0;
  for (int r = 0; r < 256; ++r) sum += static_cast<std::uint64_t>(input_value(s, r, 0));
  EXPECT_EQ(reduced_value<std::uint8_t>(s, 0), static_cast<std::uint8_t>(static_cast<std::uint8_t>(sum) / 256u));
  s.ranks = 128;
  std::int64_t wrapped = 0;
  for (int r = 0; r < 128; ++r) wrapped = static_cast<std::int8_t>(wrapped + input_value(s, r, 0));
  EXPECT_EQ(reduced_value<std::int8_t>(s, 0), static_cast<std::int8_t>(wrapped / 128));
  s.ranks = 3;
  EXPECT_EQ(reduced_value<std::int32_t>(s, 1), (1 + 4 + 0) / 3);  // (3r+1)%7 for r=0,1,2: 1,4,0
}

TEST(CheckPattern, NarrowPatternStaysExactInEightBitFloats) {
  CheckSpec reduce = spec_of(Collective::allreduce, ReduceOp::sum, 0, 0, 8, 16);
  reduce.narrow = true;
  CheckSpec move = spec_of(Collective::allgather, ReduceOp::none, 0, 0, 8, 16);
  move.narrow = true;
  for (int r = 0; r < 8; ++r)
    for (std::uint64_t i = 0; i < 64; ++i) {
      EXPECT_LE(input_value(reduce, r, i), 1);  // sums of 8 ranks stay <= 8: exact in e5m2
      EXPECT_LT(input_value(move, r, i), 8);    // 0..7: exact in e4m3 and e5m2
    }
  // Neighbouring elements and ranks still differ, so misplaced data is caught.
  EXPECT_NE(input_value(move, 0, 0), input_value(move, 0, 1));
  EXPECT_NE(input_value(move, 0, 0), input_value(move, 1, 0));
}

// Simulates each collective on host vectors the way MPI defines it, from the inputs the
// pattern produces, and checks that the expectation agrees for every rank and element.
template <typename T>
std::vector<std::vector<T>> simulate(Collective op, ReduceOp redop, int ranks, std::uint64_t count, int root) {
  std::vector<std::vector<T>> inputs(static_cast<std::size_t>(ranks));
  const std::uint64_t chunks = descriptor_of(op).send_chunks == Chunks::per_rank ? ranks : 1;
  for (int r = 0; r < ranks; ++r) {
    inputs[r].resize(count * chunks);
    CheckSpec s = spec_of(op, redop, root, r, ranks, count);
    for (std::uint64_t i = 0; i < inputs[r].size(); ++i) inputs[r][i] = static_cast<T>(input_value(s, r, i));
  }
  auto fold = [&](std::uint64_t i) {
    T acc = inputs[0][i];
    for (int r = 1; r < ranks; ++r) {
      const T v = inputs[r][i];
      if (redop == ReduceOp::sum) acc = static_cast<T>(acc + v);
      if (redop == ReduceOp::prod) acc = static_cast<T>(acc * v);
      if (redop == ReduceOp::min) acc = std::min(acc, v);
      if (redop == ReduceOp::max) acc = std::max(acc, v);
    }
    return acc;
  };
  std::vector<std::vector<T>> outputs(static_cast<std::size_t>(ranks));
  for (int me = 0; me < ranks; ++me) {
    auto& out = outputs[me];
    switch (op) {
      case Collective::allreduce:
      case Collective::reduce:
        for (std::uint64_t i = 0; i < count; ++i) out.push_back(fold(i));
        break;
      case Collective::reducescatter:
        for (std::uint64_t i = 0; i < count; ++i) out.push_back(fold(me * count + i));
        break;
      case Collective::allgather:
        for (int r = 0; r < ranks; ++r) out.insert(out.end(), inputs[r].begin(), inputs[r].end());
        break;
      case Collective::broadcast: out = inputs[root]; break;
      case Collective::alltoall:
        for (int r = 0; r < ranks; ++r)
          out.insert(out.end(), inputs[r].begin() + me * count, inputs[r].begin() + (me + 1) * count);
        break;
      case Collective::sendrecv: out = inputs[(me + ranks - 1) % ranks]; break;
    }
  }
  return outputs;
}

template <typename T>
void expect_checker_agrees(DataType type) {
  for (Collective op : all_collectives()) {
    std::vector<ReduceOp> redops{ReduceOp::none};
    if (reduces(op)) redops = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max};
    for (ReduceOp redop : redops) {
      for (int ranks : {1, 2, 3, 5}) {
        const std::uint64_t count = 37;
        const int root = ranks - 1;
        const auto outputs = simulate<T>(op, redop, ranks, count, root);
        for (int me = 0; me < ranks; ++me) {
          const CheckSpec spec = spec_of(op, redop, root, me, ranks, count);
          std::vector<T> out = outputs[me];
          EXPECT_EQ(count_host_mismatches(type, out.data(), out.size(), spec), 0u)
              << name_of(op) << " " << name_of(redop) << " " << name_of(type) << " ranks " << ranks << " rank " << me;
          if (!output_is_defined(spec) || out.empty()) continue;
          corrupt_host_element(type, out.data(), out.size() / 2);
          EXPECT_EQ(count_host_mismatches(type, out.data(), out.size(), spec), 1u) << name_of(op);
        }
      }
    }
  }
}

TEST(HostBufferCheck, AgreesWithSimulatedCollectivesForEveryHostType) {
  expect_checker_agrees<std::int8_t>(DataType::int8);
  expect_checker_agrees<std::uint8_t>(DataType::uint8);
  expect_checker_agrees<std::int32_t>(DataType::int32);
  expect_checker_agrees<std::uint32_t>(DataType::uint32);
  expect_checker_agrees<std::int64_t>(DataType::int64);
  expect_checker_agrees<std::uint64_t>(DataType::uint64);
  expect_checker_agrees<float>(DataType::float32);
  expect_checker_agrees<double>(DataType::float64);
}

// alltoallv exchanged by hand on host vectors with the counts every rank derives, then
// checked piece by piece as the backends do: no mismatch, and one corrupted element found.
TEST(HostBufferCheck, AlltoallvAgreesWithASimulatedExchange) {
  for (const PeerDistribution distribution : {PeerDistribution{}, PeerDistribution{PeerDistribution::Kind::zipf, 1.5},
                                              PeerDistribution{PeerDistribution::Kind::hot, 0.7}}) {
    for (const int ranks : {1, 2, 3, 5}) {
      OpCase c;
      c.op = Collective::alltoallv;
      c.dtype = DataType::int32;
      c.distribution = distribution;
      c.shape = shape_for(Collective::alltoallv, 4 * 29 * static_cast<std::uint64_t>(ranks), 4, ranks, distribution);
      std::vector<std::vector<std::int32_t>> inputs;
      for (int r = 0; r < ranks; ++r) {
        inputs.emplace_back(c.shape.send_elements);
        fill_host_input(c.dtype, inputs.back().data(), inputs.back().size(), check_spec_for(c, r, ranks));
      }
      for (int me = 0; me < ranks; ++me) {
        std::vector<std::int32_t> out;
        for (int source = 0; source < ranks; ++source) {
          const PeerCounts sender = peer_counts(distribution, c.shape.send_elements, ranks, source);
          const auto from = inputs[static_cast<std::size_t>(source)].begin() +
                            static_cast<std::ptrdiff_t>(sender.send_offsets[static_cast<std::size_t>(me)]);
          out.insert(out.end(), from,
                     from + static_cast<std::ptrdiff_t>(sender.send_counts[static_cast<std::size_t>(me)]));
        }
        auto wrong = [&] {
          std::uint64_t total = 0;
          for (const CheckedPiece& piece : checked_pieces(c, me, ranks, out.size()))
            total += count_host_mismatches(c.dtype, out.data() + piece.first_element, piece.elements, piece.spec,
                                           piece.first_index);
          return total;
        };
        const std::string what =
            to_string(distribution) + " ranks " + std::to_string(ranks) + " rank " + std::to_string(me);
        EXPECT_EQ(out.size(), output_region(c, me, ranks).elements) << what;
        EXPECT_EQ(wrong(), 0u) << what;
        if (out.empty()) continue;
        corrupt_host_element(c.dtype, out.data(), out.size() - 1);
        EXPECT_EQ(wrong(), 1u) << what;
      }
    }
  }
}

TEST(HostBufferCheck, FillWritesThePattern) {
  std::vector<float> buffer(8, -1.0f);
  const CheckSpec spec = spec_of(Collective::allreduce, ReduceOp::sum, 0, 1, 2, 8);
  fill_host_input(DataType::float32, buffer.data(), buffer.size(), spec);
  for (std::uint64_t i = 0; i < 8; ++i) EXPECT_EQ(buffer[i], static_cast<float>((3 + i) % 7));
  std::vector<std::uint16_t> half(4);
  EXPECT_ANY_THROW(fill_host_input(DataType::float16, half.data(), 4, spec));
}

}  // namespace
}  // namespace commbench
