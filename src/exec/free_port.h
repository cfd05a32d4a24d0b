// A TCP port on the loopback interface that nothing listens on right now, for a multi-GPU
// job's MASTER_PORT (the rendezvous of torch.distributed and similar).
#pragma once

#include <optional>

namespace tiresias {

// Asks the kernel for an unused port (bind to port 0) and releases it; nullopt on failure.
// Another process could take it before the job binds it; the kernel hands out ephemeral ports
// in a spread-out order, which makes that unlikely.
std::optional<int> FreeLoopbackPort();

}  // namespace tiresias
