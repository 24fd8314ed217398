#include "base/text_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuperf {
namespace {

// Names a recorded program could give, every class of byte the rule treats, with both forms.
// The UTF-8 forms are what Python's bytes.decode("utf-8", "backslashreplace") gives.
struct Case {
  std::string bytes, utf8, display;
};
const Case kCases[] = {
    // Latin-1; an overlong '/', two and three bytes; a UTF-16 surrogate; past U+10FFFF
    {"caf\xe9", "caf\\xe9", "caf\\xe9"},
    {"\xc0\xaf", "\\xc0\\xaf", "\\xc0\\xaf"},
    {"\xe0\x80\xaf", "\\xe0\\x80\\xaf", "\\xe0\\x80\\xaf"},
    {"\xed\xa0\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80"},
    {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80"},
    // a character cut short at the end; a stray byte between two characters
    {"cut \xe2\x82", "cut \\xe2\\x82", "cut \\xe2\\x82"},
    {"\xe2\x82\xac\xff\xc3\xa9", "\xe2\x82\xac\\xff\xc3\xa9", "\xe2\x82\xac\\xff\xc3\xa9"},
    // a terminal's title; a screen clear; C0 and DEL (kept as data in the UTF-8 form)
    {"\x1b]0;title\x07", "\x1b]0;title\x07", "\\x1b]0;title\\x07"},
    {"\x1b[2J\x1b[H", "\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"},
    {"a\x01\x08\x7f z", "a\x01\x08\x7f z", "a\\x01\\x08\\x7f z"},
    // C1 CSI: a byte alone (not UTF-8), and U+009B as UTF-8
    {"raw \x9b;m", "raw \\x9b;m", "raw \\x9b;m"},
    {"utf8 \xc2\x9b;m", "utf8 \xc2\x9b;m", "utf8 \\xc2\\x9b;m"},
    // line breaks; U+202E (right-to-left override); U+FFFF (forbidden in XML)
    {"line\nfake\r\tend", "line\nfake\r\tend", "line\\x0afake\\x0d\\x09end"},
    {"\xe2\x80\xae;evil", "\xe2\x80\xae;evil", "\\xe2\\x80\\xae;evil"},
    {"\xef\xbf\xbf", "\xef\xbf\xbf", "\\xef\\xbf\\xbf"},
    // backslashes, one that looks like an escape, stay as they are
    {"back\\slash \\x41 \\", "back\\slash \\x41 \\", "back\\slash \\x41 \\"},
};

TEST(TextEscape, EachClassOfBytesHasItsForm) {
  for (const Case& c : kCases) {
    EXPECT_EQ(Utf8Text(c.bytes), c.utf8);
    EXPECT_EQ(DisplayText(c.bytes), c.display);
  }
}

TEST(TextEscape, CleanTextIsKeptWithoutACopy) {
  for (const std::string clean :
       {"", "_Z6kernelPfi", "void gemm<float, 128>(float*, int)", "µs … 12.3 GB/s",
        "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x9a\x80 rocket", "a;b|c\"d'e<f>&"}) {
    for (TextForm form : {TextForm::kUtf8, TextForm::kDisplay}) {
      std::string storage;
      EXPECT_EQ(EscapedView(clean, form, storage).data(), clean.data()) << clean;
      EXPECT_EQ(Escaped(clean, form), clean);
    }
  }
  std::string storage;
  EXPECT_EQ(EscapedView("ok \x1b", TextForm::kUtf8, storage), "ok \x1b");
  EXPECT_EQ(EscapedView("ok \x1b", TextForm::kDisplay, storage), "ok \\x1b");
}

TEST(TextEscape, BothFormsAreIdempotentAndSafe) {
  for (const Case& c : kCases) {
    for (TextForm form : {TextForm::kUtf8, TextForm::kDisplay}) {
      const std::string once = Escaped(c.bytes, form);
      EXPECT_EQ(Escaped(once, form), once);
      for (size_t i = 0; i < once.size();) {
        const size_t kept = KeptLength(once, i, form);
        ASSERT_NE(kept, 0u) << "byte " << i << " of " << once;
        i += kept;
      }
    }
    for (unsigned char byte : c.display) EXPECT_TRUE(byte >= 0x20 && byte != 0x7f) << c.display;
    EXPECT_EQ(DisplayText(c.utf8), c.display);
  }
}

TEST(TextEscape, ShortEscapesAreTheCOnes) {
  std::string out;
  for (char c : std::string("\"\\\n\t\r")) EXPECT_TRUE(AppendShortEscape(out, c));
  EXPECT_EQ(out, "\\\"\\\\\\n\\t\\r");
  for (char c : std::string("a\x1b\x7f ")) EXPECT_FALSE(AppendShortEscape(out, c));
  EXPECT_EQ(out, "\\\"\\\\\\n\\t\\r");
}

}  // namespace
}  // namespace gpuperf
