#include "commbench/backend/mpi/mpi_backend.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/mpi/mpi_environment.hpp"
#include "commbench/backend/mpi/mpi_pending.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/buffer_region.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/host_buffer_check.hpp"
#include "commbench/core/host_memory.hpp"
#include "commbench/core/output_check.hpp"
#include "commbench/core/size.hpp"

namespace commbench::mpi {
namespace {

constexpr int kSendRecvTag = 7301;
constexpr unsigned char kStaleByte = 0xA5;  // fills outputs so stale results never pass a check

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};

class HostBuffers final : public Buffers {
 public:
  HostBuffers(std::uint64_t send_bytes, std::uint64_t recv_bytes)
      : send_bytes_(send_bytes), recv_bytes_(recv_bytes), send_(allocate(send_bytes)), recv_(allocate(recv_bytes)) {}
  std::uint64_t send_capacity() const override { return send_bytes_; }
  std::uint64_t recv_capacity() const override { return recv_bytes_; }
  std::byte* send() { return static_cast<std::byte*>(send_.get()); }
  std::byte* recv() { return static_cast<std::byte*>(recv_.get()); }

 private:
  static std::unique_ptr<void, FreeDeleter> allocate(std::uint64_t bytes) {
    constexpr std::uint64_t kPage = 4096;
    const std::uint64_t rounded = (std::max<std::uint64_t>(bytes, 1) + kPage - 1) / kPage * kPage;
    void* p = std::aligned_alloc(kPage, rounded);
    if (p == nullptr) throw std::bad_alloc();
    // Touch every page now so first-use page faults never land inside a timed batch.
    std::memset(p, 0, rounded);
    return std::unique_ptr<void, FreeDeleter>(p);
  }
  std::uint64_t send_bytes_;
  std::uint64_t recv_bytes_;
  std::unique_ptr<void, FreeDeleter> send_;
  std::unique_ptr<void, FreeDeleter> recv_;
};

HostBuffers& host(Buffers& b) { return static_cast<HostBuffers&>(b); }

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case DataType::int8: return MPI_INT8_T;
    case DataType::uint8: return MPI_UINT8_T;
    case DataType::int32: return MPI_INT32_T;
    case DataType::uint32: return MPI_UINT32_T;
    case DataType::int64: return MPI_INT64_T;
    case DataType::uint64: return MPI_UINT64_T;
    case DataType::float32: return MPI_FLOAT;
    case DataType::float64: return MPI_DOUBLE;
    case DataType::float16:
    case DataType::bfloat16:
    case DataType::float8_e4m3:
    case DataType::float8_e5m2: break;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::none:
    case ReduceOp::avg: break;
  }
  return MPI_OP_NULL;
}

// The largest byte size a case of this kind can have with `elements` scaled down to the
// 2^31-1 of one MPI call, and the largest power of two within it (what -e is usually).
struct CountLimit {
  std::uint64_t bytes;
  std::uint64_t power_of_two;
};
CountLimit count_limit(const OpCase& c, std::uint64_t elements) {
  const long double per_element = static_cast<long double>(c.shape.bytes) / static_cast<long double>(elements);
  const auto bytes = static_cast<std::uint64_t>(static_cast<long double>(INT32_MAX) * per_element);
  std::uint64_t power = 1;
  while (power <= bytes / 2) power *= 2;
  return {bytes, power};
}

int as_count(std::uint64_t elements) {
  if (elements > static_cast<std::uint64_t>(INT32_MAX))
    throw UsageError(
        fmt::format("-e/--max-bytes: {} elements exceed the 2^31-1 element count of an MPI call", elements));
  return static_cast<int>(elements);
}

// What one MPI call needs, resolved once per operation from the case and the buffers.
struct CallArguments {
  MPI_Comm comm;
  MPI_Datatype type;
  MPI_Op redop;
  bool in_place;
  int count;
  int rank;
  int ranks;
  int root;
  void* send;
  void* recv;
  // alltoallv: MPI_Alltoallv's counts and displacements (elements); empty otherwise.
  std::vector<int> send_counts, send_offsets, recv_counts, recv_offsets;
};

