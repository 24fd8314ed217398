// An std::ostream that gzips into a file (zlib, linked statically), for .json.gz and
// other compressed outputs. Close() reports whether every byte reached the disk.
#pragma once

#include <cstdio>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf {

class GzipFileStream : public std::ostream {
 public:
  // level: zlib's 1 (fast) .. 9 (small).
  static Result<std::unique_ptr<GzipFileStream>> Create(const std::string& path, int level = 6);
  ~GzipFileStream() override;
  Status Close();

 private:
  class Buffer;
  explicit GzipFileStream(std::unique_ptr<Buffer> buffer);
  std::unique_ptr<Buffer> buffer_;
};

}  // namespace gpuperf
