// libFuzzer target: the model-profile readers on arbitrary bytes: the tensor-size catalogue
// (model,tensor_sizes_mb) and the per-model compute times read from a Tiresias-format trace.
// A catalogue that reads has finite positive sizes and a skew in (0, 1]; the speed model
// built from it gives rates in [kMinRate, 1] for every model on a few placement shapes.
#include <cmath>

#include "fuzz_support.h"
#include "sim/link_speed_model.h"
#include "trace/model_profile_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  static fuzz::InputFile file;
  const std::string path = file.Put(fuzz::AsText(data, size));
  auto catalog = ReadModelCatalog(path);
  if (!catalog.ok()) {
    FUZZ_CHECK(!catalog.status().message().empty());
    // The same bytes as a compute-times trace, against a catalogue of two known models.
    ModelCatalog known;
    FUZZ_CHECK(known.Add("vgg16", {392, 64, 16}).ok());
    FUZZ_CHECK(known.Add("resnet50", {8, 4, 4, 2}).ok());
    if (ReadComputeTimes(path, known).ok()) {
      for (const auto& name : known.names()) {
        const double ms = known.Find(name)->compute_ms;
        FUZZ_CHECK(std::isfinite(ms) && ms >= 0);
      }
    }
    return 0;
  }
  const Topology topo = *Topology::Create(2, 4, 4);
  LinkSpeedModel ps(*catalog, LinkBandwidths{}, 200, CommMode::kParameterServer);
  LinkSpeedModel ring(*catalog, LinkBandwidths{}, 200, CommMode::kAllReduce);
  for (const auto& name : catalog->names()) {
    const ModelProfile* p = catalog->Find(name);
    FUZZ_CHECK(p && !p->tensors_mb.empty());
    FUZZ_CHECK(std::isfinite(p->total_mb) && p->total_mb > 0);
    FUZZ_CHECK(p->skew > 0 && p->skew <= 1);
    for (PlacementShape s : {PlacementShape{4, 2, 1}, PlacementShape{8, 4, 2}}) {
      for (const LinkSpeedModel* m : {&ps, &ring}) {
        const double rate = m->RateOf(name, s, topo);
        FUZZ_CHECK(rate >= kMinRate && rate <= 1);
      }
    }
  }
  return 0;
}