void* in_place_or(const CallArguments& a, void* buffer) { return a.in_place ? MPI_IN_PLACE : buffer; }

// The send arguments of the gathering calls (allgather, alltoall): in place, MPI ignores
// count and type and reads the receive buffer.
struct SendSide {
  const void* buffer;
  int count;
  MPI_Datatype type;
};
SendSide send_side(const CallArguments& a) {
  if (a.in_place) return {MPI_IN_PLACE, 0, MPI_DATATYPE_NULL};
  return {a.send, a.count, a.type};
}

// Blocking and non-blocking MPI calls of one collective. `output` names where MPI leaves
// this rank's result when that differs from the descriptor's (nccl-tests') region.
struct MpiCall {
  Collective op;
  void (*run)(const CallArguments&);
  void (*start)(const CallArguments&, std::vector<MPI_Request>&);
  BufferRegion (*output)(const OpCase&, int rank, int ranks);
};

BufferRegion standard_output(const OpCase& c, int rank, int ranks) { return output_region(c, rank, ranks); }

// MPI_Bcast has one buffer per rank: out of place the root sends from (and so keeps its
// result in) its send buffer.
BufferRegion broadcast_output(const OpCase& c, int rank, int ranks) {
  if (c.placement == Placement::out_of_place && rank == c.root) return {BufferSide::send, 0, c.shape.recv_elements};
  return output_region(c, rank, ranks);
}

// In place, MPI_Reduce_scatter_block leaves the result at the start of the receive buffer.
BufferRegion reducescatter_output(const OpCase& c, int rank, int ranks) {
  if (c.placement == Placement::in_place) return {BufferSide::receive, 0, c.shape.recv_elements};
  return output_region(c, rank, ranks);
}

MPI_Request& one_request(std::vector<MPI_Request>& requests) {
  requests.assign(1, MPI_REQUEST_NULL);
  return requests.front();
}

void* broadcast_buffer(const CallArguments& a) { return a.in_place || a.rank != a.root ? a.recv : a.send; }
const void* reduce_source(const CallArguments& a) {
  if (!a.in_place) return a.send;
  return a.rank == a.root ? MPI_IN_PLACE : a.recv;
}
int next_rank(const CallArguments& a) { return (a.rank + 1) % a.ranks; }
int previous_rank(const CallArguments& a) { return (a.rank + a.ranks - 1) % a.ranks; }

