// One journal input replayed into a core (see journal_replay.h).
#include "live/journal_replay.h"

#include <fmt/format.h>

#include "core/event_log.h"
#include "engine/tenant_config.h"

namespace tiresias {

JobSpec SpecOfRecord(const JobRecord& r) {
  return JobSpec{.id = r.id,
                 .gpus = r.gpus,
                 .submit = r.submit,
                 .name = r.name,
                 .user = r.user,
                 .vc = r.vc,
                 .model = r.model,
                 .duration = r.duration};
}

Status ReplayInput(Scheduler& core, const EventRow& row,
                   const std::function<const JobRecord*(JobId)>& find, Status* refused) {
  const Event& e = row.event;
  if (e.kind == EventKind::kTick) {
    (void)core.Schedule(e.t);  // the actions were applied when it was journalled
    return Status::Ok();
  }
  if (e.kind == EventKind::kCapacity) {  // a node's usable GPUs; no job
    auto node = e.detail.find("node");
    auto mask = MaskFromJson(e.detail.value("usable", nlohmann::json()));
    // (Of those, the ones a stopping process still held: to avoid. None in older journals.)
    auto avoid = MaskFromJson(e.detail.value("stopping", nlohmann::json::array()));
    if (node == e.detail.end() || !node->is_number_integer() || !mask || !avoid) {
      return IoError(fmt::format("journal event {} (capacity): no node or usable GPUs", row.seq));
    }
    auto stopped = core.SetNodeAvailability(node->get<int>(), *mask, e.t, *avoid);
    if (!stopped.ok()) {
      return IoError(
          fmt::format("journal event {} (capacity): {}", row.seq, stopped.status().message()));
    }
    return Status::Ok();
  }
  if (e.kind == EventKind::kTenants) {  // the VCs and quotas from now on; no job
    const auto config = e.detail.value("config", nlohmann::json());
    TenantConfig tenants;
    if (!config.is_null()) {
      auto parsed = ParseTenantConfig(config.dump(), fmt::format("journal event {}", row.seq));
      if (!parsed.ok()) return IoError(parsed.status().message());
      tenants = std::move(*parsed);
      // Written before the margin existed: the decisions it replays were made without one.
      if (!config.contains("fair_share_margin")) tenants.fair_share_margin = 0;
    }
    if (Status s = core.SetTenants(std::move(tenants), e.t); !s.ok()) {
      return IoError(fmt::format("journal event {} (tenants): {}", row.seq, s.message()));
    }
    return Status::Ok();
  }
  const JobRecord* rec = find(e.job);
  if (!rec) {
    return IoError(fmt::format("journal event {}: job {} has no row", row.seq, e.job.value()));
  }
  Status s;
  switch (e.kind) {
    case EventKind::kSubmit:
      s = core.Submit(SpecOfRecord(*rec), e.t);
      break;
    case EventKind::kFinish:
      s = core.Finish(e.job, e.t);
      break;
    case EventKind::kCancel:
      s = core.Cancel(e.job, e.t);
      break;
    case EventKind::kLaunch:
      s = core.SetProgressStart(e.job, e.t, e.t);
      break;
    case EventKind::kDrain: {
      auto until = e.detail.find("until_ms");
      if (until == e.detail.end() || !until->is_number_integer()) {
        return IoError(fmt::format("journal event {} (drain): no until_ms", row.seq));
      }
      s = core.SetProgressStart(e.job, until->get<Time>(), e.t);
      break;
    }
    case EventKind::kInterrupt: {
      auto alive = e.detail.find("last_alive_ms");
      if (alive == e.detail.end() || !alive->is_number_integer()) {
        return IoError(fmt::format("journal event {} (interrupt): no last_alive_ms", row.seq));
      }
      s = core.Interrupted(e.job, alive->get<Time>(), e.t);
      break;
    }
    case EventKind::kEligible:
      s = core.SetEligible(e.job, BoolField(e.detail, "eligible"), e.t);
      break;
    case EventKind::kRequeue:
      s = core.Requeue(e.job, e.t);
      break;
    case EventKind::kRelocate: {
      std::vector<Action> started;  // (its start, as the daemon journalled it)
      s = core.Relocate(e.job, e.t, started, GpusFromJson(e.detail.value("held", nlohmann::json())))
              .status();
      break;
    }
    case EventKind::kCheckpoint: {
      auto at = e.detail.find("at_ms");
      if (at == e.detail.end() || !at->is_number_integer()) {
        return IoError(fmt::format("journal event {} (checkpoint): no at_ms", row.seq));
      }
      s = core.Checkpointed(e.job, at->get<Time>(), e.t);
      break;
    }
    default:
      return IoError(fmt::format("journal event {}: {} is not an input to the core", row.seq,
                                 ToString(e.kind)));
  }
  if (refused) *refused = s;
  return Status::Ok();
}

}  // namespace tiresias
