#include "commbench/runner/heartbeat.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {
namespace {

constexpr std::size_t kMaxDatagram = 512;
// Rank 0's word back; a heartbeat always starts with a rank number, so it is never one.
constexpr std::string_view kResultsWritten = "results written";

// Rank 0's IPv4 address as other nodes reach it: its host name resolved.
std::string host_address() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &found) != 0 || found == nullptr) return "";
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, text, sizeof text);
  freeaddrinfo(found);
  return text;
}

std::string seconds(std::chrono::nanoseconds d) { return fixed_text(std::chrono::duration<double>(d).count(), 1); }

// Where a rank's channel socket is reached, as it travels to the other ranks: rank 0's
// collects the heartbeats, the others' take rank 0's word back.
struct SocketAddress {
  std::string address;
  int port = 0;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, SocketAddress>
void fields(Self& where, Visit& v) {
  v("address", where.address);
  v("port", where.port);
}

// Binds the socket to a port of its own (loopback when the whole job is on one node);
// none when it cannot. The address is empty when the host name does not resolve.
std::optional<SocketAddress> bind_channel_socket(int fd, bool one_node) {
  if (fd < 0) return std::nullopt;
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(one_node ? INADDR_LOOPBACK : INADDR_ANY);
  socklen_t length = sizeof any;
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&any), &length) != 0)
    return std::nullopt;
  return SocketAddress{one_node ? "127.0.0.1" : host_address(), ntohs(any.sin_port)};
}

std::vector<unsigned char> socket_address_bytes(const SocketAddress& where) {
  sockaddr_in destination{};
  destination.sin_family = AF_INET;
  destination.sin_port = htons(static_cast<std::uint16_t>(where.port));
  inet_pton(AF_INET, where.address.c_str(), &destination.sin_addr);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&destination);
  return {bytes, bytes + sizeof destination};
}

}  // namespace

HeartbeatChannel::HeartbeatChannel(int rank, int size, int socket_fd)
    : rank_(rank),
      size_(size),
      socket_(socket_fd),
      last_(static_cast<std::size_t>(size)),
      word_back_(static_cast<std::size_t>(size)) {}

HeartbeatChannel::~HeartbeatChannel() {
  stopping_ = true;
  if (collector_.joinable()) collector_.join();
  if (socket_ >= 0) close(socket_);
}

std::unique_ptr<HeartbeatChannel> HeartbeatChannel::open(Bootstrap& world) {
  // Every rank binds and publishes where it is reached; a rank without a socket, or a
  // rank 0 that cannot say where it is, means no channel. Rank 0's address is the
  // collector's; the others' take its word back (one whose host does not resolve waits
  // for it in vain, to its bound).
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const std::optional<SocketAddress> mine = bind_channel_socket(fd, world.node_count() == 1);
  const std::vector<std::optional<SocketAddress>> everyone = all_gather_as(world, mine);
  const bool all_bound = std::all_of(everyone.begin(), everyone.end(), [](const auto& where) { return where.has_value(); });
  if (!all_bound || everyone.front()->address.empty()) {
    if (fd >= 0) close(fd);
    return nullptr;
  }
  auto channel = std::unique_ptr<HeartbeatChannel>(new HeartbeatChannel(world.rank(), world.size(), fd));
  channel->destination_ = socket_address_bytes(*everyone.front());
  if (world.rank() == 0) {
    for (std::size_t rank = 1; rank < everyone.size(); ++rank)
      if (!everyone[rank]->address.empty()) channel->word_back_[rank] = socket_address_bytes(*everyone[rank]);
    timeval wait{0, 200000};  // the collector re-checks `stopping_` this often
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    channel->collector_ = std::thread([raw = channel.get()] { raw->collect(); });
  }
  return channel;
}

void HeartbeatChannel::send(std::uint64_t step, const std::string& step_name) noexcept {
  if (socket_ < 0) return;
  std::string datagram = fmt::format("{} {} {}", rank_, step, step_name);
  if (datagram.size() > kMaxDatagram) datagram.resize(kMaxDatagram);
  sendto(socket_, datagram.data(), datagram.size(), MSG_DONTWAIT,
         reinterpret_cast<const sockaddr*>(destination_.data()), static_cast<socklen_t>(destination_.size()));
}

