// How much room is left on a file system: for serve's disk reserve (store/disk_reserve.h) and
// the shim's log pump (exec/log_pump.h), which both stop filling a disk before serve's journal
// runs out of room.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace tiresias {

// The bytes an unprivileged process may still write on the file system holding `path`.
StatusOr<int64_t> FreeBytesOn(const std::string& path);
// How much room is left where a file goes: a function asking FreeBytesOn of `file`'s
// directory (".", when it names none) each time it is called.
using FreeBytesFn = std::function<StatusOr<int64_t>()>;
FreeBytesFn FreeBytesBeside(const std::string& file);
// A monotonic clock in milliseconds, for the rate limits of those checks.
int64_t SteadyMs();

}  // namespace tiresias
