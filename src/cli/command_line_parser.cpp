#include "command_line_parser.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/report/output_file.hpp"

namespace commbench {

namespace {

std::string first_line(const std::string& message) { return message.substr(0, message.find('\n')); }

// CLI11's "--iters: At Most 1 required but received 2" said as the other errors say things.
std::string in_our_words(const std::string& message) {
  constexpr std::string_view kTwice = ": At Most 1 required but received ";
  const auto at = message.find(kTwice);
  if (at == std::string::npos) return message;
  return fmt::format("{}: given {} times; give it once", message.substr(0, at), message.substr(at + kTwice.size()));
}

// The first argument CLI11 could not place that looks like a flag ("--max-byte" or
// "--max-byte=1M"), in the order the user typed, with the nearest flag the command has:
// "unknown flag --max-byte (did you mean --max-bytes?)". Empty when every extra is a value.
std::string unknown_flag_message(const CLI::App& app, const std::vector<std::string>& extras, int argc,
                                 const char* const* argv) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument.size() < 2 || argument.front() != '-' || std::isdigit(static_cast<unsigned char>(argument[1])))
      continue;
    const std::string_view flag = argument.substr(0, argument.find('='));
    const auto is_extra = [&](const std::string& extra) { return extra == argument || extra == flag; };
    if (std::none_of(extras.begin(), extras.end(), is_extra)) continue;
    return fmt::format("unknown flag {}{}", flag, detail::did_you_mean(flag, candidates));
  }
  return {};
}

CommandLineRequest parsed_request(CLI::App& app, int argc, const char* const* argv, const CLI::Option& version_flag) {
  // CLI11 converts values before it looks at --help, so a bad value next to --help or
  // --version is forgiven here, once it is known which was asked for.
  const auto asked = [&]() -> std::optional<CommandLineRequest> {
    if (app.get_help_ptr()->count() > 0) return CommandLineRequest::help;
    if (version_flag.count() > 0) return CommandLineRequest::version;
    return std::nullopt;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return CommandLineRequest::help;
  } catch (const CLI::ExtrasError& e) {
    const std::string unknown = unknown_flag_message(app, app.remaining(), argc, argv);
    if (unknown.empty()) throw UsageError(first_line(e.what()) + " (see --help)");
    throw UsageError(unknown + " (see --help)");
  } catch (const CLI::ParseError& e) {
    throw UsageError(in_our_words(first_line(e.what())) + " (see --help)");
  } catch (const UsageError&) {
    if (const auto request = asked()) return *request;
    throw;
  }
  return asked().value_or(CommandLineRequest::run);
}

}  // namespace

std::string flag_display_name(const std::string& names) {
  std::vector<std::string> each;
  for (std::size_t start = 0; start <= names.size();) {
    const std::size_t end = std::min(names.find(',', start), names.size());
    std::string name = names.substr(start, end - start);
    name.erase(0, name.find_first_not_of(" !"));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) each.push_back(name);
    start = end + 1;
  }
  if (each.empty()) return names;
  const bool short_first = each.front().size() == 2 && each.front()[0] == '-';
  const auto long_name = std::find_if(each.begin(), each.end(), [](const std::string& n) { return n.starts_with("--"); });
  if (short_first && long_name != each.end()) return fmt::format("{}/{}", each.front(), *long_name);
  return each.front();
}

CLI::Option* add_zero_or_one_switch(CLI::App& app, const std::string& names, bool& target,
                                    const std::string& description) {
  const std::string flag = flag_display_name(names);
  // default_str is what a bare switch means; the option text shows the accepted values.
  return add_parsed_option(app, names, target, parse_zero_or_one,
                           fmt::format("{}: 0 or 1; a bare {} means 1 [default: {}]", description,
                                       flag.substr(0, flag.find('/')), target ? "1" : "0"),
                           "")
      ->expected(0, 1)
      ->default_str("1")
      ->option_text("[0|1]");
}

CommandLineOutcome parse_command_line(CLI::App& app, int argc, const char* const* argv, const std::string& program) {
  const CLI::Option* version_flag = app.add_flag("-V,--version")->description("Print the version and exit");
  CommandLineOutcome outcome;
  outcome.request = parsed_request(app, argc, argv, *version_flag);
  if (outcome.request == CommandLineRequest::help) outcome.text = app.help();
  if (outcome.request == CommandLineRequest::version)
    outcome.text = fmt::format("{} {} (commit {})", program, version(), git_commit());
  return outcome;
}

std::string non_empty_file_name(const std::string& text, const char* flag) {
  if (text.empty()) throw UsageError(fmt::format("{}: empty file name", flag));
  return text;
}

}  // namespace commbench
