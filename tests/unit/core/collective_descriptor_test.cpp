// Every collective's descriptor, asserted entry by entry: what one row of the table
// decides (shape, busbw factor, in-place regions, expected values, traffic pattern).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commbench/core/buffer_region.hpp"
#include "commbench/core/check_pattern.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/output_check.hpp"

namespace commbench {
namespace {

// What the table must say for one collective with 4 ranks, 4-byte elements and 1 MiB.
struct Expected {
  Collective op;
  std::string name;
  std::uint64_t count;  // elements per chunk
  std::uint64_t send_elements;
  std::uint64_t recv_elements;
  double bus_factor_4;  // busbw / algbw with 4 ranks
  bool reduces;
  bool rooted;
  BufferRegion in_place_input;  // of rank 2
  BufferRegion in_place_output;
  BusTraffic traffic;
  bool in_op_all = true;
  bool has_in_place = true;
};

constexpr std::uint64_t kMiB = 1 << 20;
constexpr BufferSide kSend = BufferSide::send;
constexpr BufferSide kRecv = BufferSide::receive;

const Expected kExpected[] = {
    {Collective::allreduce,
     "allreduce",
     262144,
     262144,
     262144,
     1.5,
     true,
     false,
     {kRecv, 0, 262144},
     {kRecv, 0, 262144},
     BusTraffic::ring},
    {Collective::allgather,
     "allgather",
     65536,
     65536,
     262144,
     0.75,
     false,
     false,
     {kRecv, 2 * 65536, 65536},
     {kRecv, 0, 262144},
     BusTraffic::ring},
    {Collective::reducescatter,
     "reducescatter",
     65536,
     262144,
     65536,
     0.75,
     true,
     false,
     {kRecv, 0, 262144},
     {kRecv, 2 * 65536, 65536},
     BusTraffic::ring},
    {Collective::broadcast,
     "broadcast",
     262144,
     262144,
     262144,
     1.0,
     false,
     true,
     {kRecv, 0, 262144},
     {kRecv, 0, 262144},
     BusTraffic::ring},
    {Collective::reduce,
     "reduce",
     262144,
     262144,
     262144,
     1.0,
     true,
     true,
     {kRecv, 0, 262144},
     {kRecv, 0, 262144},
     BusTraffic::ring},
    {Collective::alltoall,
     "alltoall",
     65536,
     262144,
     262144,
     0.75,
     false,
     false,
     {kRecv, 0, 262144},
     {kRecv, 0, 262144},
     BusTraffic::all_pairs},
    {Collective::sendrecv,
     "sendrecv",
     262144,
     262144,
     262144,
     1.0,
     false,
     false,
     {kRecv, 0, 262144},
     {kRecv, 0, 262144},
     BusTraffic::neighbour_pair},
    // Uniform here (the default), so exactly alltoall's shape.
    {Collective::alltoallv,
     "alltoallv",
     65536,
     262144,
     262144,
     0.75,
     false,
     false,
     {},
     {},
     BusTraffic::all_pairs,
     false,
     false},
};

OpCase case_of(Collective op, Placement placement) {
  OpCase c;
  c.op = op;
  c.dtype = DataType::float32;
  c.placement = placement;
  c.root = has_root(op) ? 1 : -1;
  c.shape = shape_for(op, kMiB, 4, 4);
  return c;
}

void expect_region(const BufferRegion& got, const BufferRegion& want, const std::string& what) {
  EXPECT_EQ(got.buffer, want.buffer) << what;
  EXPECT_EQ(got.first_element, want.first_element) << what;
  EXPECT_EQ(got.elements, want.elements) << what;
}

TEST(CollectiveDescriptor, TableIsIndexedByTheEnum) {
  ASSERT_EQ(collective_descriptors().size(), kCollectiveCount);
  for (std::size_t i = 0; i < kCollectiveCount; ++i)
    EXPECT_EQ(static_cast<std::size_t>(collective_descriptors()[i].op), i);
}

TEST(CollectiveDescriptor, EveryEntryAsExpected) {
  ASSERT_EQ(std::size(kExpected), kCollectiveCount);
  for (const Expected& want : kExpected) {
    const CollectiveDescriptor& d = descriptor_of(want.op);
    EXPECT_EQ(std::string(d.name), want.name);
    EXPECT_EQ(parse_collective(want.name, "--op"), want.op);
    if (!d.alias.empty()) EXPECT_EQ(parse_collective(d.alias, "--op"), want.op) << d.alias;
    const BufferShape shape = shape_for(want.op, kMiB, 4, 4);
    EXPECT_EQ(shape.bytes, kMiB) << want.name;
    EXPECT_EQ(shape.count, want.count) << want.name;
    EXPECT_EQ(shape.send_elements, want.send_elements) << want.name;
    EXPECT_EQ(shape.recv_elements, want.recv_elements) << want.name;
    EXPECT_DOUBLE_EQ(d.bus_bandwidth_factor(4), want.bus_factor_4) << want.name;
    EXPECT_EQ(d.reduces, want.reduces) << want.name;
    EXPECT_EQ(d.rooted, want.rooted) << want.name;
    EXPECT_EQ(d.traffic, want.traffic) << want.name;
    EXPECT_EQ(d.in_op_all, want.in_op_all) << want.name;

    const OpCase out = case_of(want.op, Placement::out_of_place);
    expect_region(input_region(out, 2), {kSend, 0, want.send_elements}, want.name + " out-of-place input");
    expect_region(output_region(out, 2, 4), {kRecv, 0, want.recv_elements}, want.name + " out-of-place output");
    EXPECT_EQ(!missing_in_place_form(want.op).has_value(), want.has_in_place) << want.name;
    EXPECT_EQ(d.in_place_input != InPlaceRegion::none, want.has_in_place) << want.name;
    EXPECT_EQ(d.in_place_output != InPlaceRegion::none, want.has_in_place) << want.name;
    if (!want.has_in_place) continue;
    const OpCase in = case_of(want.op, Placement::in_place);
    expect_region(input_region(in, 2), want.in_place_input, want.name + " in-place input");
    expect_region(output_region(in, 2, 4), want.in_place_output, want.name + " in-place output");
  }
}

TEST(CollectiveDescriptor, BusFactorsFollowNcclTests) {
  for (const int n : {1, 2, 8}) {
    const double ring = (n - 1.0) / n;
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::allreduce).bus_bandwidth_factor(n), 2 * ring);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::allgather).bus_bandwidth_factor(n), ring);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::reducescatter).bus_bandwidth_factor(n), ring);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::alltoall).bus_bandwidth_factor(n), ring);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::alltoallv).bus_bandwidth_factor(n), ring);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::broadcast).bus_bandwidth_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::reduce).bus_bandwidth_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(descriptor_of(Collective::sendrecv).bus_bandwidth_factor(n), 1.0);
  }
}

