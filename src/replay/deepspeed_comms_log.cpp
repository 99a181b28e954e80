#include "commbench/replay/deepspeed_comms_log.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "trace_input.hpp"

namespace commbench {

namespace {

constexpr std::string_view kSummaryHeader = "Comm. Op";
constexpr std::string_view kStragglerColumn = "Total straggler(ms)";
constexpr std::string_view kVerboseStart = "comm op: ";
constexpr std::string_view kCallerMark = " | [Caller Func: ";

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r')) ++at;
    const std::size_t start = at;
    while (at < text.size() && text[at] != ' ' && text[at] != '\t' && text[at] != '\r') ++at;
    if (at > start) words.push_back(text.substr(start, at - start));
  }
  return words;
}

std::optional<double> number_of(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// DeepSpeed's convert_size: "0B", or round(bytes / 1024^i, 2) and the unit.
std::optional<std::uint64_t> bytes_of(std::string_view value, std::string_view unit) {
  static const std::map<std::string_view, double> kUnits{
      {"B", 1.0}, {"KB", 1024.0}, {"MB", 1048576.0}, {"GB", 1073741824.0}, {"TB", 1099511627776.0}};
  const auto scale = kUnits.find(unit);
  const std::optional<double> number = number_of(value);
  if (scale == kUnits.end() || !number || *number < 0) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(*number * scale->second));
}

void split_caller(std::string_view text, DeepSpeedLogRow& row) {
  const std::size_t mark = text.find(kCallerMark);
  row.name = std::string(trimmed(text.substr(0, mark)));
  if (mark == std::string_view::npos) return;
  std::string_view caller = text.substr(mark + kCallerMark.size());
  if (!caller.empty() && caller.back() == ']') caller.remove_suffix(1);
  row.caller = std::string(trimmed(caller));
}

struct Line {
  std::string_view text;
  std::uint64_t number = 0;  // 1-based
  std::uint64_t offset = 0;  // of its first byte
  bool last = false;         // the file's last line, with no newline after it
};

// One table that log_summary prints: the header, then an op name line and a line per
// size under it. The header's place in its line is where every row's text starts, so a
// prefix that srun --label or a launcher puts before each line is passed over.
class SummaryTable {
 public:
  SummaryTable(const std::string& path, std::size_t column, bool straggler)
      : path_(path), column_(column), straggler_(straggler) {}

  // False when the line is not part of the table (the table has ended).
  bool add(const Line& line) {
    if (line.text.size() <= column_) return false;
    const std::string_view text = line.text.substr(column_);
    if (text.front() != ' ') {
      DeepSpeedLogRow row;
      split_caller(trimmed(text), row);
      if (!is_op_name(row.name)) return false;
      current_ = row;
      return true;
    }
    return current_ && add_size_row(words_of(text), line);
  }

  const std::vector<DeepSpeedLogRow>& rows() const { return rows_; }
  bool straggler() const { return straggler_; }

