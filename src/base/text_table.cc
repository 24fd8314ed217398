#include "base/text_table.h"

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

std::string Ellipsize(std::string_view bytes, size_t width) {
  std::string storage;
  const std::string_view text = EscapedView(bytes, TextForm::kDisplay, storage);
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

namespace {

// The stream's slot for SetTableWidth.
int TableWidthSlot() {
  static const int slot = std::ios_base::xalloc();
  return slot;
}

}  // namespace

void SetTableWidth(std::ostream& out, size_t max_width) {
  out.iword(TableWidthSlot()) = static_cast<long>(max_width);
}

std::vector<size_t> TextTable::FittedWidths(std::string_view indent, size_t max_width) const {
  const size_t columns = headers_.size();
  std::vector<size_t> widths(columns);
  for (size_t c = 0; c < columns; ++c) widths[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  if (max_width == 0 || columns == 0) return widths;
  // Leave out columns (highest drop order first) while the lines would be too wide even
  // with every name cut to kMinNameWidth; then cut the widest names until they fit.
  size_t total = DisplayWidth(indent) - 2, shortest = DisplayWidth(indent) - 2;
  for (size_t c = 0; c < columns; ++c) {
    total += widths[c] + 2;
    shortest += (aligns_[c] == Align::kLeft ? std::min(widths[c], kMinNameWidth) : widths[c]) + 2;
  }
  while (shortest > max_width) {
    size_t drop = columns;
    for (size_t c = 0; c < columns; ++c) {
      if (widths[c] != kDropped && drop_orders_[c] > 0 &&
          (drop == columns || drop_orders_[c] > drop_orders_[drop])) {
        drop = c;
      }
    }
    if (drop == columns) break;
    const size_t natural = widths[drop];
    total -= natural + 2;
    shortest -= (aligns_[drop] == Align::kLeft ? std::min(natural, kMinNameWidth) : natural) + 2;
    widths[drop] = kDropped;
  }
  while (total > max_width) {
    size_t widest = columns;  // the widest name column that can still give up a character
    for (size_t c = 0; c < columns; ++c) {
      if (widths[c] != kDropped && aligns_[c] == Align::kLeft && widths[c] > kMinNameWidth &&
          (widest == columns || widths[c] > widths[widest])) {
        widest = c;
      }
    }
    if (widest == columns) break;  // wider than asked, never wrong
    --widths[widest];
    --total;
  }
  return widths;
}

void TextTable::Render(std::ostream& out, std::string_view indent) const {
  const size_t columns = headers_.size();
  const size_t stream_width = static_cast<size_t>(std::max(0L, out.iword(TableWidthSlot())));
  const std::vector<size_t> widths = FittedWidths(indent, max_width_ ? max_width_ : stream_width);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text(indent);
    bool first = true;
    for (size_t c = 0; c < columns; ++c) {
      if (widths[c] == kDropped) continue;
      if (!first) text += "  ";
      first = false;
      const std::string cell = Ellipsize(c < cells.size() ? cells[c] : std::string(), widths[c]);
      const size_t pad = widths[c] - DisplayWidth(cell);
      if (aligns_[c] == Align::kRight) text.append(pad, ' ');
      text += cell;
      if (aligns_[c] == Align::kLeft) text.append(pad, ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  line(headers_);
  std::vector<std::string> rule(columns);
  for (size_t c = 0; c < columns; ++c) {
    if (widths[c] != kDropped) rule[c] = std::string(widths[c], '-');
  }
  line(rule);
  for (const auto& row : rows_) line(row);
}

std::string InnermostFrames(const std::vector<std::string>& stack, size_t n) {
  std::string text;
  for (size_t i = 0; i < stack.size() && i < n; ++i) text += (i ? " <- " : "") + stack[i];
  return text.empty() ? "(no stack)" : text;
}

void WriteHeading(std::ostream& out, std::string_view title, std::string_view note) {
  out << '\n' << title;
  if (!note.empty()) out << "  (" << note << ")";
  out << '\n';
}

void WriteNote(std::ostream& out, std::string_view bytes, std::string_view indent) {
  std::string storage;
  std::string_view text = EscapedView(bytes, TextForm::kDisplay, storage);
  const size_t width = static_cast<size_t>(std::max(0L, out.iword(TableWidthSlot())));
  std::string line(indent);
  size_t line_width = DisplayWidth(indent);
  bool empty = true;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    const size_t word_width = DisplayWidth(word);
    if (!empty && width > 0 && line_width + 1 + word_width > width) {
      out << line << '\n';
      line.assign(indent);
      line_width = DisplayWidth(indent);
      empty = true;
    }
    if (!empty) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += word_width;
    empty = false;
  }
  out << line << '\n';
}

}  // namespace gpuperf
