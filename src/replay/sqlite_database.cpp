#include "sqlite_database.hpp"

#if COMMBENCH_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "trace_input.hpp"

namespace commbench {

#if COMMBENCH_HAVE_SQLITE

namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // and its NUL: the header's first 16 bytes

// The whole (inflated) file: sqlite3_deserialize takes ownership of sqlite3_malloc'd bytes.
std::vector<char> inflate(const std::string& path) {
  TraceInput input(path);
  std::vector<char> bytes;
  std::vector<char> chunk(1 << 20);
  for (std::size_t got; (got = input.read(chunk.data(), chunk.size())) > 0;)
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
  if (!input.error().empty())
    throw UsageError(fmt::format("{}: cannot read at byte {} of its text ({})", path, input.offset(), input.error()));
  return bytes;
}

void open_in_memory(const std::string& path, sqlite3*& db) {
  const std::vector<char> bytes = inflate(path);
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    throw UsageError(fmt::format("{}: cannot open an in-memory database ({})", path, sqlite3_errmsg(db)));
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  if (copy == nullptr && !bytes.empty()) throw UsageError(fmt::format("{}: too large to inflate in memory", path));
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  const int code = sqlite3_deserialize(db, "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                                       static_cast<sqlite3_int64>(bytes.size()),
                                       SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (code != SQLITE_OK) throw UsageError(fmt::format("{}: not an SQLite database ({})", path, sqlite3_errstr(code)));
}

}  // namespace

bool looks_like_sqlite(const std::string& path) {
  try {
    TraceInput input(path);
    char head[sizeof(kSqliteMagic)] = {};
    return input.read(head, sizeof(head)) == sizeof(head) && std::memcmp(head, kSqliteMagic, sizeof(head)) == 0;
  } catch (const UsageError&) {
    return false;
  }
}

SqliteDatabase::SqliteDatabase(const std::string& path) : path_(path) {
  bool compressed = false;
  {
    TraceInput input(path);  // UsageError when it cannot be read
    char byte = 0;
    input.read(&byte, 1);
    compressed = input.compressed();
  }
  try {
    if (compressed) {
      open_in_memory(path, db_);
    } else if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      throw UsageError(fmt::format("{}: cannot open as an SQLite database ({})", path, sqlite3_errmsg(db_)));
    }
    // A file that is no database fails only at its first read.
    each_row("SELECT count(*) FROM sqlite_master", [](const Row&) {});
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

bool SqliteDatabase::Row::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

std::int64_t SqliteDatabase::Row::integer(int column) const { return sqlite3_column_int64(statement_, column); }

std::string SqliteDatabase::Row::text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

bool SqliteDatabase::has_table(const std::string& name) const {
  bool found = false;
  each_row(fmt::format("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{}'", name),
           [&](const Row&) { found = true; });
  return found;
}

void SqliteDatabase::each_row(const std::string& sql, const std::function<void(const Row&)>& row) const {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(statement);
    throw UsageError(fmt::format("{}: not the database this reader expects ({})", path_, message));
  }
  int code = SQLITE_OK;
  try {
    while ((code = sqlite3_step(statement)) == SQLITE_ROW) row(Row(statement));
  } catch (...) {
    sqlite3_finalize(statement);
    throw;
  }
  const std::string message = sqlite3_errmsg(db_);
  sqlite3_finalize(statement);
  if (code != SQLITE_DONE) throw UsageError(fmt::format("{}: cannot read the database ({})", path_, message));
}

std::optional<std::string> SqliteDatabase::first_text(const std::string& sql) const {
  std::optional<std::string> value;
  each_row(sql, [&](const Row& row) {
    if (!value && !row.is_null(0)) value = row.text(0);
  });
  return value;
}

#else  // no SQLite in this build

bool looks_like_sqlite(const std::string&) { return true; }

SqliteDatabase::SqliteDatabase(const std::string& path) : path_(path) {
  throw UsageError(fmt::format(
      "{}: this build of commbench has no SQLite (libsqlite3-dev): rebuild it with SQLite to read Nsight Systems "
      "exports",
      path));
}
SqliteDatabase::~SqliteDatabase() = default;
bool SqliteDatabase::Row::is_null(int) const { return true; }
std::int64_t SqliteDatabase::Row::integer(int) const { return 0; }
std::string SqliteDatabase::Row::text(int) const { return ""; }
bool SqliteDatabase::has_table(const std::string&) const { return false; }
void SqliteDatabase::each_row(const std::string&, const std::function<void(const Row&)>&) const {}
std::optional<std::string> SqliteDatabase::first_text(const std::string&) const { return std::nullopt; }

#endif

}  // namespace commbench
