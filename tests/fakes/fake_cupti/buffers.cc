#include "fake_cupti/buffers.h"

#include <chrono>
#include <cstring>
#include <new>

namespace fake_cupti {
namespace {

// A buffer counts as full once the largest record the fake writes no longer fits, as CUPTI
// hands a buffer over when the next record cannot go in.
constexpr size_t kLargestRecord = sizeof(CUpti_ActivityKernel10);
constexpr size_t kAlignment = 8;

// Which slot the calling thread appends to; `generation` invalidates it after Reset().
struct ThreadSlotRef {
  void* slot = nullptr;
  uint64_t generation = 0;
};
thread_local ThreadSlotRef t_slot;
std::atomic<uint64_t> g_slot_generation{1};

}  // namespace

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      return sizeof(CUpti_ActivityGraphTrace2);
    default:
      return 0;
  }
}

BufferQueue::BufferQueue() : global_slot_(std::make_shared<Slot>()) {}

void BufferQueue::SetCallbacks(CUpti_BuffersCallbackRequestFunc request,
                               CUpti_BuffersCallbackCompleteFunc complete) {
  request_ = request;
  complete_ = complete;
  EnsureWorker();  // CUPTI's worker exists once buffers are handled asynchronously
}

BufferQueue::Slot* BufferQueue::SlotForThisThread() {
  if (!per_thread_) return global_slot_.get();
  uint64_t generation = g_slot_generation.load();
  if (t_slot.slot == nullptr || t_slot.generation != generation) {
    auto slot = std::make_shared<Slot>();
    std::lock_guard<std::mutex> lock(mu_);
    slots_.push_back(slot);  // kept after the thread exits so its records still get flushed
    t_slot.slot = slot.get();
    t_slot.generation = generation;
  }
  return static_cast<Slot*>(t_slot.slot);
}

std::unique_ptr<Buffer> BufferQueue::RequestBuffer(size_t needed) {
  CUpti_BuffersCallbackRequestFunc request = request_;
  if (request == nullptr) return nullptr;
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t max_records = 0;
  request(&data, &size, &max_records);
  stats.requested++;
  if (data == nullptr) return nullptr;
  auto buffer = std::make_unique<Buffer>();
  buffer->data = data;
  buffer->size = size;
  buffer->max_records = max_records;
  if (reinterpret_cast<uintptr_t>(data) % kAlignment != 0) {
    stats.misaligned++;
    buffer->begin = kAlignment - reinterpret_cast<uintptr_t>(data) % kAlignment;
    if (buffer->begin > size) buffer->begin = size;
  }
  buffer->used = buffer->begin;
  if (buffer->size - buffer->begin < needed) {
    // Unusable: give it straight back, empty, so the client does not leak it.
    MarkReady(std::move(buffer));
    return nullptr;
  }
  if (zero_buffers_) std::memset(data + buffer->begin, 0, size - buffer->begin);
  return buffer;
}

bool BufferQueue::Append(const void* record, size_t size, bool incomplete) {
  Slot* slot = SlotForThisThread();
  std::unique_lock<std::mutex> lock(slot->mu);
  if (!slot->current && !slot->spare.empty()) {
    slot->current = std::move(slot->spare.back());
    slot->spare.pop_back();
  }
  if (!slot->current) {
    lock.unlock();  // the client may take its own locks (or even flush) in the request
    std::unique_ptr<Buffer> fresh = RequestBuffer(size);
    lock.lock();
    if (!fresh) {
      dropped_++;
      stats.records_dropped++;
      return false;
    }
    if (slot->current) {
      slot->spare.push_back(std::move(fresh));  // another thread filled the global slot
    } else {
      slot->current = std::move(fresh);
    }
  }
  Buffer& buffer = *slot->current;
  std::memcpy(buffer.data + buffer.used, record, size);
  if (incomplete) buffer.incomplete.push_back(buffer.used);
  buffer.used += size;
  buffer.records++;
  stats.records_written++;
  bool full = buffer.size - buffer.used < kLargestRecord ||
              (buffer.max_records != 0 && buffer.records >= buffer.max_records);
  if (full) MarkReady(std::move(slot->current));
  return true;
}

void BufferQueue::MarkReady(std::unique_ptr<Buffer> buffer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.push_back(std::move(buffer));
  }
  cv_.notify_all();
}

void BufferQueue::Deliver(std::unique_ptr<Buffer> buffer, bool on_worker) {
  size_t valid = buffer->records == 0 ? 0 : buffer->used;
  stats.completed++;
  if (on_worker) stats.completed_on_worker++;
  if (valid == 0) stats.empty_returned++;
  stats.records_delivered += buffer->records;
  stats.incomplete_delivered += buffer->incomplete.size();
  if (CUpti_BuffersCallbackCompleteFunc complete = complete_) {
    // The context and stream arguments are always NULL/0 since CUDA 6.0 (global buffers).
    complete(nullptr, 0, buffer->data, buffer->size, valid);
  }
}

void BufferQueue::FlushAll(bool forced) {
  std::vector<std::unique_ptr<Buffer>> out;
  std::vector<std::shared_ptr<Slot>> slots;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots = slots_;
  }
  slots.push_back(global_slot_);
  for (auto& slot : slots) {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (slot->current && slot->current->records > 0 && (forced || IsComplete(*slot->current))) {
      out.push_back(std::move(slot->current));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<std::unique_ptr<Buffer>> keep;
    for (auto& buffer : ready_) {
      if (forced || IsComplete(*buffer)) {
        out.push_back(std::move(buffer));
      } else {
        keep.push_back(std::move(buffer));
      }
    }
    ready_.swap(keep);
  }
  for (auto& buffer : out) Deliver(std::move(buffer), /*on_worker=*/false);
  // Blocking like CUPTI: a buffer the worker is handing over right now counts as pending.
  std::unique_lock<std::mutex> lock(mu_);
  bool on_worker = worker_ != nullptr && worker_->get_id() == std::this_thread::get_id();
  if (!on_worker) cv_.wait(lock, [&] { return in_flight_ == 0; });
}

