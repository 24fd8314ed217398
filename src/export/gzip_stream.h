// An std::ostream that gzips into another stream (zlib, linked statically), for .json.gz
// and other compressed outputs. Close() finishes the gzip data and reports whether every
// byte reached the sink; the sink's owner closes it and knows why a write failed.
#pragma once

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf {

class GzipStream : public std::ostream {
 public:
  // level: zlib's 1 (fast) .. 9 (small). The default is 1: timelines are large and
  // repetitive, so level 1 still shrinks them ~10x at about half the CPU time of level 6
  // (10 M kernels: the .json.gz is ~1/3 larger than at level 6).
  static constexpr int kDefaultLevel = 1;
  static Result<std::unique_ptr<GzipStream>> Create(std::ostream& sink, int level = kDefaultLevel);
  ~GzipStream() override;
  Status Close();

 private:
  class Buffer;
  explicit GzipStream(std::unique_ptr<Buffer> buffer);
  std::unique_ptr<Buffer> buffer_;
};

}  // namespace gpuperf
