// fixture: a policy that includes a peer (placement)
#include "core/job.h"
#include "placement/registry.h"
