// libFuzzer target: a job submission as the API receives it: the JSON body (ParseSubmit)
// followed by the value rules (Validate). A request that passes both has a command, GPUs in
// range, a finite positive duration that converts to ms, no scheduler-owned variable, and
// nothing that execve would cut short (a NUL byte in an argument, the cwd or a value).
#include "api/api_server.h"
#include "fuzz_support.h"
#include "live/submit_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  auto r = ParseSubmit(std::string(fuzz::AsText(data, size)));
  if (!r.ok()) {
    FUZZ_CHECK(!r.status().message().empty());
    return 0;
  }
  if (Status st = Validate(*r); !st.ok()) {
    FUZZ_CHECK(st.message().starts_with("field '"));
    return 0;
  }
  FUZZ_CHECK(!r->argv.empty() && !r->argv[0].empty());
  FUZZ_CHECK(r->gpus >= 1 && r->gpus <= kMaxRequestGpus);
  if (r->duration_s) {
    auto ms = r->duration();
    FUZZ_CHECK(ms && *ms >= 0 && *ms <= static_cast<Duration>(kMaxRequestDurationS) * 1000);
  }
  // What reaches execve must be C strings: a NUL would silently cut an argument.
  auto c_string = [](const std::string& s) { return s.find('\0') == std::string::npos; };
  for (const auto& a : r->argv) FUZZ_CHECK(c_string(a));
  FUZZ_CHECK(c_string(r->cwd));
  for (const auto& [k, v] : r->env) FUZZ_CHECK(!k.empty() && !IsSchedulerEnv(k) && c_string(v));
  return 0;
}
