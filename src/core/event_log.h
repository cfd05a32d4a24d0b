// The event vocabulary shared by every driver: the live daemon's journal and the simulator's
// `--events` file use the same kinds and the same structured details, so a simulated and a
// live run of the same jobs can be compared line by line.
//
// Each kind has one row in a table: its name and whether it is an input to the core (the
// journal rows the daemon replays into a fresh core after a crash). The detail is a JSON
// object whose fields each kind documents below; nothing is parsed back out of prose.
//
//   kind     input  detail
//   submit   yes    {"name", "gpus"}
//   finish   yes    {"how"}: "exit 0", "killed by signal 9 (SIGKILL)", "launch failed: ..."
//                   (the simulator: {})
//   cancel   yes    {}
//   tick     yes    {}                      a Schedule(now) call
//   launch   yes    {"attempt", "pid", "devices", "master_port"}: progress counts from here
//   drain    yes    {"until_ms"}: a started job waits for its GPUs to drain; progress from then
//                   (with {"why"}: it waits for the cluster engine to take it)
//   eligible yes    {"eligible", "why"}: a waiting job held ("held", "dependency", "array
//                   limit") or released (Scheduler::SetEligible)
//   requeue  yes    {"by"}: a running job stopped to wait again, by request (Scheduler::Requeue)
//   reject   no     {"reason"}              a submission the core refused (never fits)
//   start    no     {"gpus": [[node, index], ...], "reason"}   the core's decision
//   preempt  no     {"gpus", "reason"}
//   exit     no     {"how", "after": "preemption"|"requeue"|"time limit"|"cancel",
//                   "checkpointed": bool (after a preemption or a requeue),
//                   "completed": true when the job left its done file and exited 0 (then a
//                   finish follows, also for a job the core had stopped; not after a time
//                   limit, whose finish was at the signal), "lost": true when the run was
//                   lost with its node (or requeued by the engine) in its stop,
//                   "lost_gpu_ms" the work since its last checkpoint lost}
//   adopt    no     {"pid", "engine_job" (a cluster engine's run: its job id, also the pid)}
//                   a process that survived a daemon restart
//   requeue  no     {"reason"}              a process that vanished (journals before interrupt)
//   interrupt yes   {"last_alive_ms", "reason"}: a running job's processes vanished while the
//                   daemon was down; service counts up to last_alive_ms, then it is relaunched
//   capacity yes    {"node", "usable": [index, ...], "reason"}: from now on exactly these GPUs
//                   of core node `node` may be used (Scheduler::SetNodeAvailability); no job
//   evict    no     {"gpus", "reason"}: the core stopped the job because its GPUs became
//                   unavailable (follows the capacity event that did it)
//   tenants  yes    {"config": the tenants file's content as JSON, or null (none), "file"}:
//                   from now on these VCs and quotas (Scheduler::SetTenants); no job
//   timelimit no    {"limit"}: a running job reached its time limit and was told to stop (a
//                   finish of its run follows); with {"cancel"}: cancelled in that grace
//   relocate yes    {"gpus", "held"}: a started job waiting to launch on GPUs another job's
//                   stopping process holds (avoided, or in "held") asked to move
//                   (Scheduler::Relocate), not onto GPUs in "held" (other processes hold
//                   them); a start follows when it moved
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "common/time.h"
#include "core/action.h"
#include "core/allocation.h"

namespace tiresias {

enum class EventKind {
  kSubmit,
  kFinish,
  kCancel,
  kTick,
  kLaunch,
  kDrain,
  kReject,
  kStart,
  kPreempt,
  kExit,
  kAdopt,
  kRelaunch,
  kInterrupt,
  kDemote,
  kPromote,
  kEligible,
  kRequeue,
  kCapacity,
  kEvict,
  kCheckpoint,  // a running job reported a checkpoint (at_ms: when it was complete)
  kTenants,     // the tenants changed (Scheduler::SetTenants); no job
  kCleanup,     // an ended job's directory was removed (serve --keep-finished)
  kTimeLimit,   // a running job reached its time limit and was told to stop (serve)
  kRelocate,    // a started job not launched yet, on GPUs to avoid, asked to move (Relocate)
  kHold,        // a user or an admin held or released a waiting job (serve; the core learns
                // it as an `eligible` input when its eligibility changes)
};

struct EventKindInfo {
  EventKind kind;
  std::string_view name;
  bool core_input;  // replayed into the core after a crash
};

// Every kind, in enum order.
const std::vector<EventKindInfo>& EventKinds();
const EventKindInfo& Info(EventKind k);
std::string_view ToString(EventKind k);
std::optional<EventKind> ParseEventKind(std::string_view name);

struct Event {
  Time t = 0;  // core time, ms
  EventKind kind = EventKind::kTick;
  JobId job;  // JobId() for events of no job (tick)
  nlohmann::json detail = nlohmann::json::object();
};

// The event of a core action: start or preempt with its GPUs and reason.
Event EventOf(const Action& a, Time t);
// The event of a queue change: demote or promote, "Q1".. (the one naming of queues).
Event EventOf(JobId job, Time at, int from_queue, int to_queue);
std::string QueueName(int queue);

// GPUs in details and job rows: [[node, index], ...].
nlohmann::json GpusToJson(const std::vector<GpuId>& gpus);
// Empty for anything that is not such an array.
std::vector<GpuId> GpusFromJson(const nlohmann::json& j);

// Capacity details: GPU indices of a node <-> a usable mask (bit i = GPU i). MaskFromJson
// is nullopt for anything but an array of distinct indices in [0, kMaxGpusPerNode).
nlohmann::json MaskToJson(uint64_t mask);
std::optional<uint64_t> MaskFromJson(const nlohmann::json& j);
// The capacity event of SetNodeAvailability(node, mask, t, stopping) at t, with a reason for
// people; `stopping`: of the usable GPUs, those a daemon has the core avoid while the
// processes it is stopping still hold them (omitted when none).
Event CapacityEvent(Time t, int node, uint64_t mask, const std::string& reason,
                    uint64_t stopping = 0);

// One line of an event log file (JSON Lines): {"t_ms", "kind", "job", "detail"}.
std::string ToJsonLine(const Event& e);
// Parses one such line; InvalidArgument naming the problem (an unknown kind, a missing field).
StatusOr<Event> EventFromJsonLine(std::string_view line);
// Detail fields read by type: an integer that fits int64 (else nullopt), a boolean (false when
// absent or of another type).
std::optional<int64_t> IntField(const nlohmann::json& d, const char* key);
bool BoolField(const nlohmann::json& d, const char* key);
// A plain sentence for people ("GPUs n0:0-1: starts"), from the detail.
// With `epoch_ms` (the wall time of core time 0), core times are shown as ISO-8601 times.
std::string Describe(const Event& e, std::optional<int64_t> epoch_ms = std::nullopt);

}  // namespace tiresias