// One hand-computed output element per collective: rank 2 of 4, 3 elements per chunk,
// root 1. Inputs: data movement (131 r + 7 i) % 127, reductions (3 r + i) % 7.
TEST(CollectiveDescriptor, ExpectedValuesByHand) {
  auto expected = [](Collective op, std::uint64_t index) {
    OpCase c;
    c.op = op;
    c.redop = reduces(op) ? ReduceOp::sum : ReduceOp::none;
    c.root = 1;
    c.shape.count = 3;
    return expected_output<std::int64_t>(check_spec_for(c, 2, 4), index);
  };
  // allreduce element 1: (0+1) + (3+1) + (6+1) + (9+1) mod 7 each = 1 + 4 + 0 + 3.
  EXPECT_EQ(expected(Collective::allreduce, 1), 8);
  // reduce's formula is the same sum (only the root's output is compared, see below).
  EXPECT_EQ(expected(Collective::reduce, 1), 8);
  // reducescatter element 1 of rank 2 is element 7 of the sum: 0 + 3 + 6 + 2.
  EXPECT_EQ(expected(Collective::reducescatter, 1), 11);
  // allgather element 4 is element 1 of rank 1's input: 131 + 7.
  EXPECT_EQ(expected(Collective::allgather, 4), 138 % 127);
  // broadcast element 2 is element 2 of the root's (rank 1's) input.
  EXPECT_EQ(expected(Collective::broadcast, 2), (131 + 14) % 127);
  // alltoall element 4 is chunk 2, element 1 of rank 1's input: index 7.
  EXPECT_EQ(expected(Collective::alltoall, 4), (131 + 49) % 127);
  // sendrecv receives rank 1's input.
  EXPECT_EQ(expected(Collective::sendrecv, 0), 131 % 127);
}

// alltoallv, hot:0.5 over 4 ranks, 16 elements per rank: every rank sends 8, 3, 2, 3
// elements to ranks 0..3 (cumulative boundaries 8, 10.67, 13.33, 16 rounded), so rank 2
// receives two elements from each source, taken at offset 8 + 3 = 11 of its input.
TEST(CollectiveDescriptor, AlltoallvPiecesAndValuesByHand) {
  OpCase c;
  c.op = Collective::alltoallv;
  c.distribution = {PeerDistribution::Kind::hot, 0.5};
  c.shape = shape_for(Collective::alltoallv, 64, 4, 4, c.distribution);
  EXPECT_EQ(c.shape.count, 4u);
  EXPECT_EQ(c.shape.send_elements, 16u);
  EXPECT_EQ(c.shape.recv_elements, 32u);  // rank 0 receives 8 from each of 4 ranks
  EXPECT_EQ(c.shape.bytes, 64u);
  expect_region(output_region(c, 2, 4), {kRecv, 0, 8}, "rank 2's output");
  expect_region(output_region(c, 0, 4), {kRecv, 0, 32}, "rank 0's output");
  expect_region(input_region(c, 2), {kSend, 0, 16}, "rank 2's input");

  const std::vector<CheckedPiece> pieces = checked_pieces(c, 2, 4, 8);
  ASSERT_EQ(pieces.size(), 4u);
  for (int source = 0; source < 4; ++source) {
    const CheckedPiece& piece = pieces[static_cast<std::size_t>(source)];
    EXPECT_EQ(piece.first_element, 2u * static_cast<std::uint64_t>(source));
    EXPECT_EQ(piece.elements, 2u);
    EXPECT_EQ(piece.first_index, 11u);
    EXPECT_EQ(piece.spec.source, source);
    EXPECT_EQ(piece.spec.rule, CheckRule::from_one_source);
  }
  // Output element 5 = piece 2, element 1: rank 2's input element 12, (131*2 + 7*12) % 127.
  EXPECT_EQ(expected_output<std::int64_t>(pieces[2].spec, pieces[2].first_index + 1), 92);
}

TEST(CollectiveDescriptor, OnlyTheRootsReduceOutputIsChecked) {
  OpCase c = case_of(Collective::reduce, Placement::out_of_place);
  EXPECT_TRUE(output_is_defined(check_spec_for(c, 1, 4)));
  EXPECT_FALSE(output_is_defined(check_spec_for(c, 2, 4)));
  c.op = Collective::allreduce;
  EXPECT_TRUE(output_is_defined(check_spec_for(c, 2, 4)));
}

}  // namespace
}  // namespace commbench
