// NCCL's own NVTX ranges (ncclAllReduce, ncclCommInitRank, ...) carry their arguments as
// NVTX extended payloads: a struct per range, described by a schema NCCL registers once
// (the communicator's hash, "Message size [bytes]", "No. of ranks", ...). An SQLite export
// holds the schemas in NVTX_PAYLOAD_SCHEMA_ENTRIES and each range's struct in
// NVTX_EVENTS.binaryData, the latter only when asked (`nsys export --include-blobs=true`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "sqlite_database.hpp"

namespace commbench {

// What one range's payload says; each member empty when its schema has no such entry.
struct NcclRangePayload {
  std::optional<std::uint64_t> communicator;  // NCCL's hash of the communicator
  // As NCCL writes it: the whole buffer of an all-reduce, broadcast or reduce; one rank's
  // part of an all-gather (what it sends) or a reduce-scatter (what it receives).
  std::optional<std::uint64_t> message_bytes;
  std::optional<int> ranks;  // a communicator's creation: its size
};

class NcclPayloadSchemas {
 public:
  // The schemas of the export; none where it has no NVTX_PAYLOAD_SCHEMA_ENTRIES of the
  // layout nsys 2025.3 writes.
  explicit NcclPayloadSchemas(const SqliteDatabase& db);
  bool empty() const { return schemas_.empty(); }
  // The payload of a range of NVTX domain `domain`, from its binaryData as nsys writes it:
  // a count of payloads (64 bits), then per payload its schema id, size and offset from
  // the blob's start (64 bits each), then the structs. Empty for a blob of another shape
  // or of a schema this export does not describe.
  std::optional<NcclRangePayload> decode(std::int64_t domain, std::string_view blob) const;

  struct Field {
    std::uint64_t offset = 0;
    int type = 0;  // NVTX_PAYLOAD_ENTRY_TYPE_*
  };
  struct Schema {
    std::optional<Field> communicator, message_bytes, ranks;
  };

 private:
  std::map<std::pair<std::int64_t, std::uint64_t>, Schema> schemas_;  // by domain and schema id
};

}  // namespace commbench
