// Per-job cgroups (see cgroup.h): finding a usable hierarchy, creating, joining, listing,
// signalling, killing and removing cgroups through the cgroup filesystem.
#include "exec/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "exec/proc_stat.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

std::string Errno(int err) {
  return std::strerror(err);
}

// The whole file; NotFound when it (or its cgroup) does not exist.
StatusOr<std::string> ReadText(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENODEV) return NotFound(path + ": " + Errno(err));
    return IoError(path + ": " + Errno(err));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int err = errno;
      close(fd);
      if (err == ENODEV) return NotFound(path + ": " + Errno(err));  // removed meanwhile
      return IoError(path + ": " + Errno(err));
    }
  }
  close(fd);
  return text;
}

Status WriteText(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(path + ": " + Errno(err));
    return IoError(path + ": " + Errno(err));
  }
  ssize_t n;
  do {
    n = write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return IoError("write '" + text + "' to " + path + ": " + Errno(n < 0 ? err : EIO));
  }
  return Status::Ok();
}

// Pids listed in a cgroup.procs file.
std::vector<int> ParsePids(const std::string& text) {
  std::vector<int> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    int pid = 0;
    if (std::from_chars(line.data(), line.data() + line.size(), pid).ec == std::errc() && pid > 0)
      out.push_back(pid);
  }
  return out;
}

// Every pid in `dir` and the cgroups under it (zombies included; they are filtered later).
Status CollectPids(const std::string& dir, std::vector<int>& out) {
  auto procs = ReadText(dir + "/cgroup.procs");
  if (!procs.ok()) return procs.status();
  for (int pid : ParsePids(*procs)) out.push_back(pid);
  DIR* d = opendir(dir.c_str());
  if (!d) return errno == ENOENT ? Status::Ok() : IoError(dir + ": " + Errno(errno));
  std::vector<std::string> children;
  while (dirent* e = readdir(d)) {
    if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, ".."))
      children.push_back(dir + "/" + e->d_name);
  }
  closedir(d);
  for (const auto& c : children) {
    Status s = CollectPids(c, out);
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  }
  return Status::Ok();
}

