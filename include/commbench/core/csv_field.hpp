// One field of a CSV line, quoted as RFC 4180 wants it. In core because every layer that
// writes CSV needs it: the result rows (report) and the topology's link rows (topology).
#pragma once

#include <string>

namespace commbench {

// The text itself, or quoted with inner quotes doubled when it holds a comma, quote or
// line break.
std::string csv_escape(const std::string& text);

}  // namespace commbench
