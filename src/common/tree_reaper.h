// Removes directory trees on a thread of its own (RemoveTree), so that a caller holding a lock
// (serve's loop, which removes ended jobs' directories: serve --keep-finished) never waits for
// a large one: a job's checkpoints can be gigabytes in many files.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

namespace tiresias {

class TreeReaper {
 public:
  // `on_error`: called on the reaper's thread for a tree it could not remove.
  using OnError = std::function<void(const std::string& path, const Status& why)>;
  explicit TreeReaper(OnError on_error);
  // Finishes the tree being removed; those still queued are left for a later reaper.
  ~TreeReaper();
  TreeReaper(const TreeReaper&) = delete;
  TreeReaper& operator=(const TreeReaper&) = delete;

  void Remove(std::string path);
  // Nothing queued and nothing being removed.
  bool Idle();

 private:
  void Loop();

  OnError on_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace tiresias
