// libFuzzer target: the journal decoder: one JSON line (EventFromJsonLine), its sentence
// (Describe, what `tiresias events` prints) and the GPU lists of details and job rows
// (GpusFromJson). A decoded event writes back (ToJsonLine) to a line that decodes to the
// same event; GPU lists decode to valid GpuIds or to nothing.
#include "core/event_log.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  const std::string_view line = fuzz::AsText(data, size);
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_discarded()) {
    for (const GpuId& g : GpusFromJson(j)) {
      FUZZ_CHECK(g.node >= 0 && g.index >= 0 && g.index < kMaxGpusPerNode);
    }
    (void)Allocation::Of(GpusFromJson(j)).str();
  }
  auto e = EventFromJsonLine(line);
  if (!e.ok()) {
    FUZZ_CHECK(!e.status().message().empty());
    return 0;
  }
  FUZZ_CHECK(e->detail.is_object());
  (void)Describe(*e);
  auto back = EventFromJsonLine(ToJsonLine(*e));
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back->t == e->t && back->kind == e->kind && back->job == e->job);
  FUZZ_CHECK(back->detail == e->detail);
  return 0;
}
