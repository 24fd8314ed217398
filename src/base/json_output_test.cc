#include "base/json_output.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace gpuperf {
namespace {

// What a recorded program can put in a name: bytes that are not UTF-8 and control
// characters, C1 and DEL included.
const std::string kName = "caf\xe9 \x1b[2J \xc2\x9b \x7f\nX";

TEST(JsonOutput, NamesThatAreNotUtf8AreWrittenNotThrown) {
  nlohmann::ordered_json doc;
  doc["kernels"] = {{{"name", kName}}};
  doc["by_name"][kName] = 1;
  EXPECT_THROW((void)doc.dump(2), nlohmann::json::type_error);  // what DumpJson is for
  const std::string text = DumpJson(doc);
  const auto back = nlohmann::ordered_json::parse(text);  // strict: valid UTF-8
  const std::string want = "caf\\xe9 \x1b[2J \xc2\x9b \x7f\nX";
  EXPECT_EQ(back["kernels"][0]["name"], want);
  EXPECT_EQ(back["by_name"][want], 1);
  // The text itself holds no control character but the layout's newlines.
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    EXPECT_TRUE(c >= 0x20 || c == '\n') << i;
    EXPECT_NE(c, 0x7f) << i;
    if (c == 0xc2) EXPECT_GE(static_cast<unsigned char>(text[i + 1]), 0xa0) << i;
  }
  EXPECT_NE(text.find(R"(caf\\xe9 \u001b[2J \u009b \u007f\nX)"), std::string::npos) << text;
}

TEST(JsonOutput, CleanDocumentsAreWrittenAsTheLibraryWritesThem) {
  nlohmann::json doc = {{"name", "gemm<float> µs …"}, {"n", 3}, {"list", {1, "a\tb"}}};
  EXPECT_EQ(DumpJson(doc), doc.dump(2));
  EXPECT_EQ(DumpJson(doc, -1), doc.dump());
}

}  // namespace
}  // namespace gpuperf
