// A read-only SQLite database, as `nsys export --type sqlite` writes one: opened in place,
// or, for a gzip-compressed copy, inflated into an unlinked temporary file. Every error is a UsageError that
// names the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace commbench {

class SqliteDatabase {
 public:
  // UsageError "PATH: ..." when the file cannot be read or is no SQLite database.
  explicit SqliteDatabase(const std::string& path);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  // One row of a query's result, read by column.
  class Row {
   public:
    explicit Row(sqlite3_stmt* statement) : statement_(statement) {}
    bool is_null(int column) const;
    std::int64_t integer(int column) const;
    std::string text(int column) const;
    // The column's bytes as stored (a BLOB's, or a text's); empty for NULL.
    std::string bytes(int column) const;

   private:
    sqlite3_stmt* statement_;
  };

  bool has_table(const std::string& name) const;
  // Whether `table` exists and has a column named `column` (an export's schema grows).
  bool has_column(const std::string& table, const std::string& column) const;
  // Runs `sql` and hands each row to `row`; UsageError naming the file when it fails (a
  // table of another shape than the query expects, a corrupt page).
  void each_row(const std::string& sql, const std::function<void(const Row&)>& row) const;
  // The first column of the first row, when there is one and it is not null.
  std::optional<std::string> first_text(const std::string& sql) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// Whether the file begins as an SQLite database does, plain or gzip-compressed.
bool looks_like_sqlite(const std::string& path);

}  // namespace commbench
