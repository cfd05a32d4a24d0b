// A real, private Slurm cluster for end-to-end tests and benchmarks: scripts/slurm_up.sh in a
// fresh short directory under $TMPDIR (its own munged, slurmctld and N logical slurmd with fake
// GPUs on loopback, on free ports; short because the daemons' Unix sockets live there), torn
// down by scripts/slurm_down.sh and removed when the object goes away (kept if `keep`).
// SLURM_CONF is set in this process's environment, so `tiresias serve` and the client tools
// started from here use it. SlurmCluster::Missing() says why a test cannot have one (not
// root, packages absent): tests skip with that message.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "test_util.h"

namespace tiresias::testing {

class SlurmCluster {
 public:
  // "" when a cluster can be brought up here, else why not.
  static std::string Missing() {
    if (::geteuid() != 0) return "Slurm tests need root (slurmd runs jobs as their users)";
    for (const char* b : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged"}) {
      if (::access(b, X_OK) != 0) {
        return std::string(b) + " is missing: apt-get install slurm-wlm munge (make deps)";
      }
    }
    for (const char* b : {"sbatch", "scontrol", "squeue", "sinfo", "scancel"}) {
      if (std::system(("command -v " + std::string(b) + " >/dev/null 2>&1").c_str()) != 0) {
        return std::string(b) + " is missing: apt-get install slurm-wlm (make deps)";
      }
    }
    return "";
  }

  // Brings up `nodes` x `gpus`; error() says why when it failed. `extra`: more slurm.conf
  // lines.
  SlurmCluster(int nodes, int gpus, const std::string& extra = "") {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tsl.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      error_ = "mkdtemp " + tmpl + " failed";
      return;
    }
    dir_ = tmpl;
    std::mt19937 rng(static_cast<unsigned>(::getpid()) * 7919u +
                     static_cast<unsigned>(std::random_device{}()));
    for (int tries = 0; tries < 6; ++tries) {
      // Ports base..base+nodes, below the ephemeral range (where an outgoing connection may
      // hold any port); the script refuses busy ones.
      base_ = 10000 + static_cast<int>(rng() % 220) * 100;
      const std::string cmd = "SLURM_PORT_BASE=" + std::to_string(base_) + " SLURM_EXTRA='" +
                              extra + "' " + Script("slurm_up.sh") + " " + dir_.string() + " " +
                              std::to_string(nodes) + " " + std::to_string(gpus) + " > " +
                              (dir_ / "up.log").string() + " 2>&1";
      std::filesystem::create_directories(dir_);
      if (std::system(cmd.c_str()) == 0) {
        up_ = true;
        conf_ = (dir_ / "etc" / "slurm.conf").string();
        ::setenv("SLURM_CONF", conf_.c_str(), 1);
        return;
      }
      error_ = ReadAll(dir_ / "up.log");
      Down();
      if (error_.find("in use") == std::string::npos) return;
    }
  }
  ~SlurmCluster() {
    Down();
    std::error_code ec;
    if (!keep && !dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  bool keep = false;  // leave the directory (logs) for a look
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  bool up() const { return up_; }
  const std::string& error() const { return error_; }
  const std::string& conf() const { return conf_; }
  const std::filesystem::path& dir() const { return dir_; }

  // Runs a shell command against this cluster; its output (stdout and stderr).
  CmdResult Sh(const std::string& cmd) const {
    if (conf_.empty()) return {1, "no cluster"};
    FILE* p = ::popen(("SLURM_CONF=" + conf_ + " " + cmd + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = ::pclose(p);
    return {WEXITSTATUS(status), out};
  }
  // A node's machine dies (slurmd, its steps and its jobs killed), or comes back.
  void KillNode(const std::string& node) const {
    (void)Sh(Script("slurm_node.sh") + " " + dir_.string() + " kill " + node);
  }
  void StartNode(const std::string& node) const {
    (void)Sh(Script("slurm_node.sh") + " " + dir_.string() + " start " + node);
  }
  // slurmctld stops (SIGTERM: it saves its state) or starts again from that state (`clean`:
  // without it, every job forgotten: slurmctld -c).
  void StopController() const {
    (void)Sh("kill $(cat " + (dir_ / "run" / "slurmctld.pid").string() +
             ") && for i in $(seq 100); do kill -0 $(cat " +
             (dir_ / "run" / "slurmctld.pid").string() + ") 2>/dev/null || break; sleep 0.1; done");
  }
  void StartController(bool clean = false) const {
    (void)Sh("TIRESIAS_SLURM_DIR=" + dir_.string() + " /usr/sbin/slurmctld -f " + conf_ +
             (clean ? " -c" : ""));
  }

 private:
  static std::string Script(const std::string& name) {
    return std::string(TIRESIAS_SCRIPTS) + "/" + name;
  }
  void Down() {
    if (dir_.empty()) return;
    (void)std::system((Script("slurm_down.sh") + " " + dir_.string() + " >/dev/null 2>&1").c_str());
    up_ = false;
  }

  std::filesystem::path dir_;
  int base_ = 0;
  bool up_ = false;
  std::string conf_, error_;
};

}  // namespace tiresias::testing
