// Aligned plain-text tables for terminal reports: columns sized to their widest cell
// (counted in characters, so "µs" is two wide, not three), numbers right-aligned. With a
// width limit (a terminal's width), left-aligned columns (names) are cut to fit; numbers
// never are.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/text_escape.h"

namespace gpuperf {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  // drop_order > 0: a column that a width limit may leave out, highest order first, once
  // the names are cut to kMinNameWidth and the lines are still too wide.
  void AddColumn(std::string header, Align align = Align::kRight, int drop_order = 0) {
    headers_.push_back(DisplayText(header));
    aligns_.push_back(align);
    drop_orders_.push_back(drop_order);
  }
  // Cells are bytes, names from a recorded program among them: they are kept in the
  // display form of base/text_escape.h, so no cell can break a line or steer a terminal.
  void AddRow(std::vector<std::string> cells) {
    for (std::string& cell : cells) {
      std::string storage;
      if (EscapedView(cell, TextForm::kDisplay, storage).data() != cell.data()) cell = storage;
    }
    rows_.push_back(std::move(cells));
  }
  bool empty() const { return rows_.empty(); }

  // Lines no wider than `max_width` characters where names can be cut and columns left
  // out that far (0: the stream's SetTableWidth, else no limit): the widest left-aligned
  // column gives up width first, down to kMinNameWidth, its cells ending in "…"; then
  // columns with a drop_order go.
  void set_max_width(size_t max_width) { max_width_ = max_width; }
  static constexpr size_t kMinNameWidth = 12;

  void Render(std::ostream& out, std::string_view indent = "  ") const;

 private:
  static constexpr size_t kDropped = static_cast<size_t>(-1);  // a width: left out
  std::vector<size_t> FittedWidths(std::string_view indent, size_t max_width) const;

  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<int> drop_orders_;
  std::vector<std::vector<std::string>> rows_;
  size_t max_width_ = 0;
};

// The width limit of every table rendered to `out` from now on (0: none). Set once by
// the command that knows `out` is a terminal; the report's many tables follow it.
void SetTableWidth(std::ostream& out, size_t max_width);

// Writes `text` as one line after `indent`, or, under a SetTableWidth limit, as several
// that fit it (broken at spaces; a word longer than the limit stays whole). The text is
// written in the display form of base/text_escape.h: a name in it cannot break the line.
void WriteNote(std::ostream& out, std::string_view text, std::string_view indent = "  ");

// A section's heading in a text report: a blank line, the title, and the note in parentheses
// when there is one.
void WriteHeading(std::ostream& out, std::string_view title, std::string_view note = "");

// The innermost `n` frames of a stack (innermost first) on one line, "a <- b <- c", or
// "(no stack)" for an empty one.
std::string InnermostFrames(const std::vector<std::string>& stack, size_t n);

// The width a report written to `fd` should fit: 0 (no limit) unless `fd` is a terminal;
// then $COLUMNS when set to a number, else the terminal's own width, else 80.
size_t TerminalWidth(int fd);

// Characters in a UTF-8 string (its display width for the text we print).
size_t DisplayWidth(std::string_view text);

// `text` in the display form of base/text_escape.h, cut to at most `width` characters
// (0: not cut), ending in "…" when cut.
std::string Ellipsize(std::string_view text, size_t width);

}  // namespace gpuperf
