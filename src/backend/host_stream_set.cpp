#include "commbench/backend/host_stream_set.hpp"

#include <exception>
#include <stdexcept>

#include <fmt/format.h>

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
  if (found == streams_.end()) {
    found = streams_.emplace(std::string(stream), Queue{}).first;
    sweep_order_.push_back(&found->second);
  }
  return found->second;
}

void HostStreamSet::enqueue_operation(std::string_view stream, Item item) {
  if (item.kind != ItemKind::compute) item.communication = communications_enqueued_++;
  queue(stream).push_back(std::move(item));
  sweep();  // start it now if it is first in line, as a launch would
}

std::unique_ptr<PendingOperation> HostStreamSet::start(Item& item) {
  switch (item.kind) {
    case ItemKind::collective: return item.over->start(item.op_case, *item.buffers);
    case ItemKind::peer_round: return item.exchange->start();
    case ItemKind::compute: return compute_.start(item.compute_request);
    case ItemKind::record:
    case ItemKind::wait: break;
  }
  throw std::logic_error("host streams: a record or wait has nothing to start");
}

void HostStreamSet::enqueue(std::string_view stream, const OpCase& c, Buffers& buffers) {
  enqueue(stream, backend_, c, buffers);
}

void HostStreamSet::enqueue(std::string_view stream, Backend& over, const OpCase& c, Buffers& buffers) {
  Item item;
  item.kind = ItemKind::collective;
  item.over = &over;
  item.op_case = c;
  item.buffers = &buffers;
  enqueue_operation(stream, std::move(item));
}

void HostStreamSet::enqueue(std::string_view stream, PeerExchange& exchange) {
  Item item;
  item.kind = ItemKind::peer_round;
  item.exchange = &exchange;
  enqueue_operation(stream, std::move(item));
}

void HostStreamSet::enqueue_compute(std::string_view stream, double seconds) {
  Item item;
  item.kind = ItemKind::compute;
  item.compute_request = compute_.corrected_request(seconds);
  enqueue_operation(stream, std::move(item));
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
  if (event.id >= event_times_.size()) throw UsageError(fmt::format("wait: event {} was never recorded", event.id));
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
        head.running = start(head);
        if (head.communication) ++communications_started_;
      }
      if (!head.running->test()) return;
    }
    queue.pop_front();
  }
}

void HostStreamSet::sweep() {
  for (Queue* queue : sweep_order_) advance(*queue);
}

void HostStreamSet::drain_until(const std::function<bool()>& done) {
  // Testing without pause, as MPI_Wait does: a yield would hand the core to the compute
  // thread for a whole scheduler slice (EEVDF moves a yielding thread's deadline back),
  // stalling MPI progress and seeing ends milliseconds late.
  sweep();
  while (!done()) sweep();
}

bool HostStreamSet::query(StreamEvent event) {
  if (event.id >= event_times_.size()) throw UsageError(fmt::format("query: event {} was never recorded", event.id));
  sweep();
  return event_times_[event.id].has_value();
}

void HostStreamSet::synchronize(std::string_view stream) {
  Queue& target = queue(stream);
  drain_until([&target] { return target.empty(); });
}

void HostStreamSet::synchronize_all() {
  drain_until([this] {
    for (const Queue* queue : sweep_order_)
      if (!queue->empty()) return false;
    return true;
  });
}

void HostStreamSet::forget_events() {
  for (const Queue* queue : sweep_order_)
    if (!queue->empty()) throw UsageError("forget_events: items are still queued (synchronize first)");
  event_times_.clear();  // keeps its capacity: the next step records without reallocating
}

const HostStreamSet::Clock::time_point& HostStreamSet::completed_at(StreamEvent event) const {
  if (event.id >= event_times_.size() || !event_times_[event.id])
    throw UsageError(fmt::format("elapsed_seconds: event {} has not completed", event.id));
  return *event_times_[event.id];
}

double HostStreamSet::elapsed_seconds(StreamEvent from, StreamEvent to) {
  return std::chrono::duration<double>(completed_at(to) - completed_at(from)).count();
}

}  // namespace commbench
