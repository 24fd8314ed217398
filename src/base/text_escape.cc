#include "base/text_escape.h"

namespace gpuperf {
namespace {

// The length of the valid UTF-8 sequence at bytes[i] (shortest form, no surrogate, at most
// U+10FFFF: what Python's strict decoder accepts), or 0.
size_t Utf8Length(std::string_view bytes, size_t i) {
  const unsigned char lead = static_cast<unsigned char>(bytes[i]);
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t min_code;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, min_code = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, min_code = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + length > bytes.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(bytes[i + k]) & 0xc0) != 0x80) return 0;
  }
  const uint32_t code = CodePointAt(bytes, i, length);
  if (code < min_code || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

// Characters that are not text to show (text_escape.h says why): C0, DEL and C1; the
// bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E/F, U+202A-E,
// U+2066-9) with the line and paragraph separators (U+2028/9); U+FFFE and U+FFFF.
bool IsHiddenCharacter(uint32_t code) {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code == 0x061c || code == 0x200e ||
         code == 0x200f || (code >= 0x2028 && code <= 0x202e) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0xfffe || code == 0xffff;
}

}  // namespace

uint32_t CodePointAt(std::string_view bytes, size_t i, size_t length) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(bytes[i + k]); };
  if (length == 1) return byte(0);
  uint32_t code = byte(0) & (0x7f >> length);
  for (size_t k = 1; k < length; ++k) code = (code << 6) | (byte(k) & 0x3f);
  return code;
}

size_t KeptLength(std::string_view bytes, size_t i, TextForm form) {
  const size_t length = Utf8Length(bytes, i);
  if (length == 0 || form == TextForm::kUtf8) return length;
  return IsHiddenCharacter(CodePointAt(bytes, i, length)) ? 0 : length;
}

void AppendByteEscape(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xf];
}

bool AppendShortEscape(std::string& out, char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return true;
    case '\\':
      out += "\\\\";
      return true;
    case '\n':
      out += "\\n";
      return true;
    case '\t':
      out += "\\t";
      return true;
    case '\r':
      out += "\\r";
      return true;
    default:
      return false;
  }
}

void AppendEscaped(std::string& out, std::string_view bytes, TextForm form) {
  size_t kept_from = 0;  // bytes kept as they are are appended in runs
  for (size_t i = 0; i < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f) {  // printable ASCII: the common case, kept in both forms
      ++i;
      continue;
    }
    const size_t kept = KeptLength(bytes, i, form);
    if (kept != 0) {
      i += kept;
      continue;
    }
    out.append(bytes.data() + kept_from, i - kept_from);
    AppendByteEscape(out, c);
    kept_from = ++i;
  }
  out.append(bytes.data() + kept_from, bytes.size() - kept_from);
}

std::string Escaped(std::string_view bytes, TextForm form) {
  std::string out;
  out.reserve(bytes.size());
  AppendEscaped(out, bytes, form);
  return out;
}

std::string_view EscapedView(std::string_view bytes, TextForm form, std::string& storage) {
  for (size_t i = 0; i < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    const size_t kept = c >= 0x20 && c < 0x7f ? 1 : KeptLength(bytes, i, form);
    if (kept == 0) {
      storage.assign(bytes.data(), i);
      AppendEscaped(storage, bytes.substr(i), form);
      return storage;
    }
    i += kept;
  }
  return bytes;
}

}  // namespace gpuperf
