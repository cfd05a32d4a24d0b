// The supervisor shim (`tiresias _shim`): leader of one job attempt's process group. Runs
// the command, waits for it, records how it ended in the exit file (see executor.h).
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/local_executor.h"
#include "exec/proc_stat.h"

namespace tiresias {
namespace {

constexpr int kIgnored[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

void Say(const std::string& line) {
  std::string s = "==== tiresias: " + line + " ====\n";
  ssize_t ignored = write(2, s.data(), s.size());
  (void)ignored;
}

}  // namespace

// Becomes uid:gid with the account's supplementary groups (the command's side of the fork).
bool BecomeUser(uid_t uid, gid_t gid) {
  std::array<char, 4096> buf{};
  passwd pw{};
  passwd* found = nullptr;
  const bool named = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found;
  if (named ? initgroups(found->pw_name, gid) != 0 : setgroups(1, &gid) != 0) return false;
  return setgid(gid) == 0 && setuid(uid) == 0 && getuid() == uid && geteuid() == uid &&
         setuid(0) != 0;  // and there is no way back
}

int RunShim(const std::vector<std::string>& args) {
  // --exit-file FILE [--user UID:GID] [--stdout FILE] [--stderr FILE] -- COMMAND [ARGS...]
  size_t i = 0;
  std::string exit_file, out_file, err_file;
  std::optional<std::pair<uid_t, gid_t>> user;
  for (; i + 1 < args.size() && args[i] != "--"; i += 2) {
    if (args[i] == "--exit-file") {
      exit_file = args[i + 1];
    } else if (args[i] == "--stdout") {
      out_file = args[i + 1];
    } else if (args[i] == "--stderr") {
      err_file = args[i + 1];
    } else if (args[i] == "--user") {
      const size_t colon = args[i + 1].find(':');
      auto u = ParseInt(args[i + 1].substr(0, colon));
      auto g = colon == std::string::npos ? std::nullopt : ParseInt(args[i + 1].substr(colon + 1));
      if (!u || !g || *u < 0 || *g < 0) break;
      user = std::pair<uid_t, gid_t>(static_cast<uid_t>(*u), static_cast<gid_t>(*g));
    } else {
      break;
    }
  }
  if (exit_file.empty() || i + 1 >= args.size() || args[i] != "--") {
    Say("usage: tiresias _shim --exit-file FILE [--user UID:GID] [--stdout FILE] "
        "[--stderr FILE] -- COMMAND [ARGS...]");
    return 2;
  }
  std::vector<std::string> cmd(args.begin() + static_cast<ptrdiff_t>(i) + 1, args.end());
  std::vector<char*> argv;
  for (auto& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Who this attempt is, for a daemon that crashed before recording the launch.
  if (exit_file.size() > 5 && exit_file.ends_with(".exit")) {
    const std::string pid_file = exit_file.substr(0, exit_file.size() - 5) + ".pid";
    if (auto st = ReadProcStat(getpid())) {
      if (Status s = WritePidFile(pid_file, getpid(), st->start_ticks); !s.ok()) Say(s.message());
    }
  }

  // The daemon signals the whole group: the command gets the signal, the shim stays to
  // record the outcome. Only SIGKILL (or SIGSTOP) reaches the shim itself.
  for (int sig : kIgnored) signal(sig, SIG_IGN);

  pid_t pid = fork();
  if (pid < 0) {
    Say(std::string("cannot fork: ") + std::strerror(errno));
    ExitRecord rec{.exit_code = 127};
    (void)WriteExitFile(exit_file, rec);
    return 127;
  }
  if (pid == 0) {
    for (int sig : kIgnored) signal(sig, SIG_DFL);  // ignored signals survive exec
    umask(022);  // serve's own is 077; the job gets the usual default
    if (user && !BecomeUser(user->first, user->second)) {
      Say(fmt::format("cannot run as uid {} gid {}: {}", user->first, user->second,
                      std::strerror(errno)));
      _exit(126);
    }
    // --output / --error: opened as the command's own account, appended across attempts.
    for (const auto& [file, fd] : {std::pair{&out_file, 1}, std::pair{&err_file, 2}}) {
      if (file->empty()) continue;
      const int f = open(file->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (f < 0 || dup2(f, fd) < 0) {
        Say(fmt::format("cannot open {} for the job's {}: {}", *file, fd == 1 ? "stdout" : "stderr",
                        std::strerror(errno)));
        _exit(126);
      }
      close(f);
    }
    if (!out_file.empty() && err_file.empty()) dup2(1, 2);  // like sbatch: stderr with stdout
    execvp(argv[0], argv.data());
    Say("cannot run '" + cmd[0] + "': " + std::strerror(errno));
    _exit(127);
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      Say(std::string("lost the command: waitpid: ") + std::strerror(errno));
      status = -1;
      break;
    }
  }
  ExitRecord rec;
  if (status != -1 && WIFSIGNALED(status)) {
    rec.signal = WTERMSIG(status);
  } else if (status != -1 && WIFEXITED(status)) {
    rec.exit_code = WEXITSTATUS(status);
  } else {
    rec.exit_code = 127;
  }
  ExitInfo info{.exit_code = rec.exit_code, .signal = rec.signal};
  Say("command ended: " + info.Describe());
  if (Status s = WriteExitFile(exit_file, rec); !s.ok()) Say(s.message());
  return rec.signal > 0 ? 128 + rec.signal : rec.exit_code;
}

}  // namespace tiresias