constexpr std::array kMpiCalls{
    MpiCall{
        Collective::allreduce,
        [](const CallArguments& a) {
          check_mpi(MPI_Allreduce(in_place_or(a, a.send), a.recv, a.count, a.type, a.redop, a.comm), "MPI_Allreduce");
        },
        [](const CallArguments& a, std::vector<MPI_Request>& r) {
          check_mpi(MPI_Iallreduce(in_place_or(a, a.send), a.recv, a.count, a.type, a.redop, a.comm, &one_request(r)),
                    "MPI_Iallreduce");
        },
        standard_output},
    MpiCall{Collective::allgather,
            [](const CallArguments& a) {
              const SendSide from = send_side(a);
              check_mpi(MPI_Allgather(from.buffer, from.count, from.type, a.recv, a.count, a.type, a.comm),
                        "MPI_Allgather");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              const SendSide from = send_side(a);
              check_mpi(
                  MPI_Iallgather(from.buffer, from.count, from.type, a.recv, a.count, a.type, a.comm, &one_request(r)),
                  "MPI_Iallgather");
            },
            standard_output},
    MpiCall{Collective::reducescatter,
            [](const CallArguments& a) {
              check_mpi(MPI_Reduce_scatter_block(in_place_or(a, a.send), a.recv, a.count, a.type, a.redop, a.comm),
                        "MPI_Reduce_scatter_block");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              check_mpi(MPI_Ireduce_scatter_block(in_place_or(a, a.send), a.recv, a.count, a.type, a.redop, a.comm,
                                                  &one_request(r)),
                        "MPI_Ireduce_scatter_block");
            },
            reducescatter_output},
    MpiCall{Collective::broadcast,
            [](const CallArguments& a) {
              check_mpi(MPI_Bcast(broadcast_buffer(a), a.count, a.type, a.root, a.comm), "MPI_Bcast");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              check_mpi(MPI_Ibcast(broadcast_buffer(a), a.count, a.type, a.root, a.comm, &one_request(r)),
                        "MPI_Ibcast");
            },
            broadcast_output},
    MpiCall{Collective::reduce,
            [](const CallArguments& a) {
              check_mpi(MPI_Reduce(reduce_source(a), a.recv, a.count, a.type, a.redop, a.root, a.comm), "MPI_Reduce");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              check_mpi(
                  MPI_Ireduce(reduce_source(a), a.recv, a.count, a.type, a.redop, a.root, a.comm, &one_request(r)),
                  "MPI_Ireduce");
            },
            standard_output},
    MpiCall{Collective::alltoall,
            [](const CallArguments& a) {
              const SendSide from = send_side(a);
              check_mpi(MPI_Alltoall(from.buffer, from.count, from.type, a.recv, a.count, a.type, a.comm),
                        "MPI_Alltoall");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              if (a.in_place)
                throw UsageError("--placement in: non-blocking in-place alltoall is not available in MPI 3");
              check_mpi(MPI_Ialltoall(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm, &one_request(r)),
                        "MPI_Ialltoall");
            },
            standard_output},
    MpiCall{Collective::sendrecv,
            [](const CallArguments& a) {
              if (a.in_place)
                check_mpi(MPI_Sendrecv_replace(a.recv, a.count, a.type, next_rank(a), kSendRecvTag, previous_rank(a),
                                               kSendRecvTag, a.comm, MPI_STATUS_IGNORE),
                          "MPI_Sendrecv_replace");
              else
                check_mpi(MPI_Sendrecv(a.send, a.count, a.type, next_rank(a), kSendRecvTag, a.recv, a.count, a.type,
                                       previous_rank(a), kSendRecvTag, a.comm, MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              if (a.in_place)
                throw UsageError("--placement in: non-blocking in-place sendrecv is not available in MPI 3");
              r.assign(2, MPI_REQUEST_NULL);
              check_mpi(MPI_Irecv(a.recv, a.count, a.type, previous_rank(a), kSendRecvTag, a.comm, &r[0]), "MPI_Irecv");
              check_mpi(MPI_Isend(a.send, a.count, a.type, next_rank(a), kSendRecvTag, a.comm, &r[1]), "MPI_Isend");
            },
            standard_output},
    // In place never reaches here: the descriptor has no in-place form (missing_in_place_form).
    MpiCall{Collective::alltoallv,
            [](const CallArguments& a) {
              check_mpi(MPI_Alltoallv(a.send, a.send_counts.data(), a.send_offsets.data(), a.type, a.recv,
                                      a.recv_counts.data(), a.recv_offsets.data(), a.type, a.comm),
                        "MPI_Alltoallv");
            },
            [](const CallArguments& a, std::vector<MPI_Request>& r) {
              check_mpi(MPI_Ialltoallv(a.send, a.send_counts.data(), a.send_offsets.data(), a.type, a.recv,
                                       a.recv_counts.data(), a.recv_offsets.data(), a.type, a.comm, &one_request(r)),
                        "MPI_Ialltoallv");
            },
            standard_output},
};

static_assert(lists_every_collective_in_order(kMpiCalls), "kMpiCalls: one entry per collective, in enum order");

const MpiCall& mpi_call(Collective op) { return kMpiCalls[static_cast<std::size_t>(op)]; }

std::byte* data_of(HostBuffers& b, const BufferRegion& region, DataType dtype) {
  std::byte* base = region.buffer == BufferSide::send ? b.send() : b.recv();
  return base + region.first_element * size_of(dtype);
}

std::vector<int> as_counts(const std::vector<std::uint64_t>& elements) {
  std::vector<int> counts;
  counts.reserve(elements.size());
  for (const std::uint64_t e : elements) counts.push_back(as_count(e));
  return counts;
}

// Built once per batch, outside the timed loop (alltoallv's arrays are O(ranks)).
CallArguments arguments_for(const OpCase& c, Buffers& buffers, const MpiBootstrap& group) {
  HostBuffers& b = host(buffers);
  CallArguments args{group.comm(),
                     mpi_type(c.dtype),
                     mpi_op(c.redop),
                     c.placement == Placement::in_place,
                     as_count(c.shape.count),
                     group.rank(),
                     group.size(),
                     c.root,
                     b.send(),
                     b.recv(),
                     {},
                     {},
                     {},
                     {}};
  if (descriptor_of(c.op).split_per_peer()) {
    const PeerCounts peers = peer_counts(c.distribution, c.shape.send_elements, group.size(), group.rank());
    args.send_counts = as_counts(peers.send_counts);
    args.send_offsets = as_counts(peers.send_offsets);
    args.recv_counts = as_counts(peers.recv_counts);
    args.recv_offsets = as_counts(peers.recv_offsets);
  }
  return args;
}

}  // namespace

std::optional<std::string> mpi_count_refusal(const OpCase& c, std::uint64_t elements) {
  if (elements <= static_cast<std::uint64_t>(INT32_MAX)) return std::nullopt;
  const CountLimit limit = count_limit(c, elements);
  return fmt::format(
      "-e/--max-bytes: {} {} of {} bytes ({}) needs {} elements in one MPI call, more than its 2^31-1; the largest "
      "size that works is {} bytes (-e {})",
      name_of(c.op), name_of(c.dtype), c.shape.bytes, format_size(c.shape.bytes), elements, limit.bytes,
      format_size(limit.power_of_two));
}

MpiBackend::MpiBackend(std::unique_ptr<MpiBootstrap> group) : group_(std::move(group)) {}

std::string MpiBackend::library_version() const { return MpiEnvironment::library_version(); }

std::optional<std::string> MpiBackend::unsupported_reason(Collective op, DataType dtype, ReduceOp redop) const {
  if (mpi_type(dtype) == MPI_DATATYPE_NULL)
    return "the mpi backend cannot use -d/--dtype " + std::string(name_of(dtype)) +
           ": MPI has no 16- or 8-bit floating-point type (use --backend nccl)";
  if (reduces(op) && redop == ReduceOp::avg)
    return "the mpi backend cannot use -o/--redop avg: MPI has no averaging reduction (use --backend nccl)";
  return std::nullopt;
}

void MpiBackend::validate_plan(std::span<const OpCase> plan) const {
  for (const OpCase& c : plan) {
    // MPI_Alltoallv's displacements are ints too: the whole buffers must be addressable.
    const std::uint64_t elements = descriptor_of(c.op).split_per_peer()
                                       ? std::max({c.shape.count, c.shape.send_elements, c.shape.recv_elements})
                                       : c.shape.count;
    if (const auto refusal = mpi_count_refusal(c, elements)) throw UsageError(*refusal);
  }
}

std::optional<std::string> MpiBackend::unsupported_in_place(Collective op) const { return missing_in_place_form(op); }

// Collective: what every rank of this node needs together (ranks of one job may need
// different amounts: pipeline stages, expert layouts) against what the node has.
void MpiBackend::require_room_on_node(std::uint64_t bytes_per_rank, const std::string& what) const {
  const std::vector<std::uint64_t> needs = all_gather_as(*group_, bytes_per_rank);
  const std::vector<std::string>& hosts = group_->hostnames();
  std::uint64_t on_node = 0, ranks = 0, largest = 0;
  bool alike = true;
  for (std::size_t r = 0; r < needs.size(); ++r) {
    if (hosts[r] != group_->hostname()) continue;
    const std::uint64_t room = std::numeric_limits<std::uint64_t>::max() - on_node;
    on_node += std::min(needs[r], room);
    alike = alike && (ranks == 0 || needs[r] == largest);
    largest = std::max(largest, needs[r]);
    ++ranks;
  }
  const auto available = available_host_memory();
  if (!available || on_node <= *available) return;
  const std::string per_rank =
      alike ? fmt::format("{} per rank", format_size(largest)) : fmt::format("up to {} per rank", format_size(largest));
  throw UsageError(fmt::format("{} need {} x {} ranks = {} on host {}, but only {} is available", what, per_rank, ranks,
                               format_size(on_node), group_->hostname(), format_size(*available)));
}

void MpiBackend::require_memory(std::uint64_t bytes_per_rank, const std::string& what) {
  // Memory freed since the last allocation (an earlier trial's buffers) is still resident
  // until trimmed, and MemAvailable would count it as taken.
  malloc_trim(0);
  collective_try(*group_, [&] { require_room_on_node(bytes_per_rank, what); });
}

std::uint64_t MpiBackend::library_scratch_bytes(const OpCase& c) const { return reduces(c.op) ? c.send_bytes() : 0; }

std::unique_ptr<Buffers> MpiBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  std::unique_ptr<Buffers> buffers;
  // Hand memory freed since the last allocation (earlier buffers, the MPI library's
  // temporaries) back to the kernel: glibc keeps up to 64 MiB of it resident otherwise,
  // which would count against this run's peak memory without being used.
  malloc_trim(0);
  collective_try(*group_, [&] {
    const std::uint64_t per_rank = send_bytes + recv_bytes;
    require_room_on_node(per_rank, "-e/--max-bytes: buffers");
    try {
      buffers = std::make_unique<HostBuffers>(send_bytes, recv_bytes);
    } catch (const std::bad_alloc&) {
      throw UsageError("-e/--max-bytes: cannot allocate " + format_size(per_rank) + " of buffers on host " +
                       group_->hostname());
    }
  });
  return buffers;
}

