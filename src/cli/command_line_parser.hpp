// CLI11 with commbench's own value parsers: each option converts its text to a typed
// value while CLI11 reads the command line, with the parser that gives the project's
// one-line message naming the flag ("-b/--min-bytes: '0' is zero"). CLI11 passes
// exceptions other than its own through unchanged, so that message is the error.
// (CLI11's IsMember/CheckedTransformer would word their errors differently and cannot
// read "a,b" lists with "all"; the help lists the accepted names from the same tables
// the parsers use instead.)
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/parsed_option.hpp"

namespace commbench {

// A switch as nccl-tests spells it: "-c 0", "-c 1", or a bare "-c" for 1; its errors name
// it as flag_display_name does ("-c/--check").
CLI::Option* add_zero_or_one_switch(CLI::App& app, const std::string& names, bool& target,
                                    const std::string& description);

enum class CommandLineRequest { run, help, version };

// What the command line asked for, and for help or the version the text to print.
struct CommandLineOutcome {
  CommandLineRequest request = CommandLineRequest::run;
  std::string text;  // the help, or "PROGRAM VERSION (commit C)"
};

// Adds -V/--version and parses `argv` into the options `app` was given. A request for
// help or for the version wins over a bad value elsewhere on the line, as it does in
// CLI11 alone. CLI11's own errors (an unknown flag, a missing value) become a UsageError
// of their first line and "(see --help)".
CommandLineOutcome parse_command_line(CLI::App& app, int argc, const char* const* argv, const std::string& program);

// A file name flag: an empty name is a typo (an unset shell variable), not a request for
// no file. Throws UsageError "FLAG: empty file name".
std::string non_empty_file_name(const std::string& text, const char* flag);

}  // namespace commbench
