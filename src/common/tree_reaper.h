// Removes directory trees on a thread of its own (RemoveTree), so that a caller holding a lock
// (serve's loop, which removes ended jobs' directories: serve --keep-finished) never waits for
// a large one: a job's checkpoints can be gigabytes in many files.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace tiresias {

class TreeReaper {
 public:
  // `on_error`: called on the reaper's thread for a tree it could not remove.
  using OnError = void (*)(const std::string& path, const Status& why);
  explicit TreeReaper(OnError on_error);
  // Returns at once: the thread finishes the tree it is removing and leaves the rest (a later
  // reaper takes them), or ends with the process.
  ~TreeReaper();
  TreeReaper(const TreeReaper&) = delete;
  TreeReaper& operator=(const TreeReaper&) = delete;

  void Remove(std::string path);
  // Nothing queued and nothing being removed.
  bool Idle() const;

 private:
  struct State;  // shared with the thread, which may outlive this object
  std::shared_ptr<State> state_;
};

}  // namespace tiresias
