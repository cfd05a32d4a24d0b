// libFuzzer target: the GPU-time history reader (the Gittins index's `history` file) on
// arbitrary bytes. A history that reads has at least one sample, none negative, and the
// Gittins index built from it gives finite, non-negative indices at every sample and beyond.
#include <cmath>

#include "fuzz_support.h"
#include "policy/gittins_index.h"
#include "trace/history_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  static fuzz::InputFile file;
  auto samples = ReadGpuTimeHistory(file.Put(fuzz::AsText(data, size)));
  if (!samples.ok()) {
    FUZZ_CHECK(!samples.status().message().empty());
    return 0;
  }
  FUZZ_CHECK(!samples->empty());
  for (Service s : *samples) FUZZ_CHECK(s >= 0);
  GittinsIndex index(*samples, 4);
  for (Service a : {Service{0}, (*samples)[0], samples->back()}) {
    for (Service q : {Service{1}, Seconds(3600), Seconds(3600) * 1000}) {
      const double g = index.Index(a, q);
      FUZZ_CHECK(std::isfinite(g) && g >= 0);
    }
  }
  for (Service s : *samples) index.Add(s);  // online learning merges the same samples again
  FUZZ_CHECK(index.size() >= samples->size());
  return 0;
}
