#include "export/text_table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace gpuperf {

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

std::string Ellipsize(std::string_view text, size_t width) {
  if (DisplayWidth(text) <= width || width == 0) return std::string(text);
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = text[i];
    if ((c & 0xC0) != 0x80) {
      if (chars == width - 1) break;
      ++chars;
    }
    out += text[i];
  }
  return out + "…";
}

size_t TerminalWidth(int fd) {
  if (!isatty(fd)) return 0;
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long value = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && value > 0) return static_cast<size_t>(value);
  }
  struct winsize size {};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::vector<size_t> TextTable::FittedWidths(std::string_view indent) const {
  const size_t columns = headers_.size();
  std::vector<size_t> widths(columns);
  for (size_t c = 0; c < columns; ++c) widths[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  if (max_width_ == 0 || columns == 0) return widths;
  size_t total = DisplayWidth(indent) + 2 * (columns - 1);
  for (size_t w : widths) total += w;
  while (total > max_width_) {
    size_t widest = columns;  // the widest name column that can still give up a character
    for (size_t c = 0; c < columns; ++c) {
      if (aligns_[c] == Align::kLeft && widths[c] > kMinNameWidth &&
          (widest == columns || widths[c] > widths[widest])) {
        widest = c;
      }
    }
    if (widest == columns) break;  // only numbers left: wider than asked, never wrong
    --widths[widest];
    --total;
  }
  return widths;
}

void TextTable::Render(std::ostream& out, std::string_view indent) const {
  const size_t columns = headers_.size();
  const std::vector<size_t> widths = FittedWidths(indent);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text(indent);
    for (size_t c = 0; c < columns; ++c) {
      const std::string cell = Ellipsize(c < cells.size() ? cells[c] : std::string(), widths[c]);
      const size_t pad = widths[c] - DisplayWidth(cell);
      const bool last = c + 1 == columns;
      if (aligns_[c] == Align::kRight) {
        text.append(pad, ' ');
        text += cell;
      } else {
        text += cell;
        if (!last) text.append(pad, ' ');
      }
      if (!last) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  line(headers_);
  std::vector<std::string> rule(columns);
  for (size_t c = 0; c < columns; ++c) rule[c] = std::string(widths[c], '-');
  line(rule);
  for (const auto& row : rows_) line(row);
}

}  // namespace gpuperf
