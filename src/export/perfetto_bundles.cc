#include "export/perfetto_bundles.h"

#include <zstd.h>

#include <utility>

#include "export/perfetto_fields.h"

namespace gpuperf {
namespace {

namespace pf = perfetto_fields;

// zstd's fastest regular level: a 10 M-kernel timeline is a gigabyte of packets, and
// level 1 keeps up with the encoder on a second core.
constexpr int kLevel = 1;

}  // namespace

PerfettoBundles::PerfettoBundles(std::ostream& out, bool compress)
    : out_(out), compress_(compress), context_(ZSTD_createCCtx(), ZSTD_freeCCtx) {
  if (compress_) worker_ = std::thread([this] { Work(); });
}

PerfettoBundles::~PerfettoBundles() {
  if (worker_.joinable()) (void)Finish();
}

void PerfettoBundles::Write(ByteBuffer& packets) {
  if (packets.empty()) return;
  if (!compress_) {
    out_.write(packets.data(), static_cast<std::streamsize>(packets.size()));
    packets.clear();
    return;
  }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !has_pending_; });
  std::swap(pending_, packets);  // `packets` gets the worker's last, emptied buffer
  has_pending_ = true;
  changed_.notify_all();
}

void PerfettoBundles::Compress(const ByteBuffer& packets, ByteBuffer& compressed,
                               ByteBuffer& framed) {
  const size_t bound = ZSTD_compressBound(packets.size());
  compressed.clear();
  const size_t size = ZSTD_compressCCtx(context_.get(), compressed.Grow(bound), bound,
                                        packets.data(), packets.size(), kLevel);
  framed.clear();
  if (ZSTD_isError(size)) {
    failed_ = true;
    return;
  }
  compressed.Truncate(size);
  FastProtoWriter w(framed);
  auto packet = w.BeginNested(pf::trace::kPacket);
  w.Bytes(pf::packet::kZstdCompressedPackets, compressed.view());
  w.EndNested(packet);
}

void PerfettoBundles::Work() {
  ByteBuffer work, compressed, framed;
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return has_pending_ || finishing_; });
    if (!has_pending_) return;  // finishing, and nothing left
    std::swap(work, pending_);
    has_pending_ = false;
    changed_.notify_all();
    lock.unlock();
    Compress(work, compressed, framed);
    out_.write(framed.data(), static_cast<std::streamsize>(framed.size()));
    work.clear();
    lock.lock();
  }
}

Status PerfettoBundles::Finish() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      finishing_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  out_.flush();
  if (failed_) return Error(StatusCode::kInternal, "cannot compress the Perfetto trace");
  if (!out_) return Error(StatusCode::kIoError, "cannot write the Perfetto trace");
  return Status::Ok();
}

}  // namespace gpuperf
