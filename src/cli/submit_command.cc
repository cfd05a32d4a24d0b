// `tiresias submit`, in the style of sbatch: the request built from the flags, the
// submitter's environment and directory, checked here with the server's own rules (a bad value
// is a usage error, exit 2, and nothing is sent), then POST /v1/jobs.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <optional>

#include "api/api_server.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "common/strings.h"
#include "live/submit_request.h"

extern char** environ;

namespace tiresias {
namespace {

struct SubmitFlags {
  int gpus = 1, tasks_per_gpu = 0;
  std::string name, model, time, dependency, array, output, error, vc;
  double duration_s = 0, stop_at_checkpoint_s = 0;
  std::vector<std::string> env, argv;
  bool export_env = true, hold = false, parsable = false, keep_checkpoints = false;
};

// Where `v` holds a string that is not valid UTF-8 ("" for `v` itself, " 2" for its third
// element, " HOME" for a key's value or key), or nothing.
std::optional<std::string> NotUtf8(const nlohmann::json& v) {
  auto invalid = [](const std::string& s) {
    try {
      (void)nlohmann::json(s).dump();
      return false;
    } catch (const nlohmann::json::type_error&) {
      return true;
    }
  };
  if (v.is_string())
    return invalid(v.get<std::string>()) ? std::optional<std::string>("") : std::nullopt;
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (NotUtf8(v[i])) return fmt::format(" {}", i);
    }
  }
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) {
      if (invalid(k) || NotUtf8(x))
        return " " +
               nlohmann::json(k).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return std::nullopt;
}

int Submit(const Common& o, const SubmitFlags& f) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return Error(IoError("cannot read the current directory: " + ec.message()));
  nlohmann::json body = {{"gpus", f.gpus}, {"argv", f.argv}, {"cwd", cwd.string()}};
  for (const auto& [key, value] :
       {std::pair{"name", &f.name}, std::pair{"model", &f.model}, std::pair{"time", &f.time},
        std::pair{"dependency", &f.dependency}, std::pair{"array", &f.array},
        std::pair{"output", &f.output}, std::pair{"error", &f.error}, std::pair{"vc", &f.vc}}) {
    if (!value->empty()) body[key] = *value;
  }
  if (f.hold) body["hold"] = true;
  if (f.tasks_per_gpu > 0) body["tasks_per_gpu"] = f.tasks_per_gpu;
  if (f.keep_checkpoints) body["keep_checkpoints"] = true;
  if (f.duration_s > 0) body["duration_s"] = f.duration_s;
  if (f.stop_at_checkpoint_s > 0) body["stop_at_checkpoint_s"] = f.stop_at_checkpoint_s;
  nlohmann::json envj = nlohmann::json::object();
  // Like sbatch's default --export=ALL: the job sees the submitter's environment (its PATH,
  // virtualenv, ...), except what the scheduler sets per run. Only its owner and admins can
  // read it back.
  for (char** e = f.export_env ? environ : nullptr; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || IsSchedulerEnv(kv.substr(0, eq))) continue;
    if (NotUtf8(kv)) {  // the JSON request cannot carry it: said, not silently changed
      std::cerr << fmt::format("tiresias: warning: {} is not passed to the job: not valid UTF-8\n",
                               nlohmann::json(kv.substr(0, eq))
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      continue;
    }
    envj[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& kv : f.env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << fmt::format("tiresias: --env {}: expected KEY=VALUE\n", kv);
      return 2;  // a usage error, like every other bad value here
    }
    // A name given here is one a shell can use (`--env -X=1` is a flag's slip, not a name);
    // the inherited environment passes as it is (e.g. bash's BASH_FUNC_f%%).
    const std::string key = kv.substr(0, eq);
    if (!IsVariableName(key)) {
      std::cerr << fmt::format(
          "tiresias: --env {}: '{}' is not a variable name (letters, digits and _, not "
          "beginning with a digit)\n",
          kv, key);
      return 2;
    }
    envj[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (!envj.empty()) body["env"] = envj;
  // Checked here first, so that a bad value is a usage error (2) and no request is sent: bytes
  // that are not UTF-8 (JSON cannot carry them; replacing them would run something other than
  // what was asked), then every rule the server applies to the request's own values.
  for (const auto& [key, value] : body.items()) {
    if (const auto bad = NotUtf8(value)) {
      std::cerr << fmt::format(
          "tiresias: {}{}: not valid UTF-8, which the API cannot carry; "
          "rename it, or pass such bytes through a file\n",
          key, *bad);
      return 2;
    }
  }
  auto request = ParseSubmit(body.dump());
  Status valid = request.ok() ? Validate(*request) : request.status();
  if (!valid.ok()) {
    std::cerr << "tiresias: " << valid.message();
    // Most of it is the inherited environment (sent whole, as sbatch's --export=ALL).
    if (f.export_env && valid.message().starts_with("field 'env': ") &&
        valid.message().find(" bytes, more than ") != std::string::npos) {
      std::cerr << " (your environment is sent with the job: --no-export-env sends only the "
                   "--env variables)";
    }
    std::cerr << "\n";
    return 2;
  }
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  auto r = c->PostJson("/v1/jobs", body);
  if (!r.ok()) return Error(r.status());
  if (o.json()) {
    std::cout << r->dump(2) << "\n";
  } else if (f.parsable) {
    std::cout << (*r)["id"].get<int64_t>() << "\n";
  } else if (r->contains("array_id")) {
    std::cout << fmt::format("submitted array job {} ({} tasks)\n", (*r)["array_id"].get<int64_t>(),
                             (*r)["jobs"].size());
  } else {
    std::cout << fmt::format("submitted job {}\n", (*r)["id"].get<int64_t>());
  }
  return 0;
}

}  // namespace

