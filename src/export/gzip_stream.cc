#include "export/gzip_stream.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpuperf {

class GzipStream::Buffer : public std::streambuf {
 public:
  explicit Buffer(std::ostream& sink) : sink_(&sink), input_(1 << 16) {
    setp(input_.data(), input_.data() + input_.size());
  }
  ~Buffer() override { (void)Close(); }

  bool Init(int level) {
    std::memset(&zs_, 0, sizeof(zs_));
    // windowBits 15 + 16: a gzip header and trailer instead of a zlib one.
    initialized_ = deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    return initialized_;
  }

  Status Close() {
    if (!sink_) return status_;
    sync();
    Deflate(Z_FINISH);
    if (initialized_) deflateEnd(&zs_);
    if (!sink_->flush() && status_.ok()) Failed();
    sink_ = nullptr;
    return status_;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  int sync() override {
    if (!sink_ || !status_.ok()) return -1;
    zs_.next_in = reinterpret_cast<Bytef*>(pbase());
    zs_.avail_in = static_cast<uInt>(pptr() - pbase());
    Deflate(Z_NO_FLUSH);
    setp(input_.data(), input_.data() + input_.size());
    return status_.ok() ? 0 : -1;
  }

 private:
  void Deflate(int flush) {
    unsigned char out[1 << 16];
    int rc;
    do {
      zs_.next_out = out;
      zs_.avail_out = sizeof(out);
      rc = deflate(&zs_, flush);
      const size_t have = sizeof(out) - zs_.avail_out;
      if (have && !sink_->write(reinterpret_cast<const char*>(out), have)) {
        Failed();
        return;
      }
    } while (zs_.avail_out == 0 || (flush == Z_FINISH && rc == Z_OK));
  }

  // The sink knows why it failed (its owner reports that); this stops the compression.
  void Failed() {
    if (status_.ok())
      status_ = Error(StatusCode::kIoError, "the compressed output was not written");
  }

  std::ostream* sink_;
  std::vector<char> input_;
  z_stream zs_;
  bool initialized_ = false;
  Status status_;
};

GzipStream::GzipStream(std::unique_ptr<Buffer> buffer)
    : std::ostream(buffer.get()), buffer_(std::move(buffer)) {}

GzipStream::~GzipStream() {
  (void)Close();
}

Status GzipStream::Close() {
  return buffer_->Close();
}

Result<std::unique_ptr<GzipStream>> GzipStream::Create(std::ostream& sink, int level) {
  auto buffer = std::make_unique<Buffer>(sink);
  if (!buffer->Init(level)) return Error(StatusCode::kInternal, "zlib initialization failed");
  return std::unique_ptr<GzipStream>(new GzipStream(std::move(buffer)));
}

}  // namespace gpuperf
