#include "cli/json_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace gpuperf::cli {

bool LooksLikeJsonFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  char head[256];
  ssize_t n = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = ::read(fd, head, sizeof(head));
  ::close(fd);
  for (ssize_t i = 0; i < n; ++i) {
    if (!std::isspace(static_cast<unsigned char>(head[i]))) return head[i] == '{';
  }
  return false;
}

Result<nlohmann::ordered_json> ReadJsonFile(const std::string& path, const std::string& expected) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::ordered_json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!in || doc.is_discarded()) {
    return Error(StatusCode::kCorrupt, path + " is not valid JSON (expected " + expected + ")");
  }
  return doc;
}

Status ExplainNotATrace(Status status, const std::string& path) {
  if (status.code() != StatusCode::kNotATrace || !LooksLikeJsonFile(path)) return status;
  return Error(StatusCode::kNotATrace,
               path +
                   " is a report (JSON), not a trace: compare it with another report or a "
                   "trace with `gpuperf diff " +
                   path + " NEW`");
}

}  // namespace gpuperf::cli
