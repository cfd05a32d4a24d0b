// TreeReaper: directory trees removed on a thread of its own (see tree_reaper.h).
#include "common/tree_reaper.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "common/remove_tree.h"

namespace tiresias {

struct TreeReaper::State {
  OnError on_error;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> queue;
  bool busy = false;
  bool stop = false;
};

TreeReaper::TreeReaper(OnError on_error) : state_(std::make_shared<State>()) {
  state_->on_error = on_error;
  std::thread([s = state_] {
    std::unique_lock lk(s->mu);
    while (true) {
      s->cv.wait(lk, [&] { return s->stop || !s->queue.empty(); });
      if (s->stop) return;
      const std::string path = std::move(s->queue.front());
      s->queue.pop_front();
      s->busy = true;
      lk.unlock();
      const Status st = RemoveTree(path);
      if (!st.ok() && s->on_error) s->on_error(path, st);
      lk.lock();
      s->busy = false;
    }
  }).detach();
}

TreeReaper::~TreeReaper() {
  {
    std::lock_guard lk(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
}

void TreeReaper::Remove(std::string path) {
  {
    std::lock_guard lk(state_->mu);
    state_->queue.push_back(std::move(path));
  }
  state_->cv.notify_all();
}

bool TreeReaper::Idle() const {
  std::lock_guard lk(state_->mu);
  return state_->queue.empty() && !state_->busy;
}

}  // namespace tiresias
