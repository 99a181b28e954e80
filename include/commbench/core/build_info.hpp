// Which code made a result: the version and the commit of the build.
#pragma once

namespace commbench {

const char* version();
// `git describe --always --dirty` of the tree that was built, "unknown" outside git.
const char* git_commit();

}  // namespace commbench