 private:
  static bool is_op_name(std::string_view name) {
    if (name.empty()) return false;
    for (const char c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
    return true;
  }

  // False when the line is no row (the table has ended); UsageError when the file ends in
  // the middle of a row.
  bool add_size_row(const std::vector<std::string_view>& words, const Line& line) {
    // "0B" is one word; any other size is a number and a unit.
    const std::size_t size_words = (!words.empty() && words[0] == "0B") ? 1 : 2;
    DeepSpeedLogRow row = *current_;
    std::optional<std::uint64_t> bytes = 0;
    if (size_words == 2 && words.size() >= 2) bytes = bytes_of(words[0], words[1]);
    std::vector<double> numbers;
    for (std::size_t i = size_words + 1; i < words.size(); ++i)
      if (const std::optional<double> number = number_of(words[i])) numbers.push_back(*number);
    const std::optional<double> count = words.size() > size_words ? number_of(words[size_words]) : std::nullopt;
    if (words.size() != size_words + 5 || !bytes || !count || *count < 1 || numbers.size() != 4) {
      if (!line.last) return false;
      throw UsageError(fmt::format("{}: line {} (byte offset {}): the file ends inside a log_summary row (a cut log?)",
                                   path_, line.number, line.offset));
    }
    row.logged_bytes = *bytes;
    row.count = static_cast<std::uint64_t>(*count);
    if (straggler_) {
      // Total comm lat (the fastest rank's), total straggler, then their trimmed means.
      row.fastest_total_ms = numbers[0];
      row.straggler_total_ms = numbers[1];
    } else {
      // Total latency, trimmed mean latency, algbw, busbw.
      row.total_ms = numbers[0];
      row.logged_busbw_gbit = numbers[3];
    }
    rows_.push_back(row);
    return true;
  }

  std::string path_;
  std::size_t column_;
  bool straggler_;
  std::optional<DeepSpeedLogRow> current_;
  std::vector<DeepSpeedLogRow> rows_;
};

// "comm op: NAME[ | [Caller Func: F]] | time (ms): T | msg size: V U | algbw (Gbps): A | busbw (Gbps): B"
std::optional<DeepSpeedLogRow> verbose_call(std::string_view text) {
  const std::size_t start = text.find(kVerboseStart);
  if (start == std::string_view::npos) return std::nullopt;
  text.remove_prefix(start + kVerboseStart.size());
  const std::size_t time_at = text.find(" | time (ms): ");
  const std::size_t size_at = text.find(" | msg size: ");
  const std::size_t algbw_at = text.find(" | algbw (Gbps): ");
  if (time_at == std::string_view::npos || size_at == std::string_view::npos || algbw_at == std::string_view::npos ||
      !(time_at < size_at && size_at < algbw_at))
    return std::nullopt;
  DeepSpeedLogRow row;
  split_caller(text.substr(0, time_at), row);
  const std::optional<double> ms = number_of(trimmed(text.substr(time_at + 14, size_at - time_at - 14)));
  const std::vector<std::string_view> size = words_of(text.substr(size_at + 13, algbw_at - size_at - 13));
  std::optional<std::uint64_t> bytes;
  if (size.size() == 1 && size[0] == "0B") bytes = 0;
  if (size.size() == 2) bytes = bytes_of(size[0], size[1]);
  if (!ms || !bytes || row.name.empty()) return std::nullopt;
  row.logged_bytes = *bytes;
  row.count = 1;
  row.total_ms = *ms;
  return row;
}

// Verbose calls added up by name, caller and size, in the order each first appears.
void add_verbose_call(std::vector<DeepSpeedLogRow>& rows, const DeepSpeedLogRow& call) {
  for (DeepSpeedLogRow& row : rows)
    if (row.name == call.name && row.caller == call.caller && row.logged_bytes == call.logged_bytes) {
      ++row.count;
      row.total_ms += call.total_ms;
      return;
    }
  rows.push_back(call);
}

std::string timer_name(const DeepSpeedLogRow& call) {
  return call.caller.empty() ? call.name : call.name + "|" + call.caller;
}

// Whether the logged times are running totals: DeepSpeed reads an operation's timer
// without resetting it (`elapsed(reset=False)`), so each call logs the time of every call
// of that name since the timer started. Taken as such when every later call of a name
// logs more than the one before, over at least three such pairs; real per-call times
// are not that orderly.
bool logs_running_totals(const std::vector<DeepSpeedLogRow>& calls) {
  std::map<std::string, double> previous;
  std::size_t rising = 0;
  for (const DeepSpeedLogRow& call : calls) {
    const auto [at, first] = previous.emplace(timer_name(call), call.total_ms);
    if (first) continue;
    if (call.total_ms <= at->second) return false;
    ++rising;
    at->second = call.total_ms;
  }
  return rising >= 3;
}

// Each call's own time from running totals: the growth over the name's previous call
// (the first call of a name keeps what it logged, which may hold calls before the log).
void undo_running_totals(std::vector<DeepSpeedLogRow>& calls) {
  std::map<std::string, double> previous;
  for (DeepSpeedLogRow& call : calls) {
    const auto [at, first] = previous.emplace(timer_name(call), call.total_ms);
    if (first) continue;
    const double total = call.total_ms;
    call.total_ms = total - at->second;
    at->second = total;
  }
}

// The straggler table's figures joined to the summary's rows of the same calls. DeepSpeed
// logs the all_reduces of its own straggler analysis while it prints the table, so the
// table can count more all_reduce calls than the summary: those rows are not joined.
std::vector<std::string> join_straggler(std::vector<DeepSpeedLogRow>& rows,
                                        const std::vector<DeepSpeedLogRow>& straggler) {
  std::vector<std::string> unjoined;
  for (DeepSpeedLogRow& row : rows)
    for (const DeepSpeedLogRow& s : straggler) {
      if (s.name != row.name || s.caller != row.caller || s.logged_bytes != row.logged_bytes) continue;
      if (s.count != row.count) {
        unjoined.push_back(fmt::format("{} of {} B ({} call(s) in the summary, {} in the straggler table)", row.name,
                                       row.logged_bytes, row.count, s.count));
        continue;
      }
      row.fastest_total_ms = s.fastest_total_ms;
      row.straggler_total_ms = s.straggler_total_ms;
    }
  return unjoined;
}

}  // namespace

