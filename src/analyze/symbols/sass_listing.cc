#include "analyze/symbols/sass_listing.h"

#include <cctype>
#include <cstdlib>

namespace gpuperf {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// ".text.<name>:" or ".section .text.<name>,..." names the function whose code follows.
bool FunctionHeader(std::string_view line, std::string* name) {
  line = Trim(line);
  if (line.starts_with(".section")) {
    line = Trim(line.substr(8));
    const size_t comma = line.find(',');
    if (comma != std::string_view::npos) line = line.substr(0, comma);
    line = Trim(line);
  } else if (line.ends_with(":")) {
    line.remove_suffix(1);
  } else {
    return false;
  }
  if (!line.starts_with(".text.") || line.size() == 6) return false;
  *name = std::string(line.substr(6));
  return true;
}

}  // namespace

SassListing ParseSassListing(std::string_view text) {
  SassListing listing;
  std::string function;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    std::string header;
    if (FunctionHeader(line, &header)) {
      function = header;
      continue;
    }
    // "        /*0070*/                   FFMA R4, R2, R3, R4 ;   /* 0x... */"
    std::string_view rest = Trim(line);
    if (function.empty() || !rest.starts_with("/*")) continue;
    const size_t close = rest.find("*/");
    if (close == std::string_view::npos) continue;
    const std::string offset_text(rest.substr(2, close - 2));
    char* parsed_end = nullptr;
    const uint64_t offset = std::strtoull(offset_text.c_str(), &parsed_end, 16);
    if (offset_text.empty() || *parsed_end != '\0') continue;
    rest = Trim(rest.substr(close + 2));
    // Drop an encoding comment after the instruction, then the ';'.
    if (const size_t comment = rest.find("/*"); comment != std::string_view::npos) {
      rest = Trim(rest.substr(0, comment));
    }
    if (rest.ends_with(";")) rest = Trim(rest.substr(0, rest.size() - 1));
    if (rest.starts_with("{")) rest = Trim(rest.substr(1));
    if (rest.ends_with("}")) rest = Trim(rest.substr(0, rest.size() - 1));
    if (!rest.empty()) listing[function][offset] = std::string(rest);
  }
  return listing;
}

}  // namespace gpuperf
