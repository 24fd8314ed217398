// The writer's side of a live page file: created, mapped shared, announced, removed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "format/live_page.h"
#include "gpuperf/status.h"

namespace gpuperf::live {

class LivePageFile {
 public:
  // Creates <dir>/<pid>.live (0600; an older page of the same pid is replaced), writes the
  // identity and then the header, so readers never see a page without one.
  static Result<std::unique_ptr<LivePageFile>> Create(const std::string& dir,
                                                      const Identity& identity);
  ~LivePageFile();
  LivePageFile(const LivePageFile&) = delete;
  LivePageFile& operator=(const LivePageFile&) = delete;

  Page& page() { return *page_; }
  const std::string& path() const { return path_; }

  // Takes the file away (the process is ending); the mapping stays usable.
  void Remove();

 private:
  LivePageFile(std::string path, Page* page) : path_(std::move(path)), page_(page) {}
  std::string path_;
  Page* page_;
  bool removed_ = false;
};

}  // namespace gpuperf::live
