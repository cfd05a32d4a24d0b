// Replacing a small file so that a reader (or a process restarted after a crash) sees either
// the old content or the new one, never a partial write.
#pragma once

#include <string>

#include "common/status.h"

namespace tiresias {

// Writes `text` to a temporary file beside `path`, fsyncs it (unless !durable: then a crash
// of the process keeps it, a power loss may not) and renames it over `path`.
// The file is created with mode 0644 less the process's umask.
Status WriteFileAtomically(const std::string& path, const std::string& text, bool durable = true);

}  // namespace tiresias