std::string AmbiguousSubmitFlag(const std::string& flag, const std::string& command) {
  return fmt::format(
      "tiresias submit: {} comes after the command ('{}'), so it is ambiguous: is it "
      "tiresias' or the command's? Put tiresias' flags first and the command after `--`, "
      "e.g. tiresias submit --gpus 2 -- python3 train.py --epochs 3",
      flag, command);
}

std::optional<std::string> AssignmentAsCommand(const std::string& first) {
  if (!IsAssignment(first)) return std::nullopt;
  return fmt::format(
      "tiresias submit: the command would begin with {}, a variable's assignment, not a program "
      "(a shell's `{} CMD`): set it with --env {} (one KEY=VALUE per --env: --env A=1 --env "
      "B=2), or run the command through env: -- env {} CMD ARGS",
      first, first, first, first);
}

void AddSubmitCommand(CLI::App& app, int& rc) {
  static Common o;
  static SubmitFlags sf;
  auto* submit = app.add_subcommand("submit", "submit a job: tiresias submit --gpus 2 -- CMD ARGS");
  AddConnFlags(submit, o);
  AddOutputFlag(submit, o, /*wide=*/false, /*short_o=*/false);  // -o: the output file
  submit->add_option("--gpus", sf.gpus, "GPUs (gang-scheduled)")
      ->check(IntegerIn(1, kMaxRequestGpus));
  submit
      ->add_option("--tasks-per-gpu", sf.tasks_per_gpu,
                   "1: one process per GPU (like srun), each with RANK, LOCAL_RANK, WORLD_SIZE, "
                   "MASTER_ADDR, MASTER_PORT and its own CUDA_VISIBLE_DEVICES; 0 (default): one "
                   "process for all GPUs")
      ->check(IntegerIn(0, 1));
  submit->add_flag("--keep-checkpoints", sf.keep_checkpoints,
                   "keep $TIRESIAS_CHECKPOINT_DIR after the job finished (default: removed)");
  submit
      ->add_option("--stop-at-checkpoint", sf.stop_at_checkpoint_s,
                   "SECONDS: when preempted within this long of a checkpoint it reported "
                   "($TIRESIAS_CHECKPOINT_FILE), stop it at once (SIGKILL, no signal or grace); "
                   "0 (default): always the signal and the grace")
      ->check(NumberIn(0, kMaxStopAtCheckpointS));
  submit->add_option("--name,-J", sf.name, "job name (default: the command)")->check(NotEmpty());
  submit
      ->add_option("--vc,--account,-A", sf.vc,
                   "virtual cluster to charge (default: your VC; see `tiresias vcs`)")
      ->check(NotEmpty());
  submit->add_option("--model", sf.model, "model name, for placement (e.g. resnet50, vgg16)")
      ->check(NotEmpty());
  submit
      ->add_option("--duration", sf.duration_s,
                   "expected run time in seconds (only sjf/srtf/srsf use it; 0 = not given)")
      ->check(NumberIn(0, kMaxRequestDurationS));
  submit
      ->add_option("--time,-t", sf.time,
                   "time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (running "
                   "time only; then the checkpoint signal, the grace, and state timeout)")
      ->check(NotEmpty());
  submit
      ->add_option("--dependency,-d", sf.dependency,
                   "afterok:ID[:ID..], afterany:ID, afternotok:ID, singleton, comma-separated; "
                   "ID_INDEX: one array task")
      ->check(NotEmpty());
  submit
      ->add_option("--array,-a", sf.array, "array tasks: 0-99, 0-99%8 (at most 8 at once), 1,3,5-7")
      ->check(NotEmpty());
  submit
      ->add_option("--output,-o", sf.output,
                   "stdout file (%j job id, %a array index, %A array id, %u user, %x name); "
                   "default: the job's log")
      ->check(NotEmpty());
  submit->add_option("--error,-e", sf.error, "stderr file (same patterns); default: with stdout")
      ->check(NotEmpty());
  submit->add_flag("--hold,-H", sf.hold, "submit held: it waits until `tiresias release`");
  submit
      ->add_option("--env", sf.env, "extra environment KEY=VALUE (repeatable: --env A=1 --env B=2)")
      ->allow_extra_args(false);  // one value each: `--env A=1 python3 x.py` ran no python3
  submit->add_flag("--export-env,!--no-export-env", sf.export_env,
                   "pass this shell's environment to the job (default; like sbatch)");
  submit->add_flag("--parsable", sf.parsable, "print the job id alone");
  auto* command = submit->add_option("command", sf.argv, "the command, after --")->required();
  submit->callback([&rc, submit, command] {
    // A flag after the command's first word, without `--` before the command, was taken as
    // tiresias' own (the job ran without it); sbatch gives it to the script. Neither silently.
    const auto& order = submit->parse_order();
    const auto first = std::find(order.begin(), order.end(), command);
    const auto late =
        std::find_if(first, order.end(), [&](const CLI::Option* x) { return x != command; });
    if (late != order.end()) {
      std::cerr << AmbiguousSubmitFlag((*late)->get_name(), sf.argv.front()) << "\n";
      rc = 2;
      return;
    }
    if (auto assignment = AssignmentAsCommand(sf.argv.front())) {
      std::cerr << *assignment << "\n";  // exec would fail on it: "no such file"
      rc = 2;
      return;
    }
    rc = Submit(o, sf);
  });
}

}  // namespace tiresias
