// `tiresias serve`: the live scheduler, on this machine or over a Slurm cluster. Finds the GPUs
// (nvidia-smi, or --gpus N emulated; with --executor slurm, the partition's nodes and GPUs
// through sinfo), opens the state directory (SQLite journal, tokens, address file, the API's
// Unix socket), replays and reconciles, then runs the scheduling loop and the REST API until
// SIGINT or SIGTERM. Jobs keep running when serve stops; the next serve adopts them.
// Everything it creates is private to its user (umask 077: files 0600, directories 0700).
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "api/api_server.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "common/atomic_file.h"
#include "common/strings.h"
#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "engine/tenant_config.h"
#include "exec/gpus.h"
#include "exec/local_executor.h"
#include "exec/slurm_executor.h"
#include "live/anchored_clock.h"
#include "live/live_scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

// The longest grace period a preempted job may be given (--grace): a day.
constexpr double kMaxGraceS = 86400;

struct ServeFlags {
  std::string state_dir = ".";
  std::string host = "127.0.0.1";
  int port = 8470;
  int gpus = 0;
  std::string nvidia_smi = "nvidia-smi";
  std::string policy = "dlas";
  std::vector<std::string> opts;
  std::string placement = "consolidate";
  std::vector<std::string> popts;
  double grace_s = 30;
  std::optional<bool> checkpoint_aware;
  std::string tenants;  // a tenants file; "none": turn them off
  std::string preempt_signal = "TERM";
  bool fsync = false;
  bool accept_journal_loss = false;
  bool allow_remote = false;
  bool no_cgroups = false;
  std::string executor = "local";
  std::string partition = "gpu";
  std::vector<std::string> sbatch_args;
  int slurm_poll_ms = 250;
  int slurm_cpus = 1;
  int64_t max_log_size = int64_t{1} << 30;    // 0: none
  int64_t disk_reserve = int64_t{128} << 20;  // 0: none
  int64_t keep_finished_s = 0;                // 0: keep ended jobs' directories
};

// The smallest --max-log-size other than 0 (none).
constexpr int64_t kMinLogSize = 64 << 10;

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host.starts_with("127.");
}

