// alltoallv's per-peer counts: parsing the flag, exact sums, the transpose property,
// determinism, and the busbw accounting the docs promise.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "commbench/core/error.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/peer_distribution.hpp"

namespace commbench {
namespace {

constexpr const char* kFlag = "--alltoallv-distribution";

const PeerDistribution kUniform{};
const PeerDistribution kZipf{PeerDistribution::Kind::zipf, 1.2};
const PeerDistribution kHot{PeerDistribution::Kind::hot, 0.6};

std::uint64_t sum(const std::vector<std::uint64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::uint64_t{0});
}

TEST(PeerDistribution, ParsesAndPrintsTheFlagValues) {
  EXPECT_EQ(parse_peer_distribution("uniform", kFlag), kUniform);
  EXPECT_EQ(parse_peer_distribution("Zipf:1.2", kFlag), kZipf);
  EXPECT_EQ(parse_peer_distribution("hot:0.6", kFlag), kHot);
  EXPECT_EQ(parse_peer_distribution("zipf:0", kFlag).parameter, 0.0);
  EXPECT_EQ(parse_peer_distribution("hot:1", kFlag).parameter, 1.0);
  EXPECT_EQ(to_string(kUniform), "uniform");
  EXPECT_EQ(to_string(kZipf), "zipf:1.2");
  EXPECT_EQ(to_string(kHot), "hot:0.6");
  for (const char* text : {"uniform", "zipf:1.2", "hot:0.6", "zipf:2", "hot:0.05"})
    EXPECT_EQ(to_string(parse_peer_distribution(text, kFlag)), text);
}

TEST(PeerDistribution, BadValuesAreUsageErrorsNamingTheFlag) {
  for (const char* text : {"", "zipf", "zipf:", "zipf:x", "zipf:-1", "zipf:1.2x", "zipf:inf", "zipf:nan", "hot",
                           "hot:1.5", "hot:-0.1", "uniform:2", "normal", "hot:0.5:1", ":1"}) {
    try {
      parse_peer_distribution(text, kFlag);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(std::string(kFlag) + ": '", 0), 0u) << message;
      EXPECT_NE(message.find("expected uniform, zipf:S"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(PeerDistribution, UniformSplitsLikeAlltoall) {
  EXPECT_EQ(destination_counts(kUniform, 12, 4), (std::vector<std::uint64_t>{3, 3, 3, 3}));
  EXPECT_EQ(destination_counts(kZipf, 7, 1), (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(destination_counts(kHot, 7, 1), (std::vector<std::uint64_t>{7}));
  // A uniform alltoallv has alltoall's shape exactly.
  const BufferShape v = shape_for(Collective::alltoallv, 1 << 20, 4, 8, kUniform);
  const BufferShape a = shape_for(Collective::alltoall, 1 << 20, 4, 8);
  EXPECT_EQ(v.bytes, a.bytes);
  EXPECT_EQ(v.count, a.count);
  EXPECT_EQ(v.send_elements, a.send_elements);
  EXPECT_EQ(v.recv_elements, a.recv_elements);
}

TEST(PeerDistribution, SkewedCountsByHand) {
  // zipf:1 over 4 ranks, 25 elements: weights 1, 1/2, 1/3, 1/4 (sum 25/12), cumulative
  // boundaries 12, 18, 22, 25.
  EXPECT_EQ(destination_counts({PeerDistribution::Kind::zipf, 1.0}, 25, 4), (std::vector<std::uint64_t>{12, 6, 4, 3}));
  // hot:0.6 over 5 ranks, 100 elements: 60 to rank 0, 10 to each other.
  EXPECT_EQ(destination_counts(kHot, 100, 5), (std::vector<std::uint64_t>{60, 10, 10, 10, 10}));
  // zipf:0 is uniform; hot:1 sends everything to rank 0.
  EXPECT_EQ(destination_counts({PeerDistribution::Kind::zipf, 0.0}, 8, 4), destination_counts(kUniform, 8, 4));
  EXPECT_EQ(destination_counts({PeerDistribution::Kind::hot, 1.0}, 8, 4), (std::vector<std::uint64_t>{8, 0, 0, 0}));
}

TEST(PeerDistribution, SumsTransposeAndDeterminism) {
  for (const PeerDistribution& distribution :
       {kUniform, kZipf, kHot, PeerDistribution{PeerDistribution::Kind::zipf, 3}}) {
    for (const int ranks : {1, 2, 3, 7, 16}) {
      for (const std::uint64_t per_rank : {std::uint64_t{1}, std::uint64_t{97}, std::uint64_t{1} << 20}) {
        const std::string what =
            to_string(distribution) + " ranks " + std::to_string(ranks) + " elements " + std::to_string(per_rank);
        std::vector<PeerCounts> all;
        for (int rank = 0; rank < ranks; ++rank) all.push_back(peer_counts(distribution, per_rank, ranks, rank));
        std::uint64_t received = 0, off_diagonal = 0;
        for (int rank = 0; rank < ranks; ++rank) {
          const PeerCounts& mine = all[static_cast<std::size_t>(rank)];
          ASSERT_EQ(mine.send_counts.size(), static_cast<std::size_t>(ranks)) << what;
          EXPECT_EQ(sum(mine.send_counts), per_rank) << what;  // every rank sends the size
          EXPECT_EQ(mine.received(), sum(mine.recv_counts)) << what;
          received += mine.received();
          for (int peer = 0; peer < ranks; ++peer) {
            const auto p = static_cast<std::size_t>(peer);
            // What I receive from a peer is what that peer sends me.
            EXPECT_EQ(mine.recv_counts[p], all[p].send_counts[static_cast<std::size_t>(rank)]) << what;
            if (peer != rank) off_diagonal += mine.send_counts[p];
            // Pieces are packed in rank order.
            if (peer > 0) {
              EXPECT_EQ(mine.send_offsets[p], mine.send_offsets[p - 1] + mine.send_counts[p - 1]) << what;
              EXPECT_EQ(mine.recv_offsets[p], mine.recv_offsets[p - 1] + mine.recv_counts[p - 1]) << what;
            }
          }
          EXPECT_EQ(mine.send_offsets[0], 0u);
          EXPECT_EQ(mine.recv_offsets[0], 0u);
          // Determinism: the same inputs give the same counts.
          const PeerCounts again = peer_counts(distribution, per_rank, ranks, rank);
          EXPECT_EQ(again.send_counts, mine.send_counts) << what;
          EXPECT_EQ(again.recv_counts, mine.recv_counts) << what;
        }
        const std::uint64_t total = per_rank * static_cast<std::uint64_t>(ranks);
        EXPECT_EQ(received, total) << what;  // nothing lost or invented
        // busbw's (n-1)/n is exactly the share that leaves its rank (docs/methodology.md):
        // the self-sends sum to one rank's send size whatever the distribution.
        EXPECT_EQ(total - off_diagonal, per_rank) << what;
        std::uint64_t most = 0;
        for (const PeerCounts& counts : all) most = std::max(most, counts.received());
        // The buffer shape holds the largest receive (when the size splits into whole chunks).
        const BufferShape shape = shape_for(Collective::alltoallv, per_rank * 8, 8, ranks, distribution);
        if (per_rank % static_cast<std::uint64_t>(ranks) == 0) EXPECT_EQ(shape.recv_elements, most) << what;
      }
    }
  }
}

TEST(PeerDistribution, OpLabelRoundTripsThroughTheOpColumn) {
  OpCase c;
  c.op = Collective::alltoallv;
  c.distribution = kZipf;
  EXPECT_EQ(op_label(c), "alltoallv(zipf:1.2)");
  const OpLabel label = parse_op_label("alltoallv(zipf:1.2)", "--baseline x line 2, column op");
  EXPECT_EQ(label.op, Collective::alltoallv);
  EXPECT_EQ(label.distribution, kZipf);
  c.op = Collective::alltoall;
  EXPECT_EQ(op_label(c), "alltoall");  // other collectives keep their plain name
  EXPECT_EQ(parse_op_label("alltoall", "op").op, Collective::alltoall);
  EXPECT_THROW(parse_op_label("alltoallv", "op"), UsageError);           // the distribution is part of it
  EXPECT_THROW(parse_op_label("alltoall(uniform)", "op"), UsageError);   // only alltoallv has one
  EXPECT_THROW(parse_op_label("alltoallv(zipf:1.2", "op"), UsageError);  // unclosed
  EXPECT_THROW(parse_op_label("alltoallv(zipf)", "op"), UsageError);
}

TEST(PeerDistribution, PlanCarriesTheDistributionForAlltoallvOnly) {
  PlanRequest request;
  request.ops = {Collective::alltoall, Collective::alltoallv};
  request.dtypes = {DataType::float32};
  request.redops = {ReduceOp::sum};
  request.placements = {Placement::out_of_place};
  request.sizes = {1024};
  request.ranks = 4;
  request.alltoallv_distribution = kHot;
  const std::vector<OpCase> plan = build_plan(request);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].distribution, kUniform);
  EXPECT_EQ(plan[1].distribution, kHot);
  // 1 KiB of float over 4 ranks: 256 elements per rank, 0.6 of them (154) to rank 0,
  // which so receives 4 x 154.
  EXPECT_EQ(plan[1].shape.send_elements, 256u);
  EXPECT_EQ(plan[1].shape.recv_elements, 4u * 154u);
  EXPECT_EQ(describe(plan[1]), "alltoallv 1KiB float hot:0.6 out-of-place");
}

}  // namespace
}  // namespace commbench
