// Numbers typed on a command line, checked with a one-line error that names the flag.
#pragma once

#include <cstdint>
#include <string>

namespace commbench {

// A whole number >= minimum; UsageError "FLAG: 'x' is not a whole number" otherwise.
std::uint64_t parse_count(const std::string& text, const char* flag, std::uint64_t minimum);
// parse_count as a parser of add_parsed_option, which names the flag.
inline auto count_at_least(std::uint64_t minimum) {
  return [minimum](const std::string& text, const char* flag) { return parse_count(text, flag, minimum); };
}
// A finite number; with percent_allowed a trailing '%' is accepted (and ignored here).
double parse_number(std::string text, const char* flag, bool percent_allowed);

// A large count as people write model sizes: "8e9", "8000000000", "8B", "70b", "1.5T",
// "500M", "17K" (decimal suffixes K, M, B or G, T). Must be positive and finite;
// UsageError "FLAG: 'x' is not a count (like 8e9 or 8B)" otherwise.
double parse_scaled_count(const std::string& text, const char* flag);

// -T/--timeout of every command, and other time limits (`flag` names them in errors): 0
// (off) or a positive number of seconds, at most a year (larger values would overflow the
// watchdog's clock arithmetic).
double parse_timeout_seconds(const std::string& text, const char* flag = "-T/--timeout");

// A length of time as people write it for long runs: "90" or "90s", "20m", "2h", "1d".
// Positive, at most a year; UsageError naming `flag` otherwise.
double parse_duration_seconds(const std::string& text, const char* flag);

// "0" or "1", as nccl-tests spells its switches (-c 1); UsageError naming `flag` otherwise.
bool parse_zero_or_one(const std::string& text, const char* flag);

// Whether two paths name one file: the same file once both exist (links included), else
// the same path once resolved.
bool same_file(const std::string& first, const std::string& second);
// --csv and --json must be different files. Paths are compared after resolving them.
void check_distinct_outputs(const std::string& csv_path, const std::string& json_path);
// UsageError "SECOND_FLAG: same file as FIRST_FLAG (path)" when both name one file.
void check_distinct_paths(const std::string& first_path, const char* first_flag, const std::string& second_path,
                          const char* second_flag);

}  // namespace commbench
