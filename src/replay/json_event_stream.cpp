#include "json_event_stream.hpp"

#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "trace_input.hpp"

namespace commbench {

namespace {

using nlohmann::json;

// Builds one JSON value from SAX events; pointers on the stack stay valid because only the
// innermost open container grows.
class ValueBuilder {
 public:
  bool active() const { return !stack_.empty(); }
  void open(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      stack_.push_back(&root_);
      return;
    }
    json& top = *stack_.back();
    if (top.is_object()) {
      stack_.push_back(&(top[key_] = std::move(value)));
    } else {
      top.push_back(std::move(value));
      stack_.push_back(&top.back());
    }
  }
  // True when the outermost value is complete.
  bool close() {
    stack_.pop_back();
    return stack_.empty();
  }
  void key(std::string key) { key_ = std::move(key); }
  void value(json value) {
    json& top = *stack_.back();
    if (top.is_object())
      top[key_] = std::move(value);
    else
      top.push_back(std::move(value));
  }
  json take() { return std::move(root_); }

 private:
  json root_;
  std::vector<json*> stack_;
  std::string key_;
};

class TraceSax final : public nlohmann::json_sax<json> {
 public:
  TraceSax(StreamedTrace& trace, const std::function<void(const json&)>& on_event)
      : trace_(trace), on_event_(on_event) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool value) override { return scalar(value); }
  bool number_integer(number_integer_t value) override { return scalar(value); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(value); }
  bool number_float(number_float_t value, const string_t&) override { return scalar(value); }
  bool string(string_t& value) override { return scalar(std::move(value)); }
  bool binary(binary_t&) override { return true; }
  bool key(string_t& key) override {
    if (builder_.active())
      builder_.key(std::move(key));
    else if (depth_ == 1)
      member_ = std::move(key);
    return true;
  }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    position_ = position;
    message_ = e.what();
    return false;
  }

  std::size_t position() const { return position_; }
  const std::string& message() const { return message_; }
  bool top_is_object() const { return top_is_object_; }

 private:
  bool scalar(json value) {
    if (builder_.active())
      builder_.value(std::move(value));
    else if (depth_ == 1)
      trace_.members[member_] = std::move(value);
    return true;
  }
  bool open(json value) {
    if (depth_ == 0) {
      top_is_object_ = value.is_object();
      ++depth_;
      return top_is_object_;
    }
    if (!builder_.active() && depth_ == 1 && member_ == "traceEvents" && value.is_array()) {
      trace_.had_events = true;
      in_events_ = true;
    } else {
      builder_.open(std::move(value));
    }
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    if (in_events_ && depth_ == 1) {
      in_events_ = false;
      return true;
    }
    if (builder_.active() && builder_.close()) {
      if (in_events_) {
        ++trace_.events;
        on_event_(builder_.take());
      } else {
        trace_.members[member_] = builder_.take();
      }
    }
    return true;
  }

  StreamedTrace& trace_;
  const std::function<void(const json&)>& on_event_;
  ValueBuilder builder_;
  std::string member_;
  int depth_ = 0;
  bool in_events_ = false;
  bool top_is_object_ = false;
  std::size_t position_ = 0;
  std::string message_;
};

}  // namespace

StreamedTrace stream_trace_events(const std::string& path, const std::function<void(const json&)>& on_event) {
  TraceInput input(path);
  StreamedTrace trace;
  TraceSax sax(trace, on_event);
  const bool parsed = json::sax_parse(input.stream(), &sax, nlohmann::detail::input_format_t::json, true);
  if (!input.error().empty())
    throw UsageError(fmt::format("{}: cannot read at byte {} of its text ({})", path, input.offset(), input.error()));
  if (!parsed) {
    if (sax.position() == 0 && sax.message().empty())
      throw UsageError(fmt::format("{}: not a Chrome trace (its JSON is not an object)", path));
    // Nothing after the byte the parser stopped at: the text stops inside a value.
    const bool cut_short = input.stream().peek() == std::char_traits<char>::eof();
    throw UsageError(fmt::format("{}: not a whole JSON trace: {} at byte {}{}", path, cut_short ? "cut short" : "malformed",
                                 sax.position(), input.compressed() ? " of its uncompressed text" : ""));
  }
  return trace;
}

}  // namespace commbench
