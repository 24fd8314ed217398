// Interns names (kernel names, API names, NVTX strings, paths) into StringIds on any
// thread. CUPTI hands out `const char*` into its own memory; we cache by pointer and
// check the text, so a reused pointer can never mislabel a kernel.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf::inject {

class NameTable {
 public:
  // Lock for a batch of Intern calls (the translator holds it for a whole buffer).
  std::unique_lock<std::mutex> Lock() { return std::unique_lock<std::mutex>(mutex_); }

  // Requires the lock. Returns 0 for null/empty.
  StringId InternLocked(const char* text);
  StringId InternLocked(std::string_view text);

  StringId Intern(std::string_view text) {
    auto lock = Lock();
    return InternLocked(text);
  }

  // The text of an id ("" for 0 or an unknown id). Takes the lock.
  std::string TextOf(StringId id);

  // Strings added since the last call, in id order (for the writer thread).
  void DrainNew(std::vector<std::pair<StringId, std::string>>& out);

 private:
  struct PointerEntry {
    StringId id;
    const std::string* text;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, StringId> by_text_;
  std::unordered_map<const char*, PointerEntry> by_pointer_;
  std::vector<const std::string*> by_id_;  // id - 1 -> key of by_text_ (nodes do not move)
  std::vector<std::pair<StringId, std::string>> new_;
  StringId next_id_ = 1;
};

}  // namespace gpuperf::inject
