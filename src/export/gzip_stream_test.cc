#include "export/gzip_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sstream>
#include <string>

namespace gpuperf {
namespace {

std::string Gunzip(const std::string& compressed) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out;
  char chunk[1 << 14];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

std::string Compress(const std::string& text, int level) {
  std::ostringstream sink;
  auto gzip = GzipStream::Create(sink, level);
  EXPECT_TRUE(gzip.ok());
  **gzip << text;
  EXPECT_TRUE((*gzip)->Close().ok());
  return sink.str();
}

std::string TimelineLikeText() {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i % 7) +
            ",\"ts\":" + std::to_string(1000 + 37 * i) + ".000,\"name\":\"kernel\"},\n";
  }
  return text;
}

TEST(GzipStream, RoundTripsAtEveryLevel) {
  const std::string text = TimelineLikeText();
  for (int level : {1, 6, 9}) EXPECT_EQ(Gunzip(Compress(text, level)), text) << level;
}

// The gzip header's XFL byte says how hard the compressor tried: 4 for zlib's fastest
// level, 0 for the middle ones. Timelines default to the fastest (see kDefaultLevel).
TEST(GzipStream, DefaultsToTheFastestLevel) {
  const std::string text = TimelineLikeText();
  std::ostringstream sink;
  auto gzip = GzipStream::Create(sink);
  ASSERT_TRUE(gzip.ok());
  **gzip << text;
  ASSERT_TRUE((*gzip)->Close().ok());
  const std::string fast = sink.str();
  ASSERT_GT(fast.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(fast[8]), 4);
  EXPECT_EQ(static_cast<unsigned char>(Compress(text, 6)[8]), 0);
  EXPECT_EQ(Gunzip(fast), text);
  EXPECT_LT(fast.size(), text.size() / 5);
}

}  // namespace
}  // namespace gpuperf
