#include "format/shared_read.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpuperf {
namespace {

// Hands every call to each of several sinks, in turn.
class TeeSink final : public RecordSink {
 public:
  explicit TeeSink(std::vector<RecordSink*> sinks) : sinks_(std::move(sinks)) {}
  void OnString(StringId id, std::string_view text) override {
    for (RecordSink* s : sinks_) s->OnString(id, text);
  }
  void OnStack(const StackRecord& stack) override {
    for (RecordSink* s : sinks_) s->OnStack(stack);
  }
  void OnSymbol(const SymbolRecord& symbol) override {
    for (RecordSink* s : sinks_) s->OnSymbol(symbol);
  }
  void OnPythonCode(const PythonCodeRecord& code) override {
    for (RecordSink* s : sinks_) s->OnPythonCode(code);
  }
  void OnPcSample(const PcSampleRecord& sample) override {
    for (RecordSink* s : sinks_) s->OnPcSample(sample);
  }
  void OnCubin(const CubinRecord& cubin) override {
    for (RecordSink* s : sinks_) s->OnCubin(cubin);
  }
  void OnSassLine(const SassLineRecord& line) override {
    for (RecordSink* s : sinks_) s->OnSassLine(line);
  }
#define GPUPERF_TEE_ON(Type, name, plural, number)                \
  void On##Type(std::span<const Type##Record> records) override { \
    for (RecordSink * s : sinks_) s->On##Type(records);           \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_TEE_ON)
#undef GPUPERF_TEE_ON

 private:
  std::vector<RecordSink*> sinks_;
};

// The tasks of one RunSharingReads and the reads they wait in.
class ReadSession {
 public:
  explicit ReadSession(size_t tasks) : running_(tasks) {}

  Status Read(const std::string& path, const ReadOptions& options, RecordSink& sink,
              ReadReport* report) {
    Request request{
        path, {options.chunk_types.begin(), options.chunk_types.end()}, options, &sink, report};
    std::sort(request.types.begin(), request.types.end());
    std::unique_lock lock(mutex_);
    ++stats_.reads;
    waiting_.push_back(&request);
    ServeWhileAllWait(lock);
    served_.wait(lock, [&] { return request.done; });
    return request.status;
  }

  // A task has ended: it reads no more.
  void Leave() {
    std::unique_lock lock(mutex_);
    --running_;
    ServeWhileAllWait(lock);
  }

  SharedReadStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  struct Request {
    std::string path;
    std::vector<uint16_t> types;  // sorted; empty: every chunk
    ReadOptions options;
    RecordSink* sink;
    ReadReport* report;
    mutable Status status;
    bool done = false;
  };

  // A reader adds to the report it is given. One already holding something gets a pass of
  // its own, so that it ends up as a read of its own would leave it.
  static bool Fresh(const ReadReport* r) { return r == nullptr || *r == ReadReport{}; }

  static bool SamePass(const Request& a, const Request& b) {
    if (&a == &b) return true;
    return a.path == b.path && a.types == b.types && Fresh(a.report) && Fresh(b.report);
  }

  // Once every running task waits in a read, serves one group of them: the reads of some
  // chunk types first (they are small, and the tasks read everything after them), then
  // those of everything.
  void ServeWhileAllWait(std::unique_lock<std::mutex>& lock) {
    while (!waiting_.empty() && waiting_.size() == running_) {
      auto leader = std::find_if(waiting_.begin(), waiting_.end(),
                                 [](const Request* r) { return !r->types.empty(); });
      if (leader == waiting_.end()) leader = waiting_.begin();
      const Request& first = **leader;
      std::vector<Request*> group;
      for (Request* r : waiting_) {
        if (SamePass(*r, first)) group.push_back(r);
      }
      std::erase_if(waiting_, [&](const Request* r) { return SamePass(*r, first); });
      ++stats_.passes;
      lock.unlock();
      Serve(group);
      lock.lock();
      for (Request* r : group) r->done = true;
      served_.notify_all();
    }
  }

  // One pass for the group; each gets the same status and report.
  static void Serve(const std::vector<Request*>& group) {
    const Request& first = *group.front();
    ReadOptions options = first.options;
    options.chunk_types = first.types;
    if (group.size() == 1) {
      first.status = format::ReadTraceAlone(first.path, options, *first.sink, first.report);
      return;
    }
    std::vector<RecordSink*> sinks;
    for (const Request* r : group) sinks.push_back(r->sink);
    TeeSink tee(std::move(sinks));
    ReadReport report;
    const Status status = format::ReadTraceAlone(first.path, options, tee, &report);
    for (Request* r : group) {
      r->status = status;
      if (r->report != nullptr) *r->report = report;
    }
  }

  std::mutex mutex_;
  std::condition_variable served_;
  size_t running_;
  std::vector<Request*> waiting_;
  SharedReadStats stats_;
};

thread_local ReadSession* current_session = nullptr;

}  // namespace

std::vector<Status> RunSharingReads(const std::vector<std::function<Status()>>& tasks,
                                    SharedReadStats* stats) {
  std::vector<Status> results(tasks.size());
  ReadSession session(tasks.size());
  std::vector<std::thread> threads;
  threads.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    threads.emplace_back([&, i] {
      current_session = &session;
      results[i] = tasks[i]();
      current_session = nullptr;
      session.Leave();
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (stats != nullptr) *stats = session.stats();
  return results;
}

namespace format {

bool ReadShared(const std::string& path, const ReadOptions& options, RecordSink& sink,
                ReadReport* report, Status* status) {
  if (current_session == nullptr) return false;
  *status = current_session->Read(path, options, sink, report);
  return true;
}

}  // namespace format
}  // namespace gpuperf
