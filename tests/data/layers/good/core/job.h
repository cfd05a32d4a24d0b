// fixture: the core on common only
#include "common/status.h"
#include <vector>
