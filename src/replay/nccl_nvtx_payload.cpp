#include "nccl_nvtx_payload.hpp"

namespace commbench {

namespace {

// The entry names NCCL gives its payloads' members (its nvtx_payload_schemas.h).
constexpr std::string_view kCommunicator = "NCCL communicator ID";
constexpr std::string_view kMessageBytes = "Message size [bytes]";
constexpr std::string_view kRanks = "No. of ranks";

// A payload of more structs than this is no NCCL range's (each has one).
constexpr std::uint64_t kMostPayloads = 16;

// The width of the NVTX payload entry types NCCL uses for these members; 0 for others.
std::size_t width_of(int type) {
  switch (type) {
    case 5:   // INT
    case 6:   // UINT
    case 15:  // INT32
    case 16:  // UINT32
      return 4;
    case 7:   // LONG
    case 8:   // ULONG
    case 9:   // LONGLONG
    case 10:  // ULONGLONG
    case 17:  // INT64
    case 18:  // UINT64
    case 22:  // SIZE
      return 8;
    default: return 0;
  }
}

// x86-64 and AArch64, where NCCL runs, store little-endian; read byte by byte either way.
std::uint64_t little_endian(std::string_view bytes, std::size_t at, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i)
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

// A member of `payload`, when its field fits inside it.
std::optional<std::uint64_t> member(std::string_view payload, const std::optional<NcclPayloadSchemas::Field>& field) {
  if (!field) return std::nullopt;
  const std::size_t width = width_of(field->type);
  if (width == 0 || field->offset > payload.size() || payload.size() - field->offset < width) return std::nullopt;
  const std::uint64_t value = little_endian(payload, field->offset, width);
  // A signed 32-bit member (the rank count) read back as a signed number.
  if (width == 4 && (field->type == 5 || field->type == 15))
    return static_cast<std::uint64_t>(
        static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(value))));
  return value;
}

}  // namespace

NcclPayloadSchemas::NcclPayloadSchemas(const SqliteDatabase& db) {
  // A table of another layout (another nsys) leaves the payloads unread, not the report.
  for (const char* column : {"domainId", "schemaId", "idx", "type", "name", "offset"})
    if (!db.has_column("NVTX_PAYLOAD_SCHEMA_ENTRIES", column)) return;
  // The first entry's offset is stored as NULL: it is 0. Another entry without one would
  // need the struct's alignment rules to place: it is left out.
  db.each_row("SELECT domainId, schemaId, idx, type, name, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES",
              [&](const SqliteDatabase::Row& row) {
                if (row.is_null(5) && row.integer(2) != 0) return;
                const Field field{row.is_null(5) ? 0 : static_cast<std::uint64_t>(row.integer(5)),
                                  static_cast<int>(row.integer(3))};
                Schema& schema = schemas_[{row.integer(0), static_cast<std::uint64_t>(row.integer(1))}];
                const std::string name = row.text(4);
                if (name == kCommunicator) schema.communicator = field;
                if (name == kMessageBytes) schema.message_bytes = field;
                if (name == kRanks) schema.ranks = field;
              });
}

std::optional<NcclRangePayload> NcclPayloadSchemas::decode(std::int64_t domain, std::string_view blob) const {
  constexpr std::size_t kWord = 8;
  if (blob.size() < kWord) return std::nullopt;
  const std::uint64_t payloads = little_endian(blob, 0, kWord);
  if (payloads == 0 || payloads > kMostPayloads || blob.size() < kWord + payloads * 3 * kWord) return std::nullopt;
  for (std::uint64_t i = 0; i < payloads; ++i) {
    const std::size_t header = kWord + static_cast<std::size_t>(i) * 3 * kWord;
    const std::uint64_t schema_id = little_endian(blob, header, kWord);
    const std::uint64_t size = little_endian(blob, header + kWord, kWord);
    const std::uint64_t offset = little_endian(blob, header + 2 * kWord, kWord);
    if (offset > blob.size() || blob.size() - offset < size) return std::nullopt;
    const auto found = schemas_.find({domain, schema_id});
    if (found == schemas_.end()) continue;
    const std::string_view payload = blob.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
    NcclRangePayload decoded;
    decoded.communicator = member(payload, found->second.communicator);
    decoded.message_bytes = member(payload, found->second.message_bytes);
    if (const std::optional<std::uint64_t> ranks = member(payload, found->second.ranks)) {
      const auto signed_ranks = static_cast<std::int64_t>(*ranks);
      if (signed_ranks > 0 && signed_ranks <= (1 << 24)) decoded.ranks = static_cast<int>(signed_ranks);
    }
    return decoded;
  }
  return std::nullopt;
}

}  // namespace commbench
