// Strings that came from a recorded program or its environment (command lines, kernel,
// function, file, NVTX, thread, host and device names, module paths) are bytes: any bytes.
// Every output writes them through this file, with one rule for all of them:
//
//  - valid UTF-8 is kept as it is;
//  - a byte that is not part of valid UTF-8 becomes the four characters \xNN (lower-case
//    hex): what Python's bytes.decode("utf-8", "backslashreplace") gives. Unlike U+FFFD,
//    the byte stays visible and known, and two names that differ only there stay two names;
//  - for display (terminals, SVG, CSV, folded stacks, OpenMetrics labels), so do the bytes
//    of every character that is not text to show: C0 controls (newline and tab included),
//    DEL, C1 controls, the line and paragraph separators and bidirectional controls (which
//    can make a line show other than it is), and U+FFFE/U+FFFF (which XML forbids).
//
// Both forms are idempotent: what they write passes through them unchanged, so escaping
// twice is escaping once, and an output may escape what it writes without knowing whether
// an earlier step already did. The price: a name that holds the four characters "\xe9"
// itself reads back the same as one that held the byte 0xe9.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuperf {

enum class TextForm {
  kUtf8,     // valid UTF-8: JSON, protobuf strings (Perfetto, pprof)
  kDisplay,  // valid UTF-8 with nothing a terminal or a parser of lines acts on
};

// The number of bytes of the character at bytes[i] that `form` keeps as they are, or 0 when
// the byte at bytes[i] is written as \xNN.
size_t KeptLength(std::string_view bytes, size_t i, TextForm form);

// The code point of the character of `length` bytes at bytes[i] that KeptLength(.., kUtf8)
// measured.
uint32_t CodePointAt(std::string_view bytes, size_t i, size_t length);

// Appends \xNN for `byte`.
void AppendByteEscape(std::string& out, unsigned char byte);

// For writers of quoted strings (JSON, `gpuperf dump`): appends the C escape of `c` when it
// has a short one (\" \\ \n \t \r) and returns true; false for any other byte.
bool AppendShortEscape(std::string& out, char c);

void AppendEscaped(std::string& out, std::string_view bytes, TextForm form);
std::string Escaped(std::string_view bytes, TextForm form);

// `bytes` itself when `form` keeps all of it (no copy: the common case), else its escaped
// form in `storage`.
std::string_view EscapedView(std::string_view bytes, TextForm form, std::string& storage);

// Shorthands for the two forms.
inline std::string Utf8Text(std::string_view bytes) {
  return Escaped(bytes, TextForm::kUtf8);
}
inline std::string DisplayText(std::string_view bytes) {
  return Escaped(bytes, TextForm::kDisplay);
}

}  // namespace gpuperf
