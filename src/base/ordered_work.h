// Items worked on by several threads and used in order by one: the trace reader decodes
// chunks on every core while its sink receives them one after the other, exactly as a
// single thread would hand them over.
//
// RunInOrder(items, helpers, window, work, use) calls work(i, slot) once for every i in
// [0, items), on `helpers` threads of its own or on the calling thread, and use(i, slot) on
// the calling thread for i = 0, 1, 2, ... in that order, each after work(i, slot) has
// returned. `slot` is i % window: at most `window` items are worked on or waiting to be
// used at once, so storage per slot bounds the memory. The calling thread, when the item it
// needs next has not been started, does it itself instead of waiting. With no helpers
// everything runs on the calling thread: work(0), use(0), work(1), use(1), ...
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuperf {

// The processors this process may run on (its affinity mask), at least 1.
unsigned ProcessorCount();

template <class Work, class Use>
void RunInOrder(size_t items, unsigned helpers, size_t window, Work&& work, Use&& use) {
  window = std::max<size_t>(window, 1);
  helpers = static_cast<unsigned>(std::min<size_t>(helpers, items > 1 ? items - 1 : 0));
  if (helpers == 0) {
    for (size_t i = 0; i < items; ++i) {
      work(i, i % window);
      use(i, i % window);
    }
    return;
  }
  std::mutex mutex;
  std::condition_variable can_start;  // a slot was freed, or the run ends
  std::condition_variable finished;   // an item's work is done
  size_t next = 0;                    // the next item nobody has started
  size_t used = 0;                    // items used so far
  bool stop = false;
  std::vector<size_t> done(window, 0);  // per slot: 1 + the item whose work is done

  auto helper = [&] {
    std::unique_lock lock(mutex);
    while (true) {
      can_start.wait(lock, [&] { return stop || (next < items && next < used + window); });
      if (stop) return;
      const size_t i = next++;
      lock.unlock();
      work(i, i % window);
      lock.lock();
      done[i % window] = i + 1;
      finished.notify_all();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (unsigned t = 0; t < helpers; ++t) threads.emplace_back(helper);

  for (size_t i = 0; i < items; ++i) {
    const size_t slot = i % window;
    std::unique_lock lock(mutex);
    if (next == i) {  // nobody has started it: no waiting
      ++next;
      lock.unlock();
      work(i, slot);
    } else {
      finished.wait(lock, [&] { return done[slot] == i + 1; });
      lock.unlock();
    }
    use(i, slot);
    lock.lock();
    done[slot] = 0;
    used = i + 1;
    can_start.notify_all();
  }
  {
    std::lock_guard lock(mutex);
    stop = true;
    can_start.notify_all();
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace gpuperf
