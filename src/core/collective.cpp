#include "commbench/core/collective.hpp"

#include <algorithm>
#include <array>

#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

constexpr std::array kAll{Collective::allreduce, Collective::allgather, Collective::reducescatter,
                          Collective::broadcast, Collective::reduce,    Collective::alltoall,
                          Collective::sendrecv};
using Named = detail::NamedValue<Collective>;
constexpr std::array kNames{
    Named{"allreduce", Collective::allreduce},       Named{"all_reduce", Collective::allreduce},
    Named{"allgather", Collective::allgather},       Named{"all_gather", Collective::allgather},
    Named{"reducescatter", Collective::reducescatter}, Named{"reduce_scatter", Collective::reducescatter},
    Named{"broadcast", Collective::broadcast},       Named{"bcast", Collective::broadcast},
    Named{"reduce", Collective::reduce},             Named{"alltoall", Collective::alltoall},
    Named{"all_to_all", Collective::alltoall},       Named{"sendrecv", Collective::sendrecv},
    Named{"send_recv", Collective::sendrecv},
};

bool is_chunked(Collective op) {
  return op == Collective::allgather || op == Collective::reducescatter || op == Collective::alltoall;
}

}  // namespace

std::span<const Collective> all_collectives() { return kAll; }

std::string_view name_of(Collective op) {
  switch (op) {
    case Collective::allreduce: return "allreduce";
    case Collective::allgather: return "allgather";
    case Collective::reducescatter: return "reducescatter";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::alltoall: return "alltoall";
    case Collective::sendrecv: return "sendrecv";
  }
  return "?";
}

Collective parse_collective(std::string_view text, std::string_view flag) {
  return detail::lookup_name<Collective>(kNames, text, flag, detail::canonical_names<Collective>(kAll));
}

std::string accepted_collective_names() { return detail::accepted_names<Collective>(kAll, kNames); }

std::vector<Collective> parse_collective_list(std::string_view text, std::string_view flag) {
  return detail::parse_list<Collective>(text, flag, kAll, parse_collective);
}

bool reduces(Collective op) {
  return op == Collective::allreduce || op == Collective::reducescatter || op == Collective::reduce;
}

bool has_root(Collective op) { return op == Collective::broadcast || op == Collective::reduce; }

double bus_bandwidth_factor(Collective op, int ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case Collective::allreduce: return 2.0 * (n - 1.0) / n;
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::alltoall: return (n - 1.0) / n;
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::sendrecv: return 1.0;
  }
  return 1.0;
}

BufferShape shape_for(Collective op, std::uint64_t requested_bytes, std::size_t element_size, int ranks) {
  const std::uint64_t n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t chunks = is_chunked(op) ? n : 1;
  const std::uint64_t count = std::max<std::uint64_t>(1, requested_bytes / element_size / chunks);
  BufferShape shape;
  shape.count = count;
  shape.bytes = count * chunks * element_size;
  switch (op) {
    case Collective::allgather:
      shape.send_elements = count;
      shape.recv_elements = count * n;
      break;
    case Collective::reducescatter:
      shape.send_elements = count * n;
      shape.recv_elements = count;
      break;
    case Collective::alltoall:
      shape.send_elements = count * n;
      shape.recv_elements = count * n;
      break;
    default:
      shape.send_elements = count;
      shape.recv_elements = count;
  }
  return shape;
}

}  // namespace commbench
