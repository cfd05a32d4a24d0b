// libFuzzer target: the trace readers (Tiresias and Philly formats, chosen by the header) on
// arbitrary bytes. A trace that reads must hold what the simulator relies on (jobs sorted by
// (submit, id), unique ids, GPUs in 1..the cluster bound, positive durations, submit times
// >= 0), and a small one is replayed through the simulator and its metrics, so values the
// reader lets through cannot overflow the core's arithmetic downstream.
#include <set>

#include "fuzz_support.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  static fuzz::InputFile file;
  auto trace = ReadTrace(file.Put(fuzz::AsText(data, size)));
  if (!trace.ok()) {
    FUZZ_CHECK(!trace.status().message().empty());
    return 0;
  }
  FUZZ_CHECK(trace->format == "tiresias" || trace->format == "philly");
  std::set<JobId> ids;
  for (size_t i = 0; i < trace->jobs.size(); ++i) {
    const JobSpec& j = trace->jobs[i];
    FUZZ_CHECK(ids.insert(j.id).second);
    FUZZ_CHECK(j.gpus >= 1 && j.gpus <= kMaxClusterGpus);
    FUZZ_CHECK(j.submit >= 0);
    FUZZ_CHECK(j.duration && *j.duration > 0);
    if (i > 0) {
      const JobSpec& p = trace->jobs[i - 1];
      FUZZ_CHECK(p.submit < j.submit || (p.submit == j.submit && p.id < j.id));
    }
  }
  if (trace->jobs.size() <= 64) {
    for (const char* policy : {"dlas", "srtf"}) {
      SimConfig cfg{.topo = *Topology::Create(1, 2, 4), .policy = policy};
      auto r = RunSimulation(cfg, trace->jobs);
      FUZZ_CHECK(r.ok());
      FUZZ_CHECK(r->jobs.size() == trace->jobs.size());
      (void)ComputeMetrics(*r);
    }
  }
  return 0;
}
