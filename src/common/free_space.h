// How much room is left on a file system: for serve's disk reserve (store/disk_reserve.h) and
// the shim's log pump (exec/log_pump.h), which both stop filling a disk before serve's journal
// runs out of room.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tiresias {

// The bytes an unprivileged process may still write on the file system holding `path`.
StatusOr<int64_t> FreeBytesOn(const std::string& path);

}  // namespace tiresias
