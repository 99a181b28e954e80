#include "commbench/core/build_info.hpp"

#include "commbench/config.hpp"

const char* commbench::version() { return COMMBENCH_VERSION; }
