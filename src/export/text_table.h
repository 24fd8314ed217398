// Aligned plain-text tables for terminal reports: columns sized to their widest cell
// (counted in characters, so "µs" is two wide, not three), numbers right-aligned.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  void AddColumn(std::string header, Align align = Align::kRight) {
    headers_.push_back(std::move(header));
    aligns_.push_back(align);
  }
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }

  void Render(std::ostream& out, std::string_view indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

// Characters in a UTF-8 string (its display width for the text we print).
size_t DisplayWidth(std::string_view text);

// Cuts `text` to at most `width` characters, ending in "…" when cut.
std::string Ellipsize(std::string_view text, size_t width);

}  // namespace gpuperf
