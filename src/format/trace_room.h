// Room in a trace file for its next chunk. A full disk or the file size limit (`ulimit -f`)
// costs whole chunks, counted, and never the trace's end: every chunk but the last few leaves
// kTraceEndReserve bytes free after it, which only the end may use (docs/recording.md "A full
// disk").
#pragma once

#include <cstdint>

#include "gpuperf/status.h"

namespace gpuperf::format {

// What a trace's end needs, with room to spare: its final stats chunk, the final process and
// clock records, each chunk with its 24-byte header and zstd's frame. Measured: 1,473 bytes
// with all 127 counters set to values that do not compress (the records-not-written counts by
// kind add at most 30 more), about 280 bytes with 40 counters set, as a recording has.
inline constexpr uint64_t kTraceEndReserve = 4096;

class TraceRoom {
 public:
  // Makes room for `bytes` at offset `end` of the trace file `fd`, and unless `is_end` for the
  // reserve after them: within the file size limit, and on file systems that can, with the
  // disk blocks taken now (fallocate, the file's size unchanged), so that writing them cannot
  // fail for want of space. An error says why there is no room; nothing was written then.
  Status Make(int fd, uint64_t end, uint64_t bytes, bool is_end);

  // Gives back the blocks taken past `end`, the file's final size.
  void Release(int fd, uint64_t end);

 private:
  bool can_preallocate_ = true;  // false once the file system said it cannot
  uint64_t taken_to_ = 0;        // the file's blocks were taken up to here
};

}  // namespace gpuperf::format
