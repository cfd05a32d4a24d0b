// Removing a directory tree that someone else may be changing at the same time (a job's
// checkpoint directory, which belongs to the job's user while serve may run as root): never
// follows a symbolic link, so a link planted inside cannot make it remove anything outside.
#pragma once

#include <string>

#include "common/status.h"

namespace tiresias {

// Removes `path` and everything under it, working through directory descriptors (openat with
// O_NOFOLLOW, unlinkat): a symbolic link is removed, never followed, also one that replaces a
// directory while the walk runs. Ok when `path` does not exist. A `path` that is itself a
// link is removed as a link. IoError naming the first entry that could not be removed.
Status RemoveTree(const std::string& path);

}  // namespace tiresias
