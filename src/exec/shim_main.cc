// `tiresias-shim`: the supervisor shim as a program of its own (RunShim, exec/local_executor.h),
// which serve starts once per job attempt. It links only what the shim uses: started as
// `tiresias _shim`, each attempt paid the dynamic loading of the whole CLI's libraries
// (about 50 ms of CPU, most of what a short job cost serve's machine).
#include <string>
#include <vector>

#include "exec/local_executor.h"

int main(int argc, char** argv) {
  return tiresias::RunShim(std::vector<std::string>(argv + 1, argv + argc));
}
