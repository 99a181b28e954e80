// Numbers as text for people and files: the one place that picks how many digits a
// figure shows, so tables, notes and messages round alike. Both functions round as
// printf's %.Ng and %.Nf do (tables and tests depend on those exact digits).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace commbench {

// `digits` significant digits, trailing zeros dropped, exponent form for very large or
// small values: significant_text(370.83, 4) == "370.8", significant_text(400, 4) == "400".
// Six digits (the default) is the precision of printf's plain %g.
std::string significant_text(double value, int digits = 6);

// Exactly `decimals` digits after the point: fixed_text(2.097152, 3) == "2.097".
std::string fixed_text(double value, int decimals);

// fixed_text when that fits in `width` characters; else fewer decimals, and past that
// exponent form ("1.23e+09"), so an absurd figure cannot push a table's columns apart:
// fixed_text_within(12334394.773, 3, 9) == "12334395".
std::string fixed_text_within(double value, int decimals, std::size_t width);

// A count and its noun, the noun plural unless the count is one: count_text(1, "node") ==
// "1 node", count_text(3, "step") == "3 steps". `plural` for a noun that is not made
// plural by an "s".
std::string count_text(unsigned long long count, std::string_view noun, std::string_view plural = {});

// Milliseconds in a column or a line that says "ms": `digits` significant digits, but a
// large figure in whole milliseconds and a tiny one in fixed decimals, never in exponent
// form: milliseconds_text(13040.4, 4) == "13040", milliseconds_text(2.2468, 4) == "2.247".
std::string milliseconds_text(double milliseconds, int digits = 4);

// A duration as people read it, never in exponent form: "0.42 ms", "850 ms", "12.3 s",
// "95 s", "4 min 05 s", "2 h 03 min".
std::string duration_text(double seconds);

}  // namespace commbench
