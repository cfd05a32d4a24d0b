// fixture: the core naming a policy header
#include "common/status.h"
  #  include "policy/ordering_policy.h"
