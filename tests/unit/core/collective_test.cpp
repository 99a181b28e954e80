#include <gtest/gtest.h>

#include "commbench/core/collective.hpp"
#include "commbench/core/result_row.hpp"

namespace commbench {
namespace {

TEST(BusBandwidthFactor, NcclTestsConventionByHand) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::allreduce, 4), 1.5);   // 2*3/4
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::allreduce, 8), 1.75);  // 2*7/8
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::allreduce, 2), 1.0);   // 2*1/2
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::allreduce, 1), 0.0);   // nothing crosses a bus
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::reducescatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::alltoall, 16), 0.9375);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::sendrecv, 8), 1.0);
}

TEST(AlgorithmBandwidth, BytesOverSecondsInDecimalGigabytes) {
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbps(1'000'000'000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbps(1 << 20, 1e-3), 1.048576);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbps(8, 0.0), 0.0);
}

TEST(BufferShape, WholeBufferCollectives) {
  const BufferShape s = shape_for(Collective::allreduce, 1 << 20, 4, 4);
  EXPECT_EQ(s.bytes, 1u << 20);
  EXPECT_EQ(s.count, 262144u);
  EXPECT_EQ(s.send_elements, 262144u);
  EXPECT_EQ(s.recv_elements, 262144u);
  // 10 bytes of float round down to 2 elements.
  EXPECT_EQ(shape_for(Collective::broadcast, 10, 4, 4).bytes, 8u);
  // Never below one element.
  EXPECT_EQ(shape_for(Collective::sendrecv, 1, 8, 2).bytes, 8u);
}

TEST(BufferShape, ChunkedCollectivesCountPerRank) {
  const BufferShape gather = shape_for(Collective::allgather, 1 << 20, 4, 4);
  EXPECT_EQ(gather.count, 65536u);
  EXPECT_EQ(gather.send_elements, 65536u);
  EXPECT_EQ(gather.recv_elements, 262144u);
  EXPECT_EQ(gather.bytes, 1u << 20);
  const BufferShape scatter = shape_for(Collective::reducescatter, 1 << 20, 4, 4);
  EXPECT_EQ(scatter.send_elements, 262144u);
  EXPECT_EQ(scatter.recv_elements, 65536u);
  const BufferShape a2a = shape_for(Collective::alltoall, 1 << 20, 8, 4);
  EXPECT_EQ(a2a.count, 32768u);
  EXPECT_EQ(a2a.send_elements, 131072u);
  EXPECT_EQ(a2a.recv_elements, 131072u);
  // 8 bytes over 4 ranks of 4-byte floats cannot split: one element per rank, 16 bytes.
  const BufferShape tiny = shape_for(Collective::allgather, 8, 4, 4);
  EXPECT_EQ(tiny.count, 1u);
  EXPECT_EQ(tiny.bytes, 16u);
  // 100 bytes over 3 ranks of int32: 8 elements per rank, 96 bytes.
  EXPECT_EQ(shape_for(Collective::reducescatter, 100, 4, 3).bytes, 96u);
}

TEST(Collective, Traits) {
  EXPECT_TRUE(reduces(Collective::allreduce));
  EXPECT_TRUE(reduces(Collective::reducescatter));
  EXPECT_TRUE(reduces(Collective::reduce));
  EXPECT_FALSE(reduces(Collective::allgather));
  EXPECT_TRUE(has_root(Collective::broadcast));
  EXPECT_FALSE(has_root(Collective::sendrecv));
}

}  // namespace
}  // namespace commbench
