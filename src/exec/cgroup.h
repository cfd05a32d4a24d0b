// Per-job cgroups: how the local executor contains a job attempt. Every process of an attempt
// is forked inside the attempt's cgroup, so the cgroup finds them all, including those that
// left the process group (setsid, daemons), kills them all at once, and says when none is left.
//
// Two kinds of hierarchy: cgroup v2 with `cgroup.kill` (Linux 5.14+; the mount is found in
// /proc/self/mounts, wherever it is: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
// machine), else the cgroup v1 freezer (freeze, SIGKILL every member, thaw: no fork escapes).
// No controller is enabled or limited: a cgroup here is a container of processes, nothing more.
// `Detect` proves that this process can create a cgroup and move a process into it, and
// otherwise says why not, so the daemon can fall back to process groups and tell its user.
//
// Cgroups live under one parent, `<mount>/<parent>` (default "tiresias"), each named by its
// caller. A CgroupTree is a value (paths only); thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tiresias {

class CgroupTree {
 public:
  enum class Kind { kV2, kV1Freezer };

  // The first usable hierarchy in `mounts` (a /proc/self/mounts file): cgroup v2 with
  // cgroup.kill, else v1 freezer. Creates `<mount>/<parent>` and proves a child process can be
  // moved into a cgroup under it. The error names every hierarchy tried and why it failed.
  static StatusOr<CgroupTree> Detect(const std::string& parent = "tiresias",
                                     const std::string& mounts = "/proc/self/mounts");
  // One given hierarchy, with the same checks.
  static StatusOr<CgroupTree> At(Kind kind, const std::string& mount, const std::string& parent);

  Kind kind() const { return kind_; }
  // `<mount>/<parent>`: where the cgroups are.
  const std::string& root() const { return root_; }
  // "cgroup v2 at /sys/fs/cgroup/unified/tiresias" or "cgroup v1 freezer at ...".
  std::string Describe() const;

  // The cgroup called `name` under root().
  std::string PathOf(const std::string& name) const { return root_ + "/" + name; }
  // Creates it; an existing one is fine.
  Status Create(const std::string& name) const;
  // The file a process writes its pid to, to join `name` (the executor's child does so between
  // fork and exec, with open and write only).
  std::string ProcsFile(const std::string& name) const;
  // Moves `pid` into `name`.
  Status Join(const std::string& name, int pid) const;
  // Live processes in `name` and the cgroups under it; empty when it does not exist. An error
  // when it exists and cannot be read.
  StatusOr<std::vector<int>> Members(const std::string& name) const;
  // Whether any process is in `name` (or under it): false when it does not exist; an error when
  // it cannot be told (callers then assume the processes are still there).
  StatusOr<bool> Populated(const std::string& name) const;
  // Sends `sig` to every member. Each is pinned by a pidfd and found in the cgroup again before
  // it is signalled, so a pid reused meanwhile is never hit. NotFound when there is no member.
  Status Signal(const std::string& name, int sig) const;
  // SIGKILL to every member at once (v2: cgroup.kill; v1: freeze, kill, thaw). NotFound when
  // there is no member.
  Status Kill(const std::string& name) const;
  // Removes `name` (and empty cgroups under it); fine when it does not exist. Fails while a
  // process is still inside.
  Status Remove(const std::string& name) const;

 private:
  CgroupTree(Kind kind, std::string mount, std::string root)
      : kind_(kind), mount_(std::move(mount)), root_(std::move(root)) {}
  // Proves that a forked child can join a fresh cgroup under root(), then removes it.
  Status Probe() const;

  Kind kind_;
  std::string mount_;
  std::string root_;
};

// The cgroup mounts listed in a /proc/self/mounts text: (kind, mount point), v2 first, then
// v1 freezer. Octal escapes in mount points (\040 for a space) are decoded.
std::vector<std::pair<CgroupTree::Kind, std::string>> CgroupMounts(const std::string& mounts_text);

}  // namespace tiresias
