#include "commbench/backend/host_stream_set.hpp"

#include <exception>

#include "commbench/backend/peer_exchange.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

HostStreamSet::HostStreamSet(Backend& backend) : backend_(backend) {}

HostStreamSet::~HostStreamSet() {
  if (std::uncaught_exceptions() > 0) return;
  try {
    synchronize_all();
  } catch (...) {
    // A destructor must not throw; the error was the caller's to see in synchronize.
  }
}

HostStreamSet::Queue& HostStreamSet::queue(std::string_view stream) {
  auto found = streams_.find(stream);
  if (found == streams_.end()) found = streams_.emplace(std::string(stream), Queue{}).first;
  return found->second;
}

void HostStreamSet::enqueue_operation(std::string_view stream, Starter starter, bool communicates) {
  Item item;
  item.starter = std::move(starter);
  if (communicates) item.communication = communications_enqueued_++;
  queue(stream).push_back(std::move(item));
  sweep();  // start it now if it is first in line, as a launch would
}

void HostStreamSet::enqueue(std::string_view stream, const OpCase& c, Buffers& buffers) {
  enqueue_operation(
      stream, [this, c, &buffers] { return backend_.start(c, buffers); }, true);
}

void HostStreamSet::enqueue(std::string_view stream, Backend& over, const OpCase& c, Buffers& buffers) {
  enqueue_operation(
      stream, [&over, c, &buffers] { return over.start(c, buffers); }, true);
}

void HostStreamSet::enqueue(std::string_view stream, PeerExchange& exchange) {
  enqueue_operation(
      stream, [&exchange] { return exchange.start(); }, true);
}

void HostStreamSet::enqueue_compute(std::string_view stream, double seconds) {
  const double request = compute_.corrected_request(seconds);
  enqueue_operation(
      stream, [this, request] { return compute_.start(request); }, false);
}

StreamEvent HostStreamSet::record(std::string_view stream) {
  const StreamEvent event{event_times_.size()};
  event_times_.emplace_back();
  Item item;
  item.kind = ItemKind::record;
  item.event = event.id;
  queue(stream).push_back(std::move(item));
  sweep();  // an empty stream's event completes at once
  return event;
}

void HostStreamSet::wait(std::string_view stream, StreamEvent event) {
  if (event.id >= event_times_.size())
    throw UsageError("wait: event " + std::to_string(event.id) + " was never recorded");
  Item item;
  item.kind = ItemKind::wait;
  item.event = event.id;
  queue(stream).push_back(std::move(item));
}

void HostStreamSet::advance(Queue& queue) {
  while (!queue.empty()) {
    Item& head = queue.front();
    if (head.kind == ItemKind::record) {
      event_times_[head.event] = Clock::now();
    } else if (head.kind == ItemKind::wait) {
      if (!event_times_[head.event]) return;
    } else {
      if (!head.running) {
        if (head.communication && *head.communication != communications_started_) return;
        head.running = head.starter();
        if (head.communication) ++communications_started_;
      }
      if (!head.running->test()) return;
    }
    queue.pop_front();
  }
}

void HostStreamSet::sweep() {
  for (auto& [name, queue] : streams_) advance(queue);
}

void HostStreamSet::drain_until(const std::function<bool()>& done) {
  // Testing without pause, as MPI_Wait does: a yield would hand the core to the compute
  // thread for a whole scheduler slice (EEVDF moves a yielding thread's deadline back),
  // stalling MPI progress and seeing ends milliseconds late.
  sweep();
  while (!done()) sweep();
}

bool HostStreamSet::query(StreamEvent event) {
  if (event.id >= event_times_.size())
    throw UsageError("query: event " + std::to_string(event.id) + " was never recorded");
  sweep();
  return event_times_[event.id].has_value();
}

void HostStreamSet::synchronize(std::string_view stream) {
  Queue& target = queue(stream);
  drain_until([&target] { return target.empty(); });
}

void HostStreamSet::synchronize_all() {
  drain_until([this] {
    for (const auto& [name, queue] : streams_)
      if (!queue.empty()) return false;
    return true;
  });
}

const HostStreamSet::Clock::time_point& HostStreamSet::completed_at(StreamEvent event) const {
  if (event.id >= event_times_.size() || !event_times_[event.id])
    throw UsageError("elapsed_seconds: event " + std::to_string(event.id) + " has not completed");
  return *event_times_[event.id];
}

double HostStreamSet::elapsed_seconds(StreamEvent from, StreamEvent to) {
  return std::chrono::duration<double>(completed_at(to) - completed_at(from)).count();
}

}  // namespace commbench
