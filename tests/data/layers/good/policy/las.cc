// fixture: a policy on core and common
#include "core/job.h"
#include "common/time.h"
#include "policy/other.h"
