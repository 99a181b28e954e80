#include "commbench/backend/local_bootstrap.hpp"

#include <unistd.h>

namespace commbench {

LocalBootstrap::LocalBootstrap() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  hostnames_.emplace_back(name[0] != '\0' ? name : "localhost");
}

}  // namespace commbench
