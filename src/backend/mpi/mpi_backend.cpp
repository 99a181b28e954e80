#include "commbench/backend/mpi/mpi_backend.hpp"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/mpi/mpi_environment.hpp"
#include "commbench/backend/mpi/mpi_pending.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/host_buffer_check.hpp"
#include "commbench/core/host_memory.hpp"
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

int as_count(std::uint64_t elements) {
  if (elements > static_cast<std::uint64_t>(INT32_MAX))
    throw UsageError("-e/--max-bytes: " + std::to_string(elements) +
                     " elements exceed the 2^31-1 element count of an MPI call");
  return static_cast<int>(elements);
}

CheckSpec check_spec(const OpCase& c, const Bootstrap& g) {
  return CheckSpec{c.op, c.redop, c.root, g.rank(), g.size(), c.shape.count};
}

// Where this rank's input lives before the operation, as (buffer, first element index
// of the pattern, element count). In-place operations read from the receive buffer.
struct Region {
  std::byte* data;
  std::uint64_t first_index;
  std::uint64_t elements;
};

Region input_region(const OpCase& c, HostBuffers& b, int rank) {
  const std::uint64_t esize = size_of(c.dtype);
  if (c.placement == Placement::out_of_place) return {b.send(), 0, c.shape.send_elements};
  if (c.op == Collective::allgather)
    return {b.recv() + static_cast<std::uint64_t>(rank) * c.shape.count * esize, 0, c.shape.count};
  return {b.recv(), 0, c.shape.send_elements};
}

// Where this rank's result lives after the operation.
Region output_region(const OpCase& c, HostBuffers& b, int rank) {
  // Out-of-place broadcast sends from the root's send buffer (MPI_Bcast has one buffer
  // per rank), so the root's result is its own send buffer.
  if (c.op == Collective::broadcast && c.placement == Placement::out_of_place && rank == c.root)
    return {b.send(), 0, c.shape.recv_elements};
  return {b.recv(), 0, c.shape.recv_elements};
}

}  // namespace

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
  for (const OpCase& c : plan) as_count(c.shape.count);
}

std::unique_ptr<Buffers> MpiBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  std::unique_ptr<Buffers> buffers;
  // Hand memory freed since the last allocation (earlier buffers, the MPI library's
  // temporaries) back to the kernel: glibc keeps up to 64 MiB of it resident otherwise,
  // which would count against this run's peak memory without being used.
  malloc_trim(0);
  collective_try(*group_, [&] {
    const std::uint64_t per_rank = send_bytes + recv_bytes;
    const std::uint64_t per_node = per_rank * static_cast<std::uint64_t>(group_->local_size());
    const auto available = available_host_memory();
    if (available && per_node > *available)
      throw UsageError("-e/--max-bytes: buffers need " + format_size(per_rank) + " per rank x " +
                       std::to_string(group_->local_size()) + " ranks = " + format_size(per_node) + " on host " +
                       group_->hostname() + ", but only " + format_size(*available) + " is available");
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
  const Region in = input_region(c, b, group_->rank());
  fill_host_input(c.dtype, in.data, in.elements, check_spec(c, *group_), in.first_index);
}

std::uint64_t MpiBackend::count_wrong(const OpCase& c, Buffers& buffers) {
  const Region out = output_region(c, host(buffers), group_->rank());
  return count_host_mismatches(c.dtype, out.data, out.elements, check_spec(c, *group_), out.first_index);
}

void MpiBackend::corrupt_output(const OpCase& c, Buffers& buffers) {
  if (!output_is_defined(check_spec(c, *group_))) return;  // nothing there is checked
  const Region out = output_region(c, host(buffers), group_->rank());
  corrupt_host_element(c.dtype, out.data, 0);
}

void MpiBackend::run_once(const OpCase& c, Buffers& buffers) {
  HostBuffers& b = host(buffers);
  const MPI_Comm comm = group_->comm();
  const MPI_Datatype type = mpi_type(c.dtype);
  const bool in_place = c.placement == Placement::in_place;
  const int count = as_count(c.shape.count);
  const int rank = group_->rank();
  const int n = group_->size();
  void* send = b.send();
  void* recv = b.recv();
  switch (c.op) {
    case Collective::allreduce:
      check_mpi(MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, count, type, mpi_op(c.redop), comm),
                "MPI_Allreduce");
      return;
    case Collective::allgather:
      if (in_place)
        check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, comm), "MPI_Allgather");
      else
        check_mpi(MPI_Allgather(send, count, type, recv, count, type, comm), "MPI_Allgather");
      return;
    case Collective::reducescatter:
      check_mpi(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, count, type, mpi_op(c.redop), comm),
                "MPI_Reduce_scatter_block");
      return;
    case Collective::broadcast: {
      void* buffer = in_place ? recv : (rank == c.root ? send : recv);
      check_mpi(MPI_Bcast(buffer, count, type, c.root, comm), "MPI_Bcast");
      return;
    }
    case Collective::reduce: {
      const void* source = in_place ? (rank == c.root ? MPI_IN_PLACE : recv) : send;
      check_mpi(MPI_Reduce(source, recv, count, type, mpi_op(c.redop), c.root, comm), "MPI_Reduce");
      return;
    }
    case Collective::alltoall:
      if (in_place)
        check_mpi(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, comm), "MPI_Alltoall");
      else
        check_mpi(MPI_Alltoall(send, count, type, recv, count, type, comm), "MPI_Alltoall");
      return;
    case Collective::sendrecv: {
      const int next = (rank + 1) % n;
      const int previous = (rank + n - 1) % n;
      if (in_place)
        check_mpi(MPI_Sendrecv_replace(recv, count, type, next, kSendRecvTag, previous, kSendRecvTag, comm,
                                       MPI_STATUS_IGNORE),
                  "MPI_Sendrecv_replace");
      else
        check_mpi(MPI_Sendrecv(send, count, type, next, kSendRecvTag, recv, count, type, previous, kSendRecvTag, comm,
                               MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
      return;
    }
  }
}