void HeartbeatChannel::collect() {
  char buffer[kMaxDatagram + 1];
  while (!stopping_) {
    const ssize_t n = recv(socket_, buffer, kMaxDatagram, 0);
    if (n <= 0) continue;  // timeout: look at stopping_ again
    buffer[n] = '\0';
    std::istringstream in(std::string(buffer, static_cast<std::size_t>(n)));
    int rank = -1;
    std::uint64_t step = 0;
    if (!(in >> rank >> step) || rank < 0 || rank >= size_) continue;
    std::string name;
    std::getline(in, name);
    if (!name.empty() && name.front() == ' ') name.erase(0, 1);
    std::lock_guard lock(mutex_);
    last_[static_cast<std::size_t>(rank)] = RankHeartbeat{true, std::chrono::steady_clock::now(), step, name};
  }
}

void HeartbeatChannel::say_results_written() noexcept {
  if (socket_ < 0 || rank_ != 0) return;
  for (std::size_t rank = 1; rank < word_back_.size(); ++rank) {
    const std::vector<unsigned char>& address = word_back_[rank];
    if (address.empty()) continue;
    sendto(socket_, kResultsWritten.data(), kResultsWritten.size(), MSG_DONTWAIT,
           reinterpret_cast<const sockaddr*>(address.data()), static_cast<socklen_t>(address.size()));
  }
}

bool HeartbeatChannel::wait_for_results_written(std::chrono::milliseconds within) noexcept {
  if (socket_ < 0 || rank_ == 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + within;
  char buffer[kMaxDatagram];
  while (!results_written_heard_) {
    const auto left = std::max(std::chrono::milliseconds(0), std::chrono::ceil<std::chrono::milliseconds>(
                                                                 deadline - std::chrono::steady_clock::now()));
    pollfd readable{socket_, POLLIN, 0};
    if (poll(&readable, 1, static_cast<int>(left.count())) > 0) {
      const ssize_t n = recv(socket_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0 && std::string_view(buffer, static_cast<std::size_t>(n)) == kResultsWritten)
        results_written_heard_ = true;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      break;  // a signal interrupts the poll too: then the wait goes on to the deadline
    }
  }
  return results_written_heard_;
}

std::vector<RankHeartbeat> HeartbeatChannel::snapshot() const {
  std::lock_guard lock(mutex_);
  return last_;
}

std::vector<std::string> rank_labels(const std::vector<std::string>& hosts,
                                     const std::vector<std::vector<std::string>>& bus_ids) {
  std::vector<std::string> labels = hosts;
  for (std::size_t r = 0; r < labels.size() && r < bus_ids.size(); ++r) {
    if (bus_ids[r].empty()) continue;
    labels[r] += bus_ids[r].size() == 1 ? ", GPU " : ", GPUs ";
    for (std::size_t i = 0; i < bus_ids[r].size(); ++i) labels[r] += (i == 0 ? "" : " ") + bus_ids[r][i];
  }
  return labels;
}

std::string describe_stragglers(const std::vector<RankHeartbeat>& ranks, const std::vector<std::string>& hosts,
                                std::uint64_t my_step, std::chrono::steady_clock::time_point now,
                                std::chrono::nanoseconds silence) {
  std::string silent, behind;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankHeartbeat& h = ranks[r];
    const std::string who = fmt::format("rank {} (host {})", r, r < hosts.size() ? hosts[r] : "?");
    if (!h.heard) {
      silent += (silent.empty() ? "" : ", ") + who + " never reported";
    } else if (now - h.when > silence) {
      silent += (silent.empty() ? "" : ", ") + who + " silent for " +
                seconds(std::chrono::duration_cast<std::chrono::nanoseconds>(now - h.when)) + " s, last in " +
                h.step_name;
    } else if (h.step < my_step) {
      behind += (behind.empty() ? "" : ", ") + who + " still in " + h.step_name;
    }
  }
  if (!silent.empty()) return "not responding: " + silent + (behind.empty() ? "" : "; behind: " + behind);
  if (!behind.empty()) return "behind: " + behind;
  return "every rank is alive and in this step: the operation itself is stuck (network, driver or library)";
}

}  // namespace commbench
