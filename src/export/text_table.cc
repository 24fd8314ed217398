#include "export/text_table.h"

#include <algorithm>

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

void TextTable::Render(std::ostream& out, std::string_view indent) const {
  const size_t columns = headers_.size();
  std::vector<size_t> widths(columns);
  for (size_t c = 0; c < columns; ++c) widths[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text(indent);
    for (size_t c = 0; c < columns; ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
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
