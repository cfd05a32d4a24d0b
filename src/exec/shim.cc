// The supervisor shim (`tiresias _shim`): leader of one job attempt's process group. Runs
// the command, waits for it, records how it ended in the exit file (see executor.h).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

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

int RunShim(const std::vector<std::string>& args) {
  // --exit-file FILE -- COMMAND [ARGS...]
  if (args.size() < 4 || args[0] != "--exit-file" || args[1].empty() || args[2] != "--") {
    Say("usage: tiresias _shim --exit-file FILE -- COMMAND [ARGS...]");
    return 2;
  }
  const std::string& exit_file = args[1];
  std::vector<std::string> cmd(args.begin() + 3, args.end());
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