void BufferQueue::SetFlushPeriod(uint32_t ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    period_ms_ = ms;
  }
  EnsureWorker();
  cv_.notify_all();
}

void BufferQueue::EnsureWorker() {
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_running_) return;
  worker_running_ = true;
  stop_worker_ = false;
  uint64_t generation = ++worker_generation_;
  worker_ = new std::thread([this, generation] { WorkerLoop(generation); });
}

void BufferQueue::WorkerLoop(uint64_t generation) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_worker_ && worker_generation_ == generation) {
    if (period_ms_ > 0) {
      // The period overrides CUPTI's heuristics: full buffers leave only on the tick, however
      // often a filled buffer wakes us before it.
      uint32_t period = period_ms_;
      auto tick = std::chrono::steady_clock::now() + std::chrono::milliseconds(period);
      bool interrupted = cv_.wait_until(lock, tick, [&] {
        return stop_worker_ || worker_generation_ != generation || period_ms_ != period;
      });
      if (interrupted) continue;
    } else {
      cv_.wait(lock, [&] {
        return stop_worker_ || worker_generation_ != generation || !ready_.empty() ||
               period_ms_ > 0;
      });
      if (period_ms_ > 0) continue;
    }
    if (stop_worker_ || worker_generation_ != generation) break;
    // Only full buffers whose records are all complete, as the header says of the periodic
    // flush; partially filled buffers wait for cuptiActivityFlushAll.
    std::deque<std::unique_ptr<Buffer>> keep;
    std::vector<std::unique_ptr<Buffer>> out;
    for (auto& buffer : ready_) {
      if (IsComplete(*buffer)) {
        out.push_back(std::move(buffer));
      } else {
        keep.push_back(std::move(buffer));
      }
    }
    ready_.swap(keep);
    if (out.empty()) continue;
    in_flight_++;
    lock.unlock();
    for (auto& buffer : out) Deliver(std::move(buffer), /*on_worker=*/true);
    lock.lock();
    in_flight_--;
    cv_.notify_all();
    // With no period, a buffer still waiting for timestamps must not make this loop spin.
    if (period_ms_ == 0 && !ready_.empty() && !stop_worker_) {
      cv_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }
}

void BufferQueue::CompletePending(uint64_t start, uint64_t end) {
  auto fill = [&](Buffer& buffer) {
    for (size_t offset : buffer.incomplete) {
      auto* kernel = reinterpret_cast<CUpti_ActivityKernel10*>(buffer.data + offset);
      kernel->start = start;
      kernel->end = end;
      kernel->completed = end;
    }
    buffer.incomplete.clear();
  };
  std::vector<std::shared_ptr<Slot>> slots;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots = slots_;
  }
  slots.push_back(global_slot_);
  for (auto& slot : slots) {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (slot->current) fill(*slot->current);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& buffer : ready_) fill(*buffer);
  }
  cv_.notify_all();
}

void BufferQueue::AddDropped(size_t n) {
  dropped_ += n;
  stats.records_dropped += n;
}

size_t BufferQueue::TakeDropped() {
  return dropped_.exchange(0);
}

size_t BufferQueue::PendingBuffers() {
  size_t pending = 0;
  std::vector<std::shared_ptr<Slot>> slots;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots = slots_;
    pending += ready_.size();
  }
  slots.push_back(global_slot_);
  for (auto& slot : slots) {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (slot->current && slot->current->records > 0) pending++;
  }
  return pending;
}

void BufferQueue::Reset() {
  std::thread* worker = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_worker_ = true;
    worker = worker_;
    worker_ = nullptr;
    worker_running_ = false;
  }
  cv_.notify_all();
  if (worker != nullptr) {
    // cuptiFinalize may be called from a completion callback on the worker itself.
    if (worker->get_id() == std::this_thread::get_id()) {
      worker->detach();
    } else if (worker->joinable()) {
      worker->join();
    }
    delete worker;
  }
  std::lock_guard<std::mutex> lock(mu_);
  slots_.clear();
  global_slot_ = std::make_shared<Slot>();
  ready_.clear();
  g_slot_generation++;
  worker_generation_++;  // a worker that detached itself above leaves its loop
  period_ms_ = 0;
  stop_worker_ = false;
  request_ = nullptr;
  complete_ = nullptr;
  per_thread_ = true;
  zero_buffers_ = true;
  dropped_ = 0;
}

void BufferQueue::PrepareFork() {
  std::vector<std::shared_ptr<Slot>> slots;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots = slots_;
  }
  slots.push_back(global_slot_);
  for (auto& slot : slots) slot->mu.lock();
  mu_.lock();
  fork_locked_ = std::move(slots);
}

void BufferQueue::ParentAfterFork() {
  std::vector<std::shared_ptr<Slot>> slots = std::move(fork_locked_);
  fork_locked_.clear();
  mu_.unlock();
  for (auto& slot : slots) slot->mu.unlock();
}

void BufferQueue::ChildAfterFork() {
  // Only the forking thread exists in the child: the worker is gone (its std::thread object is
  // leaked, since destroying a joinable one would terminate); only a new cuptiActivityFlushPeriod
  // or cuptiActivityRegisterCallbacks starts another. Buffers copied from the parent stay, as
  // they do with the real library: flushing them in the child delivers them a second time.
  worker_ = nullptr;
  worker_running_ = false;
  in_flight_ = 0;
  new (&cv_) std::condition_variable();
  ParentAfterFork();
}

}  // namespace fake_cupti
