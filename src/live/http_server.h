// A small HTTP/1.1 server for a metrics endpoint: one request per connection, every read
// and write bounded in size and time. Connections are served concurrently by one thread
// that polls them all: a client that connects and sends nothing, or half a request, or reads
// its reply slowly, holds only its own connection (until its deadline, or until it is the
// oldest of too many), never a scrape. The handler runs on that thread, one request at a
// time: it must not block (the live reader never does).
//
// Ours rather than a library's: Debian's cpp-httplib and prometheus-cpp come as shared
// libraries only (libcpp-httplib.so.0.11 with OpenSSL, libprometheus-cpp-pull.so with
// civetweb), and the gpuperf binary is linked statically so it runs on GPU images that have
// neither (docs/live.md).
#pragma once

#include <atomic>
#include <cstddef>
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

struct HttpServerLimits {
  // A client has this long to send its request, and again to read the reply.
  int deadline_ms = 5000;
  // Connections open at once; past it, the oldest is closed for each new one (a flood of
  // idle connections then costs each one its turn, not the scrapes their answer).
  size_t max_connections = 128;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerLimits limits = {}) : limits_(limits) {}
  ~HttpServer();

  // Binds "HOST:PORT" ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"); port 0 picks one.
  Status Listen(const std::string& address);
  // The port bound (after Listen).
  uint16_t port() const { return port_; }

  // Answers requests until `stop` becomes true (checked at least every 200 ms).
  void Serve(const std::function<HttpResponse(const HttpRequest&)>& handler,
             const std::atomic<bool>& stop);

 private:
  HttpServerLimits limits_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
};

// Splits "HOST:PORT" / "[V6]:PORT"; false when it is not one.
bool SplitHostPort(const std::string& address, std::string* host, std::string* port);

}  // namespace gpuperf::live
