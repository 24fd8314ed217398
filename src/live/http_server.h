// A small HTTP/1.1 server for a metrics endpoint: one request per connection, one connection
// at a time, every read and write bounded in size and time, so a slow or broken client
// delays a scrape by at most kRequestDeadlineMs and never wedges the server.
//
// Ours rather than a library's: Debian's cpp-httplib and prometheus-cpp come as shared
// libraries only (libcpp-httplib.so.0.11 with OpenSSL, libprometheus-cpp-pull.so with
// civetweb), and the gpuperf binary is linked statically so it runs on GPU images that have
// neither (docs/live.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf::live {

struct HttpRequest {
  std::string method;  // "GET"
  std::string path;    // "/metrics" (query string removed)
  std::string accept;  // the Accept header, "" when absent
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

inline constexpr int kRequestDeadlineMs = 5000;

class HttpServer {
 public:
  ~HttpServer();

  // Binds "HOST:PORT" ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"); port 0 picks one.
  Status Listen(const std::string& address);
  // The port bound (after Listen).
  uint16_t port() const { return port_; }

  // Answers requests until `stop` becomes true (checked at least every 200 ms).
  void Serve(const std::function<HttpResponse(const HttpRequest&)>& handler,
             const std::atomic<bool>& stop);

 private:
  void HandleConnection(int fd, const std::function<HttpResponse(const HttpRequest&)>& handler);
  int listen_fd_ = -1;
  uint16_t port_ = 0;
};

// Splits "HOST:PORT" / "[V6]:PORT"; false when it is not one.
bool SplitHostPort(const std::string& address, std::string* host, std::string* port);

}  // namespace gpuperf::live
