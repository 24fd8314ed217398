#include "format/read_ahead.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

namespace gpuperf {
namespace {

constexpr size_t kMaxBytes = 8 << 20;

struct StringItem {
  StringId id;
  std::string text;
};

// One callback of RecordSink, with a copy of what it was given.
using Item = std::variant<StringItem, StackRecord, SymbolRecord, PythonCodeRecord, PcSampleRecord,
                          CubinRecord,
                          SassLineRecord
#define GPUPERF_ITEM(Type, name, plural, number) , std::vector<Type##Record>
                              GPUPERF_FIXED_RECORD_TYPES(GPUPERF_ITEM)
#undef GPUPERF_ITEM
                          >;

// Items from the reading thread to the calling one.
class Handover {
 public:
  void Put(Item item, size_t bytes) {
    std::unique_lock lock(mutex_);
    // One item always fits, however large, so a huge batch cannot stall the reader.
    changed_.wait(lock, [&] { return queued_bytes_ == 0 || queued_bytes_ + bytes <= kMaxBytes; });
    items_.emplace_back(std::move(item), bytes);
    queued_bytes_ += bytes;
    changed_.notify_all();
  }
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  // The next item; false when the reader is done and nothing is left.
  bool Take(Item& item) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    item = std::move(items_.front().first);
    queued_bytes_ -= items_.front().second;
    items_.pop_front();
    changed_.notify_all();
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<Item, size_t>> items_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
};

// The sink the reading thread reads into: it hands each callback over.
class HandoverSink final : public RecordSink {
 public:
  explicit HandoverSink(Handover& handover) : handover_(handover) {}
  void OnString(StringId id, std::string_view text) override {
    handover_.Put(StringItem{id, std::string(text)}, text.size() + sizeof(StringItem));
  }
  void OnStack(const StackRecord& stack) override {
    handover_.Put(stack, sizeof(stack) + stack.pcs.size() * sizeof(uint64_t));
  }
  void OnSymbol(const SymbolRecord& symbol) override {
    handover_.Put(symbol, sizeof(symbol) + symbol.frames.size() * sizeof(SymbolFrame));
  }
  void OnPythonCode(const PythonCodeRecord& code) override { handover_.Put(code, sizeof(code)); }
  void OnPcSample(const PcSampleRecord& sample) override {
    handover_.Put(sample, sizeof(sample) + sample.stalls.size() * sizeof(PcStallCount));
  }
  void OnCubin(const CubinRecord& cubin) override { handover_.Put(cubin, sizeof(cubin)); }
  void OnSassLine(const SassLineRecord& line) override { handover_.Put(line, sizeof(line)); }
#define GPUPERF_HAND_OVER(Type, name, plural, number)                        \
  void On##Type(std::span<const Type##Record> records) override {            \
    handover_.Put(std::vector<Type##Record>(records.begin(), records.end()), \
                  records.size() * sizeof(Type##Record));                    \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_HAND_OVER)
#undef GPUPERF_HAND_OVER

 private:
  Handover& handover_;
};

// Makes on `sink` the call that `item` stands for.
struct Deliver {
  RecordSink& sink;
  void operator()(const StringItem& s) const { sink.OnString(s.id, s.text); }
  void operator()(const StackRecord& r) const { sink.OnStack(r); }
  void operator()(const SymbolRecord& r) const { sink.OnSymbol(r); }
  void operator()(const PythonCodeRecord& r) const { sink.OnPythonCode(r); }
  void operator()(const PcSampleRecord& r) const { sink.OnPcSample(r); }
  void operator()(const CubinRecord& r) const { sink.OnCubin(r); }
  void operator()(const SassLineRecord& r) const { sink.OnSassLine(r); }
#define GPUPERF_DELIVER(Type, name, plural, number)           \
  void operator()(const std::vector<Type##Record>& r) const { \
    sink.On##Type(r);                                         \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_DELIVER)
#undef GPUPERF_DELIVER
};

}  // namespace

Status ReadAhead(const std::function<Status(RecordSink&)>& read, RecordSink& sink) {
  Handover handover;
  Status status;
  std::thread reader([&] {
    HandoverSink handover_sink(handover);
    status = read(handover_sink);
    handover.Close();
  });
  Item item;
  const Deliver deliver{sink};
  while (handover.Take(item)) std::visit(deliver, item);
  reader.join();
  return status;
}

}  // namespace gpuperf
