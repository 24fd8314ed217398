// This process's live page (src/live, docs/live.md), kept up to date by the writer thread from
// the records it handles anyway: app threads and CUPTI's threads do nothing for it. The page
// is published every flush period and removed when the trace closes.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "format/live_accumulator.h"
#include "format/live_page_file.h"
#include "gpuperf/records.h"
#include "inject/name_table.h"
#include "inject/record_batch.h"

namespace gpuperf::inject {

struct LiveIdentity {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  uint64_t start_monotonic_ns = 0;
  std::string command;
  std::string host;
};

class LiveRecorder {
 public:
  // Creates the page in the live directory. When it cannot, says so once and stays off.
  void Start(const LiveIdentity& identity, NameTable& names);

  // Writer thread only, from here on.
  void Fold(const std::deque<std::unique_ptr<RecordBatch>>& batches,
            const std::vector<ApiRecord>& api_calls);
  void Publish(uint64_t now_ns, bool capturing);
  // The last publish, then the page goes: the process is ending.
  void Close(uint64_t now_ns, bool capturing);

  bool active() const { return file_ != nullptr; }

 private:
  std::unique_ptr<live::LivePageFile> file_;
  std::unique_ptr<live::LiveAccumulator> accumulator_;
};

}  // namespace gpuperf::inject
