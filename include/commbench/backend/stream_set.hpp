// Named streams and events: the ordering a training step needs to overlap communication
// with compute ("comm" runs a bucket's allreduce while "compute" runs the next layer).
//
// Semantics, the same on every backend:
// - A stream is made by naming it; what is enqueued on one stream runs in enqueue order,
//   one item after the other. Items on different streams may run at the same time.
// - record(s) returns an event that completes once everything enqueued on s before it
//   has completed. wait(s, e) makes every item enqueued on s afterwards start only after
//   e completed; it does not block the caller.
// - synchronize(s) blocks until everything enqueued on s so far has completed (and
//   surfaces errors: BackendError, with NCCL's asynchronous errors among them).
// - Communication items (collectives, peer rounds) over one communicator must start in
//   the same order on every rank, which MPI and NCCL both require: enqueue them in the
//   same order everywhere. The host backend also starts them in enqueue order across its
//   streams (a stream whose next item is communication waits for earlier-enqueued
//   communication on other streams to have started).
// - Buffers and exchanges given to enqueue must live until the item completed.
// NCCL maps a stream to a cudaStream_t per GPU and an event to a cudaEvent_t; the host
// backend keeps a queue per stream that synchronize(), query() and enqueue drive (see
// host_stream_set.hpp).
#pragma once

#include <cstddef>
#include <string_view>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/compute_standin.hpp"

namespace commbench {

class PeerExchange;

// A point on a stream; valid only with the StreamSet that recorded it.
struct StreamEvent {
  std::size_t id = 0;
};

class StreamSet {
 public:
  virtual ~StreamSet() = default;
  StreamSet() = default;
  StreamSet(const StreamSet&) = delete;
  StreamSet& operator=(const StreamSet&) = delete;

  // One operation of `c` (as Backend::start would run it) on `stream`.
  virtual void enqueue(std::string_view stream, const OpCase& c, Buffers& buffers) = 0;
  // One operation of `c` over `over`'s communicator on `stream`: `over` is the set's own
  // backend or one split from it (Backend::split), and `buffers` were allocated by `over`.
  // One set then orders, with its events, collectives over several sub-communicators (a
  // training step's tensor-, pipeline- and data-parallel groups) and its compute.
  virtual void enqueue(std::string_view stream, Backend& over, const OpCase& c, Buffers& buffers) = 0;
  // One round of `exchange` on `stream`.
  virtual void enqueue(std::string_view stream, PeerExchange& exchange) = 0;
  // The compute stand-in busy for `seconds` on `stream`, with compute()'s calibration
  // applied.
  virtual void enqueue_compute(std::string_view stream, double seconds) = 0;

  virtual StreamEvent record(std::string_view stream) = 0;
  virtual void wait(std::string_view stream, StreamEvent event) = 0;
  // Whether `event` has completed; never blocks.
  virtual bool query(StreamEvent event) = 0;
  virtual void synchronize(std::string_view stream) = 0;
  virtual void synchronize_all() = 0;
  // Seconds from the completion of `from` to that of `to` (negative when `to` completed
  // first). Both must have completed: UsageError otherwise.
  virtual double elapsed_seconds(StreamEvent from, StreamEvent to) = 0;

  // Forgets every event recorded so far; later records may reuse their ids (and on the GPU
  // their cudaEvents). Call once nothing waits on them any more and their times have been
  // read, e.g. between the steps of a schedule that records an event per item: without
  // it the events of a long run pile up (and creating a cudaEvent per record costs host
  // time that a small collective's launch cannot hide). UsageError while items are queued.
  virtual void forget_events() = 0;

  // The stand-in enqueue_compute runs; calibrate it here.
  virtual ComputeStandIn& compute() = 0;
};

}  // namespace commbench