StatusOr<int> ParseSignal(const std::string& s) {
  static const std::vector<std::pair<std::string, int>> kNames = {
      {"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"QUIT", SIGQUIT}};
  std::string n = s.rfind("SIG", 0) == 0 ? s.substr(3) : s;
  for (const auto& [name, sig] : kNames) {
    if (n == name) return sig;
  }
  if (auto v = ParseInt(n); v && *v > 0 && *v < 65) {
    // As KILL and STOP by name: a job cannot catch them, so none could checkpoint.
    if (*v == SIGKILL || *v == SIGSTOP) {
      return InvalidArgument(fmt::format(
          "--preempt-signal {}: SIG{} cannot be caught, so no job could checkpoint: use TERM, "
          "INT, HUP, USR1, USR2, QUIT or another number",
          s, *v == SIGKILL ? "KILL" : "STOP"));
    }
    return static_cast<int>(*v);
  }
  return InvalidArgument(
      fmt::format("--preempt-signal {}: use TERM, INT, HUP, USR1, USR2, QUIT or a number", s));
}

// The token that mutating API calls need: created once, readable by the owner only.
int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Serve(const ServeFlags& f) {
  // A flag's value that is wrong exits 2, as every other command's usage error; a fault 1.
  auto fail = [](const Status& s) {
    std::cerr << "tiresias serve: " << s.message() << "\n";
    return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
  };
  {  // Before the state directory is made or touched (a typo left one behind).
    const FileDataSource files;
    if (auto p = MakeOrderingPolicy(f.policy, f.opts, files); !p.ok()) return fail(p.status());
    if (auto p = MakePlacementPolicy(f.placement, f.popts, files); !p.ok()) {
      return fail(p.status());
    }
    for (const auto& n : IneffectiveOptions(f.policy, f.opts, f.placement, f.popts)) {
      std::cerr << "tiresias serve: note: " << n << "\n";
    }
  }
  if (!IsLoopback(f.host) && !f.allow_remote) {
    return fail(InvalidArgument(fmt::format(
        "--host {} is reachable from other machines; pass --allow-remote to mean it (remote "
        "callers then need a token: `tiresias token create USER`)",
        f.host)));
  }
  if (f.disk_reserve != 0 &&
      (f.disk_reserve < 2 * DiskReserve::kJournalRoom || f.disk_reserve > (int64_t{1} << 40))) {
    return fail(InvalidArgument(fmt::format(
        "--disk-reserve {} bytes: 8MiB to 1TiB, or 0 for none (serve pauses under 4 MiB free "
        "either way)",
        f.disk_reserve)));
  }
  if (f.max_log_size != 0 && f.max_log_size < kMinLogSize) {
    return fail(InvalidArgument(
        fmt::format("--max-log-size {}: at least {} bytes (64KiB), or 0 for no limit",
                    f.max_log_size, kMinLogSize)));
  }
  auto sig = ParseSignal(f.preempt_signal);
  if (!sig.ok()) return fail(sig.status());
  if (f.executor != "local" && f.executor != "slurm") {
    return fail(InvalidArgument(
        fmt::format("--executor {}: use local (this machine) or slurm", f.executor)));
  }
  umask(077);  // the journal, logs, tokens and job directories are private to serve's user
  std::error_code ec;
  // The directories serve makes on the way to the state directory: searchable (0711), as the
  // state directory itself, so that local users reach the socket (umask 077 made them 0700).
  std::vector<fs::path> made;
  for (fs::path p = fs::absolute(f.state_dir, ec); !p.empty() && !fs::exists(p, ec) && !ec;
       p = p.parent_path()) {
    made.push_back(p);
    if (p == p.parent_path()) break;
  }
  ec.clear();
  fs::create_directories(f.state_dir, ec);
  if (ec) {  // e.g. a parent without write permission, or a file in the way
    return fail(
        IoError(fmt::format("--state-dir {}: cannot create: {}", f.state_dir, ec.message())));
  }
  for (const fs::path& p : made) (void)chmod(p.c_str(), 0711);
  const fs::path dir = fs::weakly_canonical(fs::absolute(f.state_dir), ec);
  if (!fs::is_directory(dir, ec)) {
    return fail(IoError(fmt::format("--state-dir {}: not a directory", f.state_dir)));
  }
  // One serve per state directory: a second one would replay and run the same jobs. A POSIX
  // record lock, not flock: a child forked to launch a job must not hold it, or a serve killed
  // mid-launch would keep its successor out until that child had executed its shim.
  const fs::path lock_path = dir / "tiresias.lock";
  const int lock_fd = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock_fd < 0) {  // e.g. a read-only state directory: say so, not "another serve"
    return fail(IoError(fmt::format("cannot open {}: {}", lock_path.string(), strerror(errno))));
  }
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  if (fcntl(lock_fd, F_SETLK, &whole) != 0) {
    if (errno == EACCES || errno == EAGAIN) {
      return fail(FailedPrecondition(
          fmt::format("{}: another tiresias serve is using this state directory", dir.string())));
    }
    return fail(IoError(fmt::format("cannot lock {}: {}", lock_path.string(), strerror(errno))));
  }
  // The lock file may have been removed under a running serve (found by a review: a second
  // serve then took the state over); one that still answers on the socket is running.
  if (const fs::path sock = dir / "tiresias.sock"; fs::exists(sock, ec)) {
    // Alive only if it answers: a job's launcher forked by a serve killed mid-launch may hold
    // the listening socket until it execs, accepting nothing.
    auto probe = ApiClient::Connect({.server = "unix:" + sock.string(), .timeout_ms = 2000});
    if (probe.ok() && probe->Get("/v1/health").ok()) {
      return fail(FailedPrecondition(fmt::format(
          "{}: another tiresias serve is using this state directory (it answers on {}; its "
          "lock file was removed)",
          dir.string(), sock.string())));
    }
  }

  const bool slurm = f.executor == "slurm";
  // GPUs: emulated on request, else whatever nvidia-smi finds; Slurm's nodes with --executor
  // slurm (read below, once the state directory names this daemon's jobs).
  std::vector<GpuInfo> gpus;
  std::string source;
  if (slurm) {
    if (f.gpus > 0)
      return fail(InvalidArgument("--gpus: Slurm's nodes say how many GPUs there are"));
  } else if (f.gpus > 0) {
    gpus = EmulatedGpus(f.gpus);
    source = "EMULATED: --gpus, no real devices behind them";
  } else {
    auto found = DiscoverNvidiaGpus(f.nvidia_smi);
    if (found.ok() && !found->empty()) {
      gpus = *found;
      source = "nvidia-smi";
    } else if (!found.ok() && found.status().code() != StatusCode::kNotFound) {
      return fail(
          IoError(fmt::format("GPU discovery failed: {}\n  (pass --gpus N to run "
                              "with N emulated GPUs instead)",
                              found.status().message())));
    } else {
      gpus = EmulatedGpus(1);
      source = "EMULATED: no nvidia-smi found; pass --gpus N for more";
    }
  }
  if (gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) {
    return fail(
        InvalidArgument(fmt::format("{} GPUs: at most {} per node", gpus.size(), kMaxGpusPerNode)));
  }
  ServeConfig cfg{.state_dir = dir.string(),
                  .policy = f.policy,
                  .policy_opts = f.opts,
                  .placement = f.placement,
                  .placement_opts = f.popts,
                  .emulated = !slurm && gpus.front().emulated,
                  .preempt_signal = *sig,
                  .grace = static_cast<Duration>(f.grace_s * kMsPerSecond),
                  .checkpoint_aware = f.checkpoint_aware,
                  .log_events = true};
  cfg.executor = f.executor;
  cfg.keep_finished = Seconds(f.keep_finished_s);
  if (f.tenants == "none") {
    cfg.tenants = TenantConfig{};
  } else if (!f.tenants.empty()) {
    auto tenants = ReadTenantConfig(f.tenants);
    if (!tenants.ok()) return fail(tenants.status());
    cfg.tenants = std::move(*tenants);
    cfg.tenants_file = fs::absolute(f.tenants).string();
  }
  for (const auto& g : gpus) {
    cfg.gpu_devices.push_back(std::to_string(g.index));
    cfg.gpu_names.push_back(g.name);
  }

  // Before anything is written: a serve that cannot listen must not fix this state's
  // settings (the next start with others was refused, though none had run), nor leave a
  // 128 MiB reserve behind.
  if (Status s = HttpServer::CheckListen(f.host, f.port, (dir / "tiresias.sock").string());
      !s.ok()) {
    return fail(s);
  }
  // The database itself too: the lock file may be removed with the socket (a /tmp cleaner),
  // and a second serve then ran on the same journal (found by a tester). An flock on a
  // descriptor kept open for serve's life (a record lock would be dropped whenever SQLite
  // closes a descriptor of the file). A child forked to launch a job shares it until it
  // execs (O_CLOEXEC), so a successor of a serve killed mid-launch asks again for 2 s.
  const fs::path db_path = dir / "tiresias.db";
  // A start that fails before the journal is opened leaves no empty database behind (a
  // review: read-only commands then called it "not a tiresias journal").
  struct RemoveIfStillEmpty {
    fs::path path;
    bool armed;
    ~RemoveIfStillEmpty() {
      std::error_code e;
      if (armed && fs::file_size(path, e) == 0 && !e) fs::remove(path, e);
    }
  } unmade{db_path, !fs::exists(db_path, ec)};
  if (const int db_fd = open(db_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600); db_fd >= 0) {
    bool held = false;
    for (int again = 0; again < 20; ++again) {
      if (flock(db_fd, LOCK_EX | LOCK_NB) == 0) {
        held = true;
        break;
      }
      if (errno != EWOULDBLOCK) {
        held = true;  // no flock here (some network file systems): the lock file decides
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!held) {
      return fail(FailedPrecondition(fmt::format(
          "{}: another tiresias serve is using this state directory (it holds {}; its lock "
          "file was removed)",
          dir.string(), db_path.string())));
    }
    // (kept open, never closed: see above)
  }
  // Room for the journal on a full disk, released before the journal is opened if the disk
  // is full now (a restart after a write failed for want of space).
  cfg.disk = std::make_shared<DiskReserve>((dir / "tiresias.reserve").string(), f.disk_reserve);
  cfg.disk->KeepRoomIn({(dir / "tiresias.db-wal").string()});
  if (auto c = cfg.disk->Check(); c.changed && !cfg.disk->full()) {
    std::cerr << "tiresias serve: warning: " << c.message << "\n";
  }
  if (auto free = FreeBytesOn(dir.string()); free.ok() && *free < DiskReserve::kJournalRoom) {
    // SQLite would say "disk I/O error", and that is no reason to restore a backup.
    return fail(ResourceExhausted(fmt::format(
        "{}: its file system is full ({} bytes free): free at least {} MiB there and start "
        "again (jobs keep running meanwhile)",
        dir.string(), *free, DiskReserve::kJournalRoom >> 20)));
  }
  auto token = EnsureAdminToken((dir / "tiresias.token").string());
  if (!token.ok()) return fail(token.status());
  auto ids = Identities::Open(*token, (dir / "tiresias.tokens").string(), geteuid());
  if (!ids.ok()) return fail(ids.status());
  auto store = Store::Open(
      db_path.string(), WallMs(),
      Store::Options{.fsync_commits = f.fsync, .accept_journal_loss = f.accept_journal_loss});
  if (!store.ok()) return fail(store.status());
  unmade.armed = false;
  cfg.disk->KeepRoom();  // its WAL is there now
  for (const auto& w : (*store)->warnings()) std::cerr << "tiresias serve: warning: " << w << "\n";

  // Signals: handled by sigwait below, so block them before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // a closed terminal: stop cleanly, as for TERM
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // Containment: a cgroup per job attempt where this machine lets us make one, else process
  // groups only (with the limits the README lists), and the banner says which. With Slurm,
  // Slurm contains the jobs; its nodes are the cluster.
  std::unique_ptr<Executor> executor;
  std::vector<std::string> slurm_warnings;
  if (slurm) {
    SlurmOptions so{.partition = f.partition,
                    .tag = std::to_string((*store)->epoch_ms()),
                    .sbatch_args = f.sbatch_args,
                    .cpus_per_task = f.slurm_cpus,
                    .poll_interval = std::chrono::milliseconds(f.slurm_poll_ms)};
    // slurmctld may be restarting too: keep trying for a while before giving up. A stop signal
    // meanwhile stops serve (it is blocked: sigwait below takes it once serve runs).
    // A minute in all, the tries included (a failed sinfo takes ~4 s).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    auto x = SlurmExecutor::Open(so);
    for (int wait_ms = 250; !x.ok() && x.status().code() == StatusCode::kUnavailable &&
                            std::chrono::steady_clock::now() < give_up;
         wait_ms = std::min(wait_ms * 2, 5'000)) {
      std::cerr << "tiresias serve: " << x.status().message() << "; retrying\n";
      const timespec wait{.tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1'000'000L};
      if (const int sig = sigtimedwait(&stop_signals, nullptr, &wait); sig > 0) {
        std::cerr << "tiresias serve: " << strsignal(sig) << " while waiting for Slurm: stopped\n";
        return 0;  // as a stop once serve runs
      }
      x = SlurmExecutor::Open(so);
    }
    if (!x.ok()) return fail(x.status());
    for (const SlurmNode& n : (*x)->nodes()) {
      if (n.gpus > kMaxGpusPerNode) {
        return fail(InvalidArgument(fmt::format("Slurm node {}: {} GPUs, at most {} per node",
                                                n.name, n.gpus, kMaxGpusPerNode)));
      }
      cfg.nodes.push_back({.name = n.name, .gpus = n.gpus});
    }
    auto w = (*x)->CheckConfig();
    if (w.ok()) {
      slurm_warnings = *w;
    } else {
      slurm_warnings.push_back("cannot read `scontrol show config`: " + w.status().message());
    }
    int total = 0;
    for (const auto& n : cfg.nodes) total += n.gpus;
    source = fmt::format("Slurm partition {}: {} nodes ({})", f.partition, cfg.nodes.size(), total);
    executor = std::move(*x);
  } else {
    auto local = std::make_unique<LocalExecutor>(
        DefaultShimArgv(), cfg.gpu_devices,
        f.no_cgroups ? StatusOr<CgroupTree>(FailedPrecondition("disabled by --no-cgroups"))
                     : CgroupTree::Detect());
    // A job's log gives way to the journal before the journal's reserve is touched.
    local->SetLogLimits(f.max_log_size, 2 * f.disk_reserve);
    executor = std::move(local);
  }
  const std::string containment = executor->Containment();
  int total_gpus = static_cast<int>(gpus.size());
  for (const auto& n : cfg.nodes) total_gpus += n.gpus;
  const AnchoredClock clock(WallMs, [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  });
  LiveScheduler sched(cfg, std::move(*store), std::move(executor), clock);
  if (Status s = sched.Open(); !s.ok()) return fail(s);
  ApiServer api(sched, **ids);
  const fs::path socket = dir / "tiresias.sock";
  auto port = api.Start(f.host, f.port, socket.string());
  if (!port.ok()) return fail(port.status());
  const std::string url = f.host.find(':') != std::string::npos
                              ? fmt::format("http://[{}]:{}", f.host, *port)
                              : fmt::format("http://{}:{}", f.host, *port);
  // Readable by every local user: the CLI finds the server through it (a token is still
  // needed over TCP; the socket needs none).
  if (Status s = WriteFileAtomically((dir / "tiresias.addr").string(), url + "\n"); !s.ok())
    return fail(s);
  (void)chmod((dir / "tiresias.addr").c_str(), 0644);
  // Local users reach the socket through the state directory: searchable, not listable.
  (void)chmod(dir.c_str(), 0711);
  if (!IsLoopback(f.host)) {
    std::cerr << fmt::format(
        "tiresias serve: warning: the API listens on {} for other machines, over plain HTTP; "
        "remote callers authenticate with tokens, which travel unencrypted: put it behind a "
        "TLS proxy or a private network\n",
        url);
  }

  std::cout << fmt::format(
                   "tiresias serve: listening on {} and {}\n  GPUs: {} ({})\n  policy {}{}, "
                   "placement {}, preemption SIG{} + {} s grace\n  jobs contained by {}{}\n  "
                   "state in {}\n",
                   url, socket.string(), total_gpus, source, f.policy,
                   f.opts.empty() ? "" : " " + Join(f.opts, " "), f.placement,
                   sigabbrev_np(*sig) ? sigabbrev_np(*sig) : "?", f.grace_s, containment,
                   containment.starts_with("process groups")
                       ? "\n  WARNING: a job process that calls setsid escapes, and a job whose "
                         "supervisor is killed while serve is down is not found again (README: "
                         "Containment)"
                       : "",
                   dir.string())
            << std::flush;
  if (f.keep_finished_s > 0) {
    std::cout << fmt::format(
                     "  an ended job's directory (its log, checkpoints) is removed {} after it "
                     "ended (--keep-finished)\n",
                     RetentionText(cfg.keep_finished))
              << std::flush;
  }
  for (const auto& w : slurm_warnings) {
    std::cerr << "tiresias serve: warning: Slurm setting: " << w << "\n";
  }

  std::atomic<bool> stop = false;
  std::thread loop([&] { sched.Run(stop); });
  int got = 0;
  sigwait(&stop_signals, &got);
  std::cout << fmt::format(
                   "tiresias serve: SIG{}: stopping (jobs keep running; the next "
                   "serve adopts them)\n",
                   sigabbrev_np(got) ? sigabbrev_np(got) : "?")
            << std::flush;
  stop = true;
  sched.Wake();
  api.Stop();
  loop.join();
  fs::remove(dir / "tiresias.addr", ec);
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, int& rc) {
  static ServeFlags f;
  auto* s =
      app.add_subcommand("serve", "run the live scheduler on this machine or a Slurm cluster");
  s->add_option("--state-dir", f.state_dir,
                "where the database, token, address file and job logs live")
      ->capture_default_str();
  s->add_option("--host", f.host,
                "numeric address to listen on (loopback by default; others need --allow-remote; "
                "localhost is 127.0.0.1)")
      ->capture_default_str()
      // It was called "reachable from other machines", then refused as not numeric.
      ->transform([](std::string h) { return h == "localhost" ? std::string("127.0.0.1") : h; });
  s->add_flag("--allow-remote", f.allow_remote,
              "allow --host to be reachable from other machines (token authentication, no TLS)");
  s->add_option("--port", f.port, "port (0 = any free port)")
      ->capture_default_str()
      ->check(IntegerIn(0, 65535));
  s->add_option("--gpus", f.gpus, "run with N emulated GPUs instead of discovering real ones")
      ->check(IntegerIn(1, kMaxGpusPerNode));
  s->add_option("--nvidia-smi", f.nvidia_smi, "nvidia-smi to discover GPUs with")
      ->capture_default_str();
  s->add_option("--policy", f.policy, "ordering policy (see `tiresias policies`)")
      ->capture_default_str();
  s->add_option("--opt", f.opts, "policy option key=value (repeatable)");
  s->add_option("--placement", f.placement, "placement policy")->capture_default_str();
  s->add_option("--popt", f.popts, "placement option key=value (repeatable)");
  s->add_option("--grace", f.grace_s, "seconds a preempted job has to checkpoint and exit")
      ->capture_default_str()
      ->check(NumberIn(0, kMaxGraceS));
  auto* aware = s->add_flag_function(
      "--checkpoint-aware", [](int64_t) { f.checkpoint_aware = true; },
      "among running jobs of one priority, preempt those that lose the least work since their "
      "last reported checkpoint (the default for a new state; recorded with it)");
  s->add_flag_function(
       "--no-checkpoint-aware", [](int64_t) { f.checkpoint_aware = false; },
       "preempt in policy order whatever the jobs' checkpoints")
      ->excludes(aware);
  s->add_option("--tenants", f.tenants,
                "virtual clusters with GPU quotas and their users (a JSON file: the README's "
                "'Many teams'); takes effect for jobs already submitted too, and is kept "
                "with the state: later starts without it keep it, `none` turns it off")
      ->check(NotEmpty());  // "" kept the stored ones without a word (found by a tester)
  s->add_option("--preempt-signal", f.preempt_signal, "signal sent to preempt (then SIGKILL)")
      ->capture_default_str();
  s->add_flag("--accept-journal-loss", f.accept_journal_loss,
              "start even though the journal lost committed rows (a deleted WAL, a truncated or "
              "replaced database): continue from what it holds; job ids are never reused");
  s->add_flag("--fsync", f.fsync,
              "fsync every journal commit (survives power loss; default survives a crash of "
              "serve itself)");
  s->add_option("--executor", f.executor,
                "local: run jobs on this machine; slurm: place and release held Slurm jobs on "
                "a partition's nodes (needs the Slurm client tools; README: Many machines)")
      ->capture_default_str();
  s->add_option("--partition", f.partition, "Slurm partition whose nodes tiresias schedules")
      ->capture_default_str();
  s->add_option("--sbatch-arg", f.sbatch_args,
                "extra sbatch argument for every job, e.g. --sbatch-arg=--account=ml (repeatable)");
  s->add_option("--slurm-poll-ms", f.slurm_poll_ms, "how often to read Slurm's jobs (squeue)")
      ->check(IntegerIn(20, 60000))
      ->capture_default_str();
  s->add_option("--slurm-cpus", f.slurm_cpus, "CPUs per node for each Slurm job")
      ->check(IntegerIn(1, 4096))
      ->capture_default_str();
  s->add_option("--max-log-size", f.max_log_size,
                "the most output a job's own log (output.log in its job directory) keeps; past "
                "it the log moves to output.log.1 and a new one starts (e.g. 512MiB; 0: no "
                "limit). Not for --output/--error files, nor under Slurm")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("1GiB");
  s->add_option("--disk-reserve", f.disk_reserve,
                "space kept free for the journal on the state directory's file system: when it "
                "fills, serve releases it, goes on and refuses new jobs until twice as much is "
                "free again (8MiB to 1TiB; 0: none; either way serve pauses under 4 MiB free)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("128MiB");
  s->add_option("--keep-finished", f.keep_finished_s,
                "remove an ended job's directory (its own log, checkpoints) this long after it "
                "ended, e.g. 7d, 12h, 90m (seconds without a unit; 0: keep them); a job "
                "submitted with --keep-checkpoints keeps it, --output files are never touched")
      ->transform(CLI::AsNumberWithUnit(
          std::map<std::string, int64_t>{{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}}))
      ->check(IntegerIn(0, int64_t{3650} * 86400))
      ->default_str("0");
  s->add_flag("--no-cgroups", f.no_cgroups,
              "contain jobs by process group only, even where a cgroup per job could be made");
  s->callback([&rc] { rc = Serve(f); });
}

}  // namespace tiresias
