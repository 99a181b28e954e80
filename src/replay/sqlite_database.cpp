#include "sqlite_database.hpp"

#if COMMBENCH_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "trace_input.hpp"

namespace commbench {

#if COMMBENCH_HAVE_SQLITE

namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // and its NUL: the header's first 16 bytes

// A file: URI opened immutable: an export is finished, so SQLite takes no locks (which
// network file systems may refuse) and writes no journal beside it.
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || std::strchr("/-._~", c) != nullptr)
      uri += c;
    else
      uri += fmt::format("%{:02X}", byte);
  }
  return uri + "?immutable=1";
}

void open_immutable(const std::string& path, const std::string& shown_path, sqlite3*& db) {
  if (sqlite3_open_v2(immutable_uri(path).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK)
    throw UsageError(fmt::format("{}: cannot open as an SQLite database ({})", shown_path, sqlite3_errmsg(db)));
}

// A gzipped database inflated into a temporary file, so that memory stays that of SQLite's
// page cache however large the report. The file is unlinked once open: nothing is left
// behind, whatever happens next.
void open_inflated(const std::string& path, sqlite3*& db) {
  const char* base = std::getenv("TMPDIR");
  std::string inflated = fmt::format("{}/commbench-report-XXXXXX", base != nullptr && *base != '\0' ? base : "/tmp");
  const int fd = mkstemp(inflated.data());
  if (fd < 0)
    throw UsageError(fmt::format("{}: no temporary file to inflate it into ({})", path, std::strerror(errno)));
  struct Unlink {
    std::string path;
    int fd;
    ~Unlink() {
      close(fd);
      unlink(path.c_str());
    }
  } unlink_at_exit{inflated, fd};
  TraceInput input(path);
  std::vector<char> chunk(1 << 20);
  for (std::size_t got; (got = input.read(chunk.data(), chunk.size())) > 0;)
    for (std::size_t written = 0; written < got;) {
      const ssize_t n = write(fd, chunk.data() + written, got - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw UsageError(fmt::format("{}: cannot inflate it into {} ({})", path, inflated, std::strerror(errno)));
      written += static_cast<std::size_t>(n);
    }
  if (!input.error().empty())
    throw UsageError(fmt::format("{}: cannot read at byte {} of its text ({})", path, input.offset(), input.error()));
  open_immutable(inflated, path, db);
  // SQLite opens lazily: the first read holds the file open before it is unlinked.
  sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
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
      open_inflated(path, db_);
    } else {
      open_immutable(path, path, db_);
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

std::string SqliteDatabase::Row::bytes(int column) const {
  const void* data = sqlite3_column_blob(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  return data == nullptr || size <= 0 ? std::string() : std::string(static_cast<const char*>(data), size);
}

bool SqliteDatabase::has_column(const std::string& table, const std::string& column) const {
  bool found = false;
  if (!has_table(table)) return false;
  each_row(fmt::format("SELECT name FROM pragma_table_info('{}')", table),
           [&](const Row& row) { found = found || row.text(0) == column; });
  return found;
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
std::string SqliteDatabase::Row::bytes(int) const { return ""; }
bool SqliteDatabase::has_table(const std::string&) const { return false; }
bool SqliteDatabase::has_column(const std::string&, const std::string&) const { return false; }
void SqliteDatabase::each_row(const std::string&, const std::function<void(const Row&)>&) const {}
std::optional<std::string> SqliteDatabase::first_text(const std::string&) const { return std::nullopt; }

#endif

}  // namespace commbench
