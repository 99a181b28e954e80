#include "json_event_stream.hpp"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "trace_input.hpp"

namespace commbench {

namespace {

using nlohmann::json;

// Where the scan is in the document's top-level object.
enum class Place {
  before,
  expect_key,
  in_key,
  expect_colon,
  expect_value,
  in_value,
  after_value,
  in_events,
  in_event,
  done
};

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool is_structural(char c) { return c == '"' || c == '{' || c == '}' || c == '[' || c == ']'; }

class TraceScanner {
 public:
  TraceScanner(const std::string& path, StreamedTrace& trace, const std::function<bool(std::string_view)>& wanted,
               const std::function<void(const json&)>& on_event)
      : path_(path), trace_(trace), wanted_(wanted), on_event_(on_event) {}

  void feed(const char* data, std::size_t size) {
    std::size_t capture_from = 0;
    for (std::size_t i = 0; i < size && !trace_.not_an_object; ++i) {
      // Most of a trace is the inside of events, where only quotes, escapes and brackets
      // change the scan: the bytes between them are skipped in runs.
      if (place_ == Place::in_event && (i = next_in_event(data, i, size)) == size) break;
      step(data, i, capture_from);
    }
    if (capturing_) capture_.append(data + capture_from, size - capture_from);
    offset_ += size;
  }

  void finish() const {
    if (place_ != Place::done && !trace_.not_an_object)
      throw UsageError(fmt::format("{}: not a whole JSON trace: cut short after byte {}", path_, offset_));
  }

 private:
  [[noreturn]] void malformed(std::uint64_t at) const {
    throw UsageError(fmt::format("{}: not a whole JSON trace: malformed at byte {}", path_, at));
  }

  // Tracks strings and brackets inside a value being captured; true when it ends with `c`.
  bool value_ends(char c) {
    if (in_string_) {
      if (escape_)
        escape_ = false;
      else if (c == '\\')
        escape_ = true;
      else if (c == '"')
        in_string_ = false;
      return depth_ == 0 && !in_string_ && c == '"';
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      --depth_;
      return depth_ == 0;
    }
    return false;
  }

  // The first byte at or after `i` that value_ends must see inside an event: in a string a
  // quote or a backslash, outside one a quote or a bracket; `size` when the chunk has none.
  std::size_t next_in_event(const char* data, std::size_t i, std::size_t size) const {
    if (in_string_) {
      if (escape_) return i;
      const void* quote = std::memchr(data + i, '"', size - i);
      const std::size_t stop = quote ? static_cast<std::size_t>(static_cast<const char*>(quote) - data) : size;
      const void* backslash = std::memchr(data + i, '\\', stop - i);
      return backslash ? static_cast<std::size_t>(static_cast<const char*>(backslash) - data) : stop;
    }
    while (i < size && !is_structural(data[i])) ++i;
    return i;
  }

  void start_capture(std::size_t i, std::size_t& capture_from) {
    capturing_ = true;
    capture_.clear();
    capture_from = i;
    capture_start_ = offset_ + i + 1;
  }

  std::string_view end_capture(const char* data, std::size_t end, std::size_t capture_from) {
    capturing_ = false;
    capture_.append(data + capture_from, end - capture_from);
    return capture_;
  }

  json parse_captured(std::string_view text) const {
    try {
      return json::parse(text);
    } catch (const json::parse_error& e) {
      malformed(capture_start_ + (e.byte > 0 ? e.byte - 1 : 0));
    } catch (const json::out_of_range&) {
      // nlohmann refuses a number beyond double's range while parsing, without a position.
      throw UsageError(fmt::format("{}: not a whole JSON trace: a number out of range in the event at byte {}", path_,
                                   capture_start_));
    }
  }

  // One byte of the document; what it means depends on where the scan is.
  void step(const char* data, std::size_t i, std::size_t& capture_from) {
    const char c = data[i];
    const std::uint64_t at = offset_ + i + 1;
    switch (place_) {
      case Place::before: return begin_document(c, at);
      case Place::expect_key:
      case Place::in_key:
      case Place::expect_colon: return read_key(c, at);
      case Place::expect_value: return begin_value(data, i, capture_from);
      case Place::in_value: return read_value(data, i, capture_from);
      case Place::after_value:
      case Place::done: return end_member(c, at);
      case Place::in_events:
      case Place::in_event: return read_events(data, i, capture_from);
    }
  }