DeepSpeedCommsLog read_deepspeed_comms_log(const std::string& path) {
  TraceInput input(path);
  DeepSpeedCommsLog log;
  log.path = path;
  std::optional<SummaryTable> table;
  std::vector<DeepSpeedLogRow> summary, straggler, calls;
  const auto close_table = [&] {
    if (!table) return;
    if (table->straggler()) {
      straggler = table->rows();
    } else {
      summary = table->rows();
      straggler.clear();  // a straggler table belongs to the summary before it
      ++log.summaries;
    }
    table.reset();
  };
  std::string pending;
  std::vector<char> buffer(1 << 16);
  Line line;
  std::uint64_t consumed = 0;
  const auto take_line = [&](std::string_view text, bool last) {
    line.text = text;
    line.last = last;
    ++line.number;
    line.offset = consumed;
    consumed += text.size() + 1;
    if (table && table->add(line)) return;
    close_table();
    if (const std::size_t header = text.find(kSummaryHeader);
        header != std::string_view::npos && text.find("Message Size", header) != std::string_view::npos) {
      table.emplace(path, header, text.find(kStragglerColumn) != std::string_view::npos);
      return;
    }
    if (std::optional<DeepSpeedLogRow> call = verbose_call(text)) {
      ++log.verbose_calls;
      calls.push_back(*call);
    }
  };
  for (std::size_t got; (got = input.read(buffer.data(), buffer.size())) > 0;) {
    pending.append(buffer.data(), got);
    std::size_t start = 0;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      take_line(std::string_view(pending).substr(start, end - start), false);
    pending.erase(0, start);
  }
  if (!input.error().empty())
    throw UsageError(fmt::format("{}: cannot read past byte {} ({})", path, input.offset(), input.error()));
  if (!pending.empty()) take_line(pending, true);
  close_table();
  if (log.summaries > 0) {
    log.source = "log_summary()";
    log.rows = summary;
    log.has_straggler_table = !straggler.empty();
    log.unjoined_straggler_rows = join_straggler(log.rows, straggler);
  } else if (log.verbose_calls > 0) {
    log.source = "verbose lines";
    log.running_totals = logs_running_totals(calls);
    if (log.running_totals) undo_running_totals(calls);
    for (const DeepSpeedLogRow& call : calls) add_verbose_call(log.rows, call);
    log.calls = std::move(calls);
  } else {
    throw UsageError(
        fmt::format("{}: neither a DeepSpeed log_summary() table nor a verbose comms_logger line in it "
                    "(and not a .json trace)",
                    path));
  }
  return log;
}

}  // namespace commbench
