// fixture: tests integrate modules and are exempt
#include "policy/registry.h"