int PidfdOpen(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

int PidfdSignal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

std::string Unescape(const std::string& s) {  // \040 and friends in /proc/self/mounts
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view digits(s.data() + i + 1, 3);
      if (digits.find_first_not_of("01234567") == std::string_view::npos) {
        out.push_back(
            static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

const char* KindName(CgroupTree::Kind k) {
  return k == CgroupTree::Kind::kV2 ? "cgroup v2" : "cgroup v1 freezer";
}

}  // namespace

std::vector<std::pair<CgroupTree::Kind, std::string>> CgroupMounts(const std::string& mounts_text) {
  std::vector<std::pair<CgroupTree::Kind, std::string>> v2, v1;
  std::istringstream in(mounts_text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string dev, point, type, opts;
    if (!(f >> dev >> point >> type >> opts)) continue;
    if (type == "cgroup2") {
      v2.emplace_back(CgroupTree::Kind::kV2, Unescape(point));
    } else if (type == "cgroup") {
      std::istringstream o(opts);
      for (std::string opt; std::getline(o, opt, ',');) {
        if (opt == "freezer") v1.emplace_back(CgroupTree::Kind::kV1Freezer, Unescape(point));
      }
    }
  }
  v2.insert(v2.end(), v1.begin(), v1.end());
  return v2;
}

StatusOr<CgroupTree> CgroupTree::Detect(const std::string& parent, const std::string& mounts) {
  auto text = ReadText(mounts);
  if (!text.ok())
    return FailedPrecondition("cannot read " + mounts + ": " + text.status().message());
  std::string why;
  for (const auto& [kind, mount] : CgroupMounts(*text)) {
    auto tree = At(kind, mount, parent);
    if (tree.ok()) return tree;
    why += (why.empty() ? "" : "; ") + tree.status().message();
  }
  if (why.empty()) return FailedPrecondition("no cgroup v2 or cgroup v1 freezer hierarchy mounted");
  return FailedPrecondition(why);
}

StatusOr<CgroupTree> CgroupTree::At(Kind kind, const std::string& mount,
                                    const std::string& parent) {
  const std::string where = std::string(KindName(kind)) + " at " + mount;
  struct stat st {};
  if (stat(mount.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return FailedPrecondition(where + ": not a directory");
  CgroupTree tree(kind, mount, mount + "/" + parent);
  std::error_code ec;
  fs::create_directories(tree.root_, ec);
  if (ec) return FailedPrecondition(where + ": cannot create " + tree.root_ + ": " + ec.message());
  if (Status s = tree.Probe(); !s.ok()) return FailedPrecondition(where + ": " + s.message());
  return tree;
}

std::string CgroupTree::Describe() const {
  return std::string(KindName(kind_)) + " at " + root_;
}

Status CgroupTree::Probe() const {
  static std::atomic<int> counter = 0;
  const std::string name = "probe-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  if (Status s = Create(name); !s.ok()) return s;
  if (kind_ == Kind::kV2 && access((PathOf(name) + "/cgroup.kill").c_str(), F_OK) != 0) {
    (void)Remove(name);
    return FailedPrecondition("no cgroup.kill (Linux 5.14 or later needed)");
  }
  const std::string procs = ProcsFile(name);
  pid_t pid = fork();
  if (pid == 0) {  // open and write only: async-signal-safe
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) _exit(errno & 0xff);
    _exit(write(fd, "0", 1) == 1 ? 0 : (errno & 0xff));
  }
  if (pid < 0) {
    (void)Remove(name);
    return IoError("fork: " + Errno(errno));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Status removed;
  for (int i = 0; i < 100; ++i) {  // the child's exit empties the cgroup, perhaps not at once
    removed = Remove(name);
    if (removed.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return FailedPrecondition("cannot move a process into " + procs + ": " +
                              (WIFEXITED(status) ? Errno(WEXITSTATUS(status)) : "child died"));
  }
  return removed;
}

Status CgroupTree::Create(const std::string& name) const {
  if (mkdir(PathOf(name).c_str(), 0755) != 0 && errno != EEXIST)
    return IoError("mkdir " + PathOf(name) + ": " + Errno(errno));
  return Status::Ok();
}

std::string CgroupTree::ProcsFile(const std::string& name) const {
  return PathOf(name) + "/cgroup.procs";
}

Status CgroupTree::Join(const std::string& name, int pid) const {
  return WriteText(ProcsFile(name), std::to_string(pid));
}

StatusOr<std::vector<int>> CgroupTree::Members(const std::string& name) const {
  std::vector<int> pids;
  Status s = CollectPids(PathOf(name), pids);
  if (s.code() == StatusCode::kNotFound) return std::vector<int>{};
  if (!s.ok()) return s;
  std::vector<int> live;
  for (int pid : pids) {
    auto st = ReadProcStat(pid);
    if (!st || (st->state != 'Z' && st->state != 'X')) live.push_back(pid);
  }
  return live;
}

StatusOr<bool> CgroupTree::Populated(const std::string& name) const {
  if (kind_ == Kind::kV2) {
    auto events = ReadText(PathOf(name) + "/cgroup.events");
    if (!events.ok() && events.status().code() == StatusCode::kNotFound) return false;
    if (!events.ok()) return events.status();
    std::istringstream in(*events);
    for (std::string key, value; in >> key >> value;) {
      if (key == "populated") return value != "0";
    }
    return IoError(PathOf(name) + "/cgroup.events: no 'populated' line");
  }
  auto members = Members(name);
  if (!members.ok()) return members.status();
  return !members->empty();
}

Status CgroupTree::Signal(const std::string& name, int sig) const {
  auto members = Members(name);
  if (!members.ok()) return members.status();
  if (members->empty()) return NotFound(PathOf(name) + ": no process left");
  // Pin each process, then check it is (still) in the cgroup: a pid that was reused between
  // the listing and the pidfd is then not listed any more, or is a new member of the job.
  std::vector<std::pair<int, int>> pinned;  // pid, pidfd (-1: no pidfds on this kernel)
  for (int pid : *members) {
    const int fd = PidfdOpen(pid);
    if (fd >= 0 || errno == ENOSYS) pinned.emplace_back(pid, fd);
  }
  auto again = Members(name);
  std::set<int> still;
  if (again.ok()) still.insert(again->begin(), again->end());
  int sent = 0;
  for (const auto& [pid, fd] : pinned) {
    if (still.contains(pid) && (fd >= 0 ? PidfdSignal(fd, sig) : kill(pid, sig)) == 0) ++sent;
    if (fd >= 0) close(fd);
  }
  if (!again.ok()) return again.status();
  return sent > 0 ? Status::Ok() : NotFound(PathOf(name) + ": no process left");
}

Status CgroupTree::Kill(const std::string& name) const {
  auto populated = Populated(name);
  if (!populated.ok()) return populated.status();
  if (!*populated) return NotFound(PathOf(name) + ": no process left");
  if (kind_ == Kind::kV2) return WriteText(PathOf(name) + "/cgroup.kill", "1");
  // v1: frozen processes cannot fork or exit, so the listing is complete and no pid is reused
  // before the kill; they die as soon as they are thawed.
  const std::string state = PathOf(name) + "/freezer.state";
  if (Status s = WriteText(state, "FROZEN"); !s.ok()) return s;
  for (int i = 0; i < 200; ++i) {  // tasks in uninterruptible sleep may take a while
    auto now = ReadText(state);
    if (!now.ok() || now->starts_with("FROZEN")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto members = Members(name);
  if (members.ok()) {
    for (int pid : *members) kill(pid, SIGKILL);
  }
  Status thawed = WriteText(state, "THAWED");
  if (!members.ok()) return members.status();
  return thawed;
}

Status CgroupTree::Remove(const std::string& name) const {
  const std::string dir = PathOf(name);
  DIR* d = opendir(dir.c_str());
  if (!d) return errno == ENOENT ? Status::Ok() : IoError(dir + ": " + Errno(errno));
  std::vector<std::string> children;
  while (dirent* e = readdir(d)) {
    if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, ".."))
      children.push_back(name + "/" + e->d_name);
  }
  closedir(d);
  for (const auto& c : children) {
    if (Status s = Remove(c); !s.ok()) return s;
  }
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT)
    return IoError("rmdir " + dir + ": " + Errno(errno));
  return Status::Ok();
}

}  // namespace tiresias
