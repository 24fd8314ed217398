// Aligned plain-text tables for terminal reports: columns sized to their widest cell
// (counted in characters, so "µs" is two wide, not three), numbers right-aligned. With a
// width limit (a terminal's width), left-aligned columns (names) are cut to fit; numbers
// never are.
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

  // Lines no wider than `max_width` characters when the names can be cut that far (0:
  // no limit): the widest left-aligned column gives up width first, down to
  // kMinNameWidth, and its cells end in "…".
  void set_max_width(size_t max_width) { max_width_ = max_width; }
  static constexpr size_t kMinNameWidth = 12;

  void Render(std::ostream& out, std::string_view indent = "  ") const;

 private:
  std::vector<size_t> FittedWidths(std::string_view indent) const;

  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
  size_t max_width_ = 0;
};

// The width a report written to `fd` should fit: 0 (no limit) unless `fd` is a terminal;
// then $COLUMNS when set to a number, else the terminal's own width, else 80.
size_t TerminalWidth(int fd);

// Characters in a UTF-8 string (its display width for the text we print).
size_t DisplayWidth(std::string_view text);

// Cuts `text` to at most `width` characters, ending in "…" when cut.
std::string Ellipsize(std::string_view text, size_t width);

}  // namespace gpuperf