double MpiBackend::time_batch(const OpCase& c, Buffers& buffers, std::uint64_t iterations) {
  const double start = MPI_Wtime();
  for (std::uint64_t i = 0; i < iterations; ++i) run_once(c, buffers);
  return MPI_Wtime() - start;
}

std::unique_ptr<PendingOperation> MpiBackend::start(const OpCase& c, Buffers& buffers) {
  HostBuffers& b = host(buffers);
  const MPI_Comm comm = group_->comm();
  const MPI_Datatype type = mpi_type(c.dtype);
  const bool in_place = c.placement == Placement::in_place;
  const int count = as_count(c.shape.count);
  const int rank = group_->rank();
  const int n = group_->size();
  void* send = b.send();
  void* recv = b.recv();
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  MPI_Request* r = requests.data();
  switch (c.op) {
    case Collective::allreduce:
      check_mpi(MPI_Iallreduce(in_place ? MPI_IN_PLACE : send, recv, count, type, mpi_op(c.redop), comm, r),
                "MPI_Iallreduce");
      break;
    case Collective::allgather:
      if (in_place)
        check_mpi(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, comm, r), "MPI_Iallgather");
      else
        check_mpi(MPI_Iallgather(send, count, type, recv, count, type, comm, r), "MPI_Iallgather");
      break;
    case Collective::reducescatter:
      check_mpi(
          MPI_Ireduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, count, type, mpi_op(c.redop), comm, r),
          "MPI_Ireduce_scatter_block");
      break;
    case Collective::broadcast:
      check_mpi(MPI_Ibcast(in_place ? recv : (rank == c.root ? send : recv), count, type, c.root, comm, r),
                "MPI_Ibcast");
      break;
    case Collective::reduce: {
      const void* source = in_place ? (rank == c.root ? MPI_IN_PLACE : recv) : send;
      check_mpi(MPI_Ireduce(source, recv, count, type, mpi_op(c.redop), c.root, comm, r), "MPI_Ireduce");
      break;
    }
    case Collective::alltoall:
      if (in_place)
        throw UsageError("--placement in: non-blocking in-place alltoall is not available in MPI 3");
      check_mpi(MPI_Ialltoall(send, count, type, recv, count, type, comm, r), "MPI_Ialltoall");
      break;
    case Collective::sendrecv: {
      if (in_place) throw UsageError("--placement in: non-blocking in-place sendrecv is not available in MPI 3");
      requests.resize(2, MPI_REQUEST_NULL);
      r = requests.data();
      check_mpi(MPI_Irecv(recv, count, type, (rank + n - 1) % n, kSendRecvTag, comm, &r[0]), "MPI_Irecv");
      check_mpi(MPI_Isend(send, count, type, (rank + 1) % n, kSendRecvTag, comm, &r[1]), "MPI_Isend");
      break;
    }
  }
  return std::make_unique<MpiPending>(std::move(requests));
}

std::unique_ptr<Backend> MpiBackend::split(int color, int key) {
  return std::make_unique<MpiBackend>(group_->split_mpi(color, key));
}

}  // namespace commbench::mpi
