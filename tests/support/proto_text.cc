#include "support/proto_text.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string_view>

#include "support/golden.h"
#include "support/temp_dir.h"

namespace gpuperf::testing {

namespace {

// Unquotes a protoc text-format string (octal and the usual escapes).
std::string Unquote(const std::string& value) {
  if (value.size() < 2 || value.front() != '"') return value;
  std::string out;
  for (size_t i = 1; i + 1 < value.size(); ++i) {
    if (value[i] != '\\') {
      out += value[i];
      continue;
    }
    char c = value[++i];
    if (c >= '0' && c <= '7') {
      int code = 0;
      for (int k = 0; k < 3 && i < value.size() && value[i] >= '0' && value[i] <= '7'; ++k) {
        code = code * 8 + (value[i++] - '0');
      }
      --i;
      out += static_cast<char>(code);
    } else {
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
    }
  }
  return out;
}

uint64_t ReadVarint(const std::string& bytes, size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; at < bytes.size(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(bytes[at++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) break;
  }
  return value;
}

// The payload of the only field of `packet` when that field is zstd_compressed_packets.
std::optional<std::string_view> ZstdBundle(std::string_view packet) {
  constexpr uint64_t kTag = (133 << 3) | 2;
  const std::string bytes(packet);
  size_t at = 0;
  if (ReadVarint(bytes, at) != kTag) return std::nullopt;
  const uint64_t size = ReadVarint(bytes, at);
  if (at + size != bytes.size()) return std::nullopt;
  return packet.substr(at);
}

}  // namespace

std::string UnpackPerfettoTrace(const std::string& bytes) {
  std::string out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t start = at;
    const uint64_t tag = ReadVarint(bytes, at);
    const uint64_t size = ReadVarint(bytes, at);
    EXPECT_EQ(tag, (1u << 3) | 2) << "not a packet at byte " << start;
    if (tag != ((1u << 3) | 2) || at + size > bytes.size()) return out;
    const std::string_view packet(bytes.data() + at, size);
    at += size;
    std::optional<std::string_view> bundle = ZstdBundle(packet);
    if (!bundle) {
      out.append(bytes, start, at - start);
      continue;
    }
    const unsigned long long content = ZSTD_getFrameContentSize(bundle->data(), bundle->size());
    EXPECT_TRUE(content != ZSTD_CONTENTSIZE_ERROR && content != ZSTD_CONTENTSIZE_UNKNOWN);
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN) return out;
    std::string packets(content, '\0');
    const size_t got =
        ZSTD_decompress(packets.data(), packets.size(), bundle->data(), bundle->size());
    EXPECT_FALSE(ZSTD_isError(got)) << ZSTD_getErrorName(got);
    out += packets;
  }
  return out;
}

Node ParseTextFormat(const std::string& text) {
  Node root;
  std::vector<Node*> stack{&root};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (line == "}") {
      stack.pop_back();
    } else if (line.back() == '{') {
      std::string name = line.substr(0, line.size() - 2);
      stack.push_back(&stack.back()->children.emplace(name, Node())->second);
    } else {
      size_t colon = line.find(": ");
      stack.back()->fields.emplace(line.substr(0, colon), Unquote(line.substr(colon + 2)));
    }
  }
  return root;
}

std::string ProtocDecode(const std::string& bytes, const std::string& proto_file,
                         const std::string& message) {
  TempDir dir;
  WriteStringToFile(dir.File("message.pb"), bytes);
  const std::string proto_dir = SourcePath("tests/proto");
  const std::string command = "protoc --decode=" + message + " -I " + proto_dir + " " + proto_dir +
                              "/" + proto_file + " < " + dir.File("message.pb") + " > " +
                              dir.File("message.txt") + " 2> " + dir.File("err.txt");
  const int rc = std::system(command.c_str());
  EXPECT_EQ(rc, 0) << ReadFileToString(dir.File("err.txt"));
  return ReadFileToString(dir.File("message.txt"));
}

}  // namespace gpuperf::testing
