// Opening a file with another account's rights: serve runs as root to start every user's job
// as its submitter, and must not hand a user a file that user could not open (a job's
// `--output` may name any path, /etc/shadow or a link to it included). The kernel decides, on
// the account's uid, gid and groups, so links, directories' search bits and ACLs all count.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace tiresias {

// A read-only descriptor for `path` as `uid`/`gid` (and the groups of uid's account, if it
// has one) would open it; the caller closes it. NotFound when it does not exist,
// PermissionDenied when the account may not read it, naming the path.
StatusOr<int> OpenToReadAs(const std::string& path, uid_t uid, gid_t gid);

}  // namespace tiresias
