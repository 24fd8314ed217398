// Where the Perfetto writer's packets go: straight to the output, or compressed in
// bundles as Perfetto's own tracing service writes them (TracePacket.zstd_compressed_packets:
// a zstd frame holding a run of whole packets), on a second thread while the first
// encodes the next run.
//
// The output depends only on the packets: a bundle closes at the first packet boundary
// past a fixed size, and each bundle is one zstd frame at a fixed level.
#pragma once

#include <zstd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "export/protobuf_writer.h"
#include "gpuperf/status.h"

namespace gpuperf {

class PerfettoBundles {
 public:
  // Uncompressed runs of at least this size make one bundle.
  static constexpr size_t kBundleBytes = 1 << 20;

  PerfettoBundles(std::ostream& out, bool compress);
  ~PerfettoBundles();

  // Takes `packets`, a run of whole framed packets (Trace.packet fields), and leaves an
  // empty buffer in its place for the next run.
  void Write(ByteBuffer& packets);
  // Writes what is left and flushes; an output or compression error, if one happened.
  Status Finish();

 private:
  // `packets` as one bundle packet in `framed`.
  void Compress(const ByteBuffer& packets, ByteBuffer& compressed, ByteBuffer& framed);
  void Work();

  std::ostream& out_;
  const bool compress_;
  // The worker's compression context, kept from bundle to bundle.
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> context_;
  std::mutex mutex_;
  std::condition_variable changed_;
  ByteBuffer pending_;  // the run the worker compresses next
  bool has_pending_ = false;
  bool finishing_ = false;
  bool failed_ = false;
  std::thread worker_;
};

}  // namespace gpuperf
