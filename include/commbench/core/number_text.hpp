// Numbers as text for people and files: the one place that picks how many digits a
// figure shows, so tables, notes and messages round alike. Both functions round as
// printf's %.Ng and %.Nf do (tables and tests depend on those exact digits).
#pragma once

#include <string>

namespace commbench {

// `digits` significant digits, trailing zeros dropped, exponent form for very large or
// small values: significant_text(370.83, 4) == "370.8", significant_text(400, 4) == "400".
// Six digits (the default) is the precision of printf's plain %g.
std::string significant_text(double value, int digits = 6);

// Exactly `decimals` digits after the point: fixed_text(2.097152, 3) == "2.097".
std::string fixed_text(double value, int decimals);

}  // namespace commbench
