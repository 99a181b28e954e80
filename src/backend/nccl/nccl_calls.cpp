// The per-collective NCCL call table (kNcclCalls) and the enqueueing of one operation on
// every GPU this process drives.
#include "nccl_calls.hpp"

#include <nccl.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "nccl_support.hpp"

namespace commbench::nccl::detail {

// What one NCCL call needs for one device.
struct CallArguments {
  const DeviceContext& device;
  ncclDataType_t type;
  ncclRedOp_t redop;
  std::size_t count;
  std::uint64_t element_bytes;
  bool in_place;
  int root;
  int ranks;
  std::byte* send;
  std::byte* recv;
  const PeerCounts* peers;  // alltoallv only

  // NCCL's in-place convention: the input is read from the receive buffer.
  std::byte* input() const { return in_place ? recv : send; }
  std::uint64_t chunk_bytes() const { return count * element_bytes; }
  std::byte* own_chunk_of_recv() const { return recv + static_cast<std::uint64_t>(device.rank) * chunk_bytes(); }
};

namespace {

// One point-to-point transfer of an exchange: a buffer, its element count and the peer.
struct Transfer {
  std::byte* data;
  std::size_t count;
  int peer;
};

// Enqueue one send or one receive (inside the caller's group).
void send_to(const CallArguments& a, const Transfer& to) {
  check_nccl(ncclSend(to.data, to.count, a.type, to.peer, a.device.comm, a.device.stream), "ncclSend", a.device.comm);
}
void receive_from(const CallArguments& a, const Transfer& from) {
  check_nccl(ncclRecv(from.data, from.count, a.type, from.peer, a.device.comm, a.device.stream), "ncclRecv",
             a.device.comm);
}
void send_and_receive(const CallArguments& a, const Transfer& to, const Transfer& from) {
  send_to(a, to);
  receive_from(a, from);
}

constexpr std::array kNcclCalls{
    NcclCall{.op = Collective::allreduce,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(
                       ncclAllReduce(a.input(), a.recv, a.count, a.type, a.redop, a.device.comm, a.device.stream),
                       "ncclAllReduce", a.device.comm);
                 }},
    NcclCall{.op = Collective::allgather,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(ncclAllGather(a.in_place ? a.own_chunk_of_recv() : a.send, a.recv, a.count, a.type,
                                            a.device.comm, a.device.stream),
                              "ncclAllGather", a.device.comm);
                 }},
    NcclCall{.op = Collective::reducescatter,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(ncclReduceScatter(a.input(), a.in_place ? a.own_chunk_of_recv() : a.recv, a.count, a.type,
                                                a.redop, a.device.comm, a.device.stream),
                              "ncclReduceScatter", a.device.comm);
                 }},
    NcclCall{.op = Collective::broadcast,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(ncclBroadcast(a.input(), a.recv, a.count, a.type, a.root, a.device.comm, a.device.stream),
                              "ncclBroadcast", a.device.comm);
                 }},
    NcclCall{.op = Collective::reduce,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(
                       ncclReduce(a.input(), a.recv, a.count, a.type, a.redop, a.root, a.device.comm, a.device.stream),
                       "ncclReduce", a.device.comm);
                 }},
    // Grouped point-to-point works on every NCCL with send/recv (2.7+), like nccl-tests.
    NcclCall{.op = Collective::alltoall,
             .enqueue =
                 [](const CallArguments& a) {
                   for (int peer = 0; peer < a.ranks; ++peer) {
                     const std::uint64_t offset = static_cast<std::uint64_t>(peer) * a.chunk_bytes();
                     send_and_receive(a, {a.send + offset, a.count, peer}, {a.recv + offset, a.count, peer});
                   }
                 },
             .grouped = true,
             .no_in_place = "in-place alltoall: NCCL needs separate send and receive buffers"},
    NcclCall{.op = Collective::sendrecv,
             .enqueue =
                 [](const CallArguments& a) {
                   const int next = (a.device.rank + 1) % a.ranks;
                   const int previous = (a.device.rank + a.ranks - 1) % a.ranks;
                   send_and_receive(a, {a.send, a.count, next}, {a.recv, a.count, previous});
                 },
             .grouped = true,
             .no_in_place = "in-place sendrecv: the send and receive would overlap in one buffer"},
    // NCCL has no alltoallv: one send and one receive per peer in a group, skipping empty
    // pieces as PyTorch's all_to_all_single does (both sides know the counts, so they skip
    // the same pairs). The in-place refusal comes from the descriptor.
    NcclCall{.op = Collective::alltoallv,
             .enqueue =
                 [](const CallArguments& a) {
                   const PeerCounts& peers = *a.peers;
                   for (int peer = 0; peer < a.ranks; ++peer) {
                     const auto p = static_cast<std::size_t>(peer);
                     if (peers.send_counts[p] > 0)
                       send_to(a, {a.send + peers.send_offsets[p] * a.element_bytes, peers.send_counts[p], peer});
                     if (peers.recv_counts[p] > 0)
                       receive_from(a, {a.recv + peers.recv_offsets[p] * a.element_bytes, peers.recv_counts[p], peer});
                   }
                 },
             .grouped = true},
};

static_assert(lists_every_collective_in_order(kNcclCalls), "kNcclCalls: one entry per collective, in enum order");

}  // namespace

const NcclCall& nccl_call(Collective op) { return kNcclCalls[static_cast<std::size_t>(op)]; }

void enqueue_on_devices(const OpCase& c, NcclBuffers& buffers, NcclBackend::State& state,
                        const std::vector<DeviceContext>& devices) {
  const NcclCall& call = nccl_call(c.op);
  const bool split_per_peer = descriptor_of(c.op).split_per_peer();
  const bool grouped = call.grouped || devices.size() > 1;
  if (grouped) check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices.size() > 1) check_cuda(cudaSetDevice(devices[i].device), "cudaSetDevice");
    const DeviceBuffers& b = buffers.per_device[i];
    call.enqueue(CallArguments{devices[i], nccl_type(c.dtype), nccl_op(c.redop), c.shape.count, size_of(c.dtype),
                               c.placement == Placement::in_place, c.root, state.nranks, b.send, b.recv,
                               split_per_peer ? &state.peer_counts_for(c, i) : nullptr});
  }
  if (grouped) check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

void enqueue_all(const OpCase& c, NcclBuffers& buffers, NcclBackend::State& state) {
  enqueue_on_devices(c, buffers, state, state.devices);
}

}  // namespace commbench::nccl::detail
