#include "inject/name_table.h"

#include <cstring>

namespace gpuperf::inject {

StringId NameTable::InternLocked(std::string_view text) {
  if (text.empty()) return 0;
  auto it = by_text_.find(std::string(text));
  if (it != by_text_.end()) return it->second;
  StringId id = next_id_++;
  auto added = by_text_.emplace(std::string(text), id).first;
  by_id_.push_back(&added->first);
  new_.emplace_back(id, std::string(text));
  return id;
}

StringId NameTable::InternLocked(const char* text) {
  if (text == nullptr || *text == '\0') return 0;
  auto it = by_pointer_.find(text);
  if (it != by_pointer_.end() && std::strcmp(it->second.text->c_str(), text) == 0) {
    return it->second.id;
  }
  StringId id = InternLocked(std::string_view(text));
  auto entry = by_text_.find(std::string(text));
  by_pointer_[text] = PointerEntry{id, &entry->first};
  return id;
}

std::string NameTable::TextOf(StringId id) {
  auto lock = Lock();
  return id >= 1 && id <= by_id_.size() ? *by_id_[id - 1] : std::string();
}

void NameTable::DrainNew(std::vector<std::pair<StringId, std::string>>& out) {
  auto lock = Lock();
  for (auto& item : new_) out.push_back(std::move(item));
  new_.clear();
}

}  // namespace gpuperf::inject