  void begin_document(char c, std::uint64_t at) {
    if (c == '{')
      place_ = Place::expect_key;
    else if (c == '[' || c == '"' || c == '-' || c == 't' || c == 'f' || c == 'n' || (c >= '0' && c <= '9'))
      trace_.not_an_object = true;  // JSON, but no trace: the rest is not read
    else if (!is_space(c))
      malformed(at);
  }

  // A member's name, from the quote that opens it to the colon after it.
  void read_key(char c, std::uint64_t at) {
    if (place_ == Place::expect_key) {
      if (c == '"') {
        key_.clear();
        place_ = Place::in_key;
      } else if (c == '}') {
        place_ = Place::done;
      } else if (!is_space(c)) {
        malformed(at);
      }
    } else if (place_ == Place::in_key) {
      if (escape_) {
        escape_ = false;
        key_ += c;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        place_ = Place::expect_colon;
      } else {
        key_ += c;
      }
    } else if (c == ':') {
      place_ = Place::expect_value;
    } else if (!is_space(c)) {
      malformed(at);
    }
  }

  // The first byte of a member's value: traceEvents' array is read event by event, any
  // other value is captured whole.
  void begin_value(const char* data, std::size_t i, std::size_t& capture_from) {
    const char c = data[i];
    if (is_space(c)) return;
    if (key_ == "traceEvents" && c == '[') {
      trace_.had_events = true;
      place_ = Place::in_events;
      return;
    }
    start_capture(i, capture_from);
    place_ = Place::in_value;
    depth_ = 0;
    if (c != '{' && c != '[' && c != '"') {  // a number, true, false or null
      scalar_ = true;
      return;
    }
    scalar_ = false;
    value_ends(c);
  }

  void read_value(const char* data, std::size_t i, std::size_t& capture_from) {
    const char c = data[i];
    if (scalar_) {
      if (c == ',' || c == '}' || is_space(c)) {
        trace_.members[key_] = parse_captured(end_capture(data, i, capture_from));
        place_ = Place::after_value;
        step(data, i, capture_from);
      }
      return;
    }
    if (value_ends(c)) {
      trace_.members[key_] = parse_captured(end_capture(data, i + 1, capture_from));
      place_ = Place::after_value;
    }
  }

  // After a member: another one, the end of the object, or (once it ended) only space.
  void end_member(char c, std::uint64_t at) {
    if (place_ == Place::done) {
      if (!is_space(c)) malformed(at);
    } else if (c == ',') {
      place_ = Place::expect_key;
    } else if (c == '}') {
      place_ = Place::done;
    } else if (!is_space(c)) {
      malformed(at);
    }
  }

  // traceEvents' array: each event is captured whole and handed on when wanted.
  void read_events(const char* data, std::size_t i, std::size_t& capture_from) {
    const char c = data[i];
    if (place_ == Place::in_event) {
      if (value_ends(c)) {
        const std::string_view text = end_capture(data, i + 1, capture_from);
        ++trace_.events;
        if (wanted_(text)) on_event_(parse_captured(text));
        place_ = Place::in_events;
      }
    } else if (c == '{') {
      start_capture(i, capture_from);
      depth_ = 0;
      value_ends(c);
      place_ = Place::in_event;
    } else if (c == ']') {
      place_ = Place::after_value;
    } else if (c != ',' && !is_space(c)) {
      malformed(offset_ + i + 1);
    }
  }

  const std::string& path_;
  StreamedTrace& trace_;
  const std::function<bool(std::string_view)>& wanted_;
  const std::function<void(const json&)>& on_event_;
  Place place_ = Place::before;
  std::string key_;
  std::string capture_;
  std::uint64_t capture_start_ = 0;
  std::uint64_t offset_ = 0;
  int depth_ = 0;
  bool capturing_ = false;
  bool in_string_ = false;
  bool escape_ = false;
  bool scalar_ = false;
};

}  // namespace

StreamedTrace stream_trace_events(const std::string& path, const std::function<bool(std::string_view)>& wanted,
                                  const std::function<void(const json&)>& on_event) {
  TraceInput input(path);
  StreamedTrace trace;
  TraceScanner scanner(path, trace, wanted, on_event);
  std::vector<char> buffer(std::size_t{1} << 20);
  for (;;) {
    const std::size_t got = input.read(buffer.data(), buffer.size());
    if (got == 0) break;
    scanner.feed(buffer.data(), got);
    if (trace.not_an_object) return trace;
  }
  if (!input.error().empty())
    throw UsageError(fmt::format("{}: cannot read at byte {} of its text ({})", path, input.offset(), input.error()));
  scanner.finish();
  return trace;
}

}  // namespace commbench
