#include "commbench/backend/backend.hpp"

#include "commbench/backend/peer_exchange.hpp"
#include "commbench/backend/stream_set.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

// Defaults, so a backend (or a test's fake) that needs none of the extensions still builds.
std::unique_ptr<PeerExchange> Backend::peer_exchange(const PeerRound&, std::uint64_t) {
  throw BackendError("the " + name() + " backend has no peer-addressed send/recv");
}

std::unique_ptr<StreamSet> Backend::streams() { throw BackendError("the " + name() + " backend has no streams"); }

std::optional<std::string> Backend::capture_range_unavailable() const {
  return "the " + name() + " backend drives no GPU, so there is no CUDA context to capture";
}

std::optional<std::string> Backend::library_choices_unavailable() const {
  return "nccl_algo, nccl_proto, nccl_channels: empty, the " + name() +
         " backend reports no algorithm choice (NCCL's profiler plugin interface does)";
}

}  // namespace commbench
