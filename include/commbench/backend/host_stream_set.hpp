// Streams for a backend whose operations run on the host (MPI): each stream is a queue of
// items (operations started through Backend::start or PeerExchange::start, compute tasks
// on the HostComputeStandIn's thread, event records and waits). Nothing runs behind the
// caller's back: every call of enqueue, query and synchronize sweeps the queues once or
// until done, starting each head item whose predecessors completed and testing the
// running ones. Testing is what drives MPI's progress, so a caller that overlaps its own
// work must call query() now and then, as it would call MPI_Test.
//
// An event's time is when a sweep found everything before it complete: later than the
// true end by at most one sweep's polling delay.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commbench/backend/host_compute.hpp"
#include "commbench/backend/stream_set.hpp"

namespace commbench {

class HostStreamSet final : public StreamSet {
 public:
  // `backend` starts the collectives; it must outlive this set.
  explicit HostStreamSet(Backend& backend);
  // Waits for items still running unless an exception is unwinding (peers may be gone).
  ~HostStreamSet() override;

  void enqueue(std::string_view stream, const OpCase& c, Buffers& buffers) override;
  void enqueue(std::string_view stream, Backend& over, const OpCase& c, Buffers& buffers) override;
  void enqueue(std::string_view stream, PeerExchange& exchange) override;
  void enqueue_compute(std::string_view stream, double seconds) override;
  StreamEvent record(std::string_view stream) override;
  void wait(std::string_view stream, StreamEvent event) override;
  bool query(StreamEvent event) override;
  void synchronize(std::string_view stream) override;
  void synchronize_all() override;
  double elapsed_seconds(StreamEvent from, StreamEvent to) override;
  void forget_events() override;
  ComputeStandIn& compute() override { return compute_; }

 private:
  using Clock = std::chrono::steady_clock;
  enum class ItemKind { collective, peer_round, compute, record, wait };
  // What starting an item needs, held in the item itself: a schedule enqueues thousands
  // of small collectives, and a heap-allocated closure per item showed in their cost.
  struct Item {
    ItemKind kind = ItemKind::collective;
    Backend* over = nullptr;                     // collective
    OpCase op_case;                              // collective
    Buffers* buffers = nullptr;                  // collective
    PeerExchange* exchange = nullptr;            // peer_round
    double compute_request = 0;                  // compute: the corrected request
    std::optional<std::uint64_t> communication;  // collective, peer_round: place in the start order
    std::unique_ptr<PendingOperation> running;   // once started
    std::size_t event = 0;                       // record, wait
  };
  using Queue = std::deque<Item>;

  Queue& queue(std::string_view stream);
  void enqueue_operation(std::string_view stream, Item item);
  std::unique_ptr<PendingOperation> start(Item& item);
  // Advances `queue` as far as it can.
  void advance(Queue& queue);
  // One sweep over every queue. Draining never stalls for good: an event exists before
  // any wait on it, and communication starts in enqueue order, so the earliest-enqueued
  // unfinished item never waits for a later one.
  void sweep();
  void drain_until(const std::function<bool()>& done);
  const Clock::time_point& completed_at(StreamEvent event) const;

  Backend& backend_;
  HostComputeStandIn compute_;
  std::map<std::string, Queue, std::less<>> streams_;  // after compute_: items go first
  // The queues of streams_ in creation order: a sweep (several per item) walks this
  // rather than the map's nodes. Map nodes never move, so the pointers stay valid.
  std::vector<Queue*> sweep_order_;
  std::vector<std::optional<Clock::time_point>> event_times_;
  std::uint64_t communications_enqueued_ = 0;
  std::uint64_t communications_started_ = 0;
};

}  // namespace commbench
