#include "support/proto_text.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

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

}  // namespace

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
