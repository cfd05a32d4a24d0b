// TreeReaper: directory trees removed on a thread of its own (see tree_reaper.h).
#include "common/tree_reaper.h"

#include <utility>

#include "common/remove_tree.h"

namespace tiresias {

TreeReaper::TreeReaper(OnError on_error)
    : on_error_(std::move(on_error)), thread_([this] { Loop(); }) {}

TreeReaper::~TreeReaper() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void TreeReaper::Remove(std::string path) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(path));
  }
  cv_.notify_all();
}

bool TreeReaper::Idle() {
  std::lock_guard lk(mu_);
  return queue_.empty() && !busy_;
}

void TreeReaper::Loop() {
  std::unique_lock lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const std::string path = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lk.unlock();
    const Status s = RemoveTree(path);
    if (!s.ok() && on_error_) on_error_(path, s);
    lk.lock();
    busy_ = false;
  }
}

}  // namespace tiresias
