// libFuzzer target: the reader must survive any bytes (no crash, no hang, no huge
// allocation) and report damage through ReadReport, never through a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "gpuperf/trace_reader.h"

namespace {

class CountingSink final : public gpuperf::RecordSink {
 public:
  void OnKernel(std::span<const gpuperf::KernelRecord> records) override {
    count_ += records.size();
  }
  void OnStack(const gpuperf::StackRecord& stack) override { count_ += stack.pcs.size(); }
  size_t count_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CountingSink sink;
  gpuperf::ReadReport report;
  // One, two or three reading threads, as the input's length says: the threads that decode
  // ahead see the same damaged bytes as the one that takes the chunks up.
  gpuperf::ReadOptions options;
  options.threads = 1 + static_cast<unsigned>(size % 3);
  (void)gpuperf::ReadTraceBytes(std::span<const uint8_t>(data, size), "fuzz", sink, &report,
                                options);
  return 0;
}
