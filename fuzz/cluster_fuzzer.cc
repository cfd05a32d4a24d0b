// libFuzzer target: the cluster spec, both forms: the bytes as a "SxNxG" string
// (Topology::Parse) and as a cluster-spec CSV file (ResolveCluster on a path). A topology
// that parses is within the documented bound (kMaxClusterGpus) and its derived sizes agree.
#include "fuzz_support.h"
#include "trace/trace_reader.h"

namespace {

void CheckTopology(const tiresias::Topology& t) {
  using namespace tiresias;
  FUZZ_CHECK(t.switches() >= 1 && t.nodes_per_switch() >= 1 && t.gpus_per_node() >= 1);
  FUZZ_CHECK(t.gpus_per_node() <= kMaxGpusPerNode);
  FUZZ_CHECK(t.total_gpus() >= 1 && t.total_gpus() <= kMaxClusterGpus);
  FUZZ_CHECK(int64_t{t.switches()} * t.nodes_per_switch() * t.gpus_per_node() == t.total_gpus());
  FUZZ_CHECK(t.switch_of(t.num_nodes() - 1) == t.switches() - 1);
  auto again = Topology::Parse(t.str());  // str() round-trips
  FUZZ_CHECK(again.ok() && again->str() == t.str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  static fuzz::InputFile file;
  const std::string_view text = fuzz::AsText(data, size);
  if (auto t = Topology::Parse(text); t.ok()) CheckTopology(*t);
  if (auto t = ResolveCluster(file.Put(text)); t.ok()) CheckTopology(*t);
  return 0;
}
