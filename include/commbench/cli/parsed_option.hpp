// Options whose value commbench parses itself, each flag's name written once: the names
// CLI11 knows ("-b,--min-bytes,--minbytes") give the name its messages use
// ("-b/--min-bytes"), and every parser is handed that name with the text, so a message
// cannot name another flag than the one the user typed.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace commbench {

// The name a flag's messages use: the first of `names`, and when that is a short name
// ("-b") the long name after it too, joined by '/' ("-b/--min-bytes"). Names CLI11 reads
// as negations keep their '!' off ("!--no-x" is "--no-x").
std::string flag_display_name(const std::string& names);

// Adds an option that hands its text and its display name to `handle(text, flag)`, with
// `flag` a const char* (valid during the call).
template <typename Handle>
CLI::Option* add_named_option(CLI::App& app, const std::string& names, Handle handle, const std::string& description) {
  return app.add_option_function<std::string>(
      names, [flag = flag_display_name(names), handle](const std::string& text) { handle(text, flag.c_str()); },
      description);
}

// Adds an option whose text `parse(text, flag)` turns into `target`. `value_name` stands
// for the value in the help ("SIZE", "LIST"). The target keeps its value when the flag is
// absent.
template <typename Value, typename Parse>
CLI::Option* add_parsed_option(CLI::App& app, const std::string& names, Value& target, Parse parse,
                               const std::string& description, const std::string& value_name) {
  CLI::Option* option = add_named_option(
      app, names, [&target, parse](const std::string& text, const char* flag) { target = parse(text, flag); },
      description);
  option->type_name(value_name);
  return option;
}

// Adds an option that may be given again and again, one value each time (no value after
// it is read as another): `each(text, flag)` takes every one, in order.
template <typename Each>
CLI::Option* add_repeatable_option(CLI::App& app, const std::string& names, Each each, const std::string& description,
                                   const std::string& value_name) {
  return app
      .add_option_function<std::vector<std::string>>(
          names,
          [flag = flag_display_name(names), each](const std::vector<std::string>& texts) {
            for (const std::string& text : texts) each(text, flag.c_str());
          },
          description)
      ->type_name(value_name)
      ->allow_extra_args(false);
}

}  // namespace commbench
