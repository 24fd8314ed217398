#include "base/json_output.h"

namespace gpuperf {
namespace {

void AppendUnicodeEscape(std::string& out, uint32_t code) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xf];
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view bytes) {
  std::string storage;
  const std::string_view text = EscapedView(bytes, TextForm::kUtf8, storage);
  out += '"';
  size_t plain_from = 0;  // characters that need no escaping are appended in runs
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    const size_t length = KeptLength(text, i, TextForm::kUtf8);  // never 0: text is UTF-8
    if (c >= 0x80 && KeptLength(text, i, TextForm::kDisplay) != 0) {
      i += length;
      continue;
    }
    out.append(text.data() + plain_from, i - plain_from);
    if (!AppendShortEscape(out, static_cast<char>(c))) {
      AppendUnicodeEscape(out, CodePointAt(text, i, length));
    }
    i += length;
    plain_from = i;
  }
  out.append(text.data() + plain_from, text.size() - plain_from);
  out += '"';
}

void EscapeHiddenCharacters(std::string& json_text) {
  std::string out;
  size_t plain_from = 0;
  for (size_t i = 0; i < json_text.size();) {
    const unsigned char c = static_cast<unsigned char>(json_text[i]);
    if (c < 0x7f) {  // ASCII: the library escaped C0 inside strings; outside it is layout
      ++i;
      continue;
    }
    const size_t length = KeptLength(json_text, i, TextForm::kUtf8);
    if (length == 0) {  // not UTF-8 after all (cannot happen): leave it to the caller
      ++i;
      continue;
    }
    if (KeptLength(json_text, i, TextForm::kDisplay) == 0) {
      out.append(json_text, plain_from, i - plain_from);
      AppendUnicodeEscape(out, CodePointAt(json_text, i, length));
      plain_from = i + length;
    }
    i += length;
  }
  if (plain_from == 0) return;
  out.append(json_text, plain_from, std::string::npos);
  json_text = std::move(out);
}

}  // namespace gpuperf