void MpiBackend::fill_inputs(const OpCase& c, Buffers& buffers) {
  HostBuffers& b = host(buffers);
  std::memset(b.recv(), kStaleByte, b.recv_capacity());
  const BufferRegion in = input_region(c, group_->rank());
  fill_host_input(c.dtype, data_of(b, in, c.dtype), in.elements, check_spec_for(c, group_->rank(), group_->size()));
}

std::uint64_t MpiBackend::count_wrong(const OpCase& c, Buffers& buffers) {
  const BufferRegion out = mpi_call(c.op).output(c, group_->rank(), group_->size());
  const std::byte* data = data_of(host(buffers), out, c.dtype);
  std::uint64_t wrong = 0;
  for (const CheckedPiece& piece : checked_pieces(c, group_->rank(), group_->size(), out.elements))
    wrong += count_host_mismatches(c.dtype, data + piece.first_element * size_of(c.dtype), piece.elements, piece.spec,
                                   piece.first_index);
  return wrong;
}

void MpiBackend::corrupt_output(const OpCase& c, Buffers& buffers) {
  if (!output_is_defined(check_spec_for(c, group_->rank(), group_->size()))) return;  // nothing there is checked
  const BufferRegion out = mpi_call(c.op).output(c, group_->rank(), group_->size());
  if (out.elements == 0) return;  // alltoallv: nothing was sent to this rank
  corrupt_host_element(c.dtype, data_of(host(buffers), out, c.dtype), 0);
}

void MpiBackend::run_once(const OpCase& c, Buffers& buffers) { mpi_call(c.op).run(arguments_for(c, buffers, *group_)); }

double MpiBackend::time_batch(const OpCase& c, Buffers& buffers, std::uint64_t iterations) {
  const MpiCall& call = mpi_call(c.op);
  const CallArguments args = arguments_for(c, buffers, *group_);
  const double start = MPI_Wtime();
  for (std::uint64_t i = 0; i < iterations; ++i) call.run(args);
  return MPI_Wtime() - start;
}

std::unique_ptr<PendingOperation> MpiBackend::start(const OpCase& c, Buffers& buffers) {
  auto arguments = std::make_unique<const CallArguments>(arguments_for(c, buffers, *group_));
  std::vector<MPI_Request> requests;
  mpi_call(c.op).start(*arguments, requests);
  return std::make_unique<MpiPending>(std::move(requests), std::shared_ptr<const void>(std::move(arguments)));
}

std::unique_ptr<Backend> MpiBackend::split(int color, int key) {
  return std::make_unique<MpiBackend>(group_->split_mpi(color, key));
}

}  // namespace commbench::mpi
