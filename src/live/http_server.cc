#include "live/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpuperf::live {
namespace {

constexpr size_t kMaxRequestBytes = 16 * 1024;

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool WaitFor(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    const int64_t left = deadline_ms - NowMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready > 0) return (p.revents & (events | POLLHUP)) != 0 && !(p.revents & POLLNVAL);
    if (ready < 0 && errno != EINTR) return false;
  }
}

bool SendAll(int fd, const std::string& data, int64_t deadline_ms) {
  size_t sent = 0;
  while (sent < data.size()) {
    if (!WaitFor(fd, POLLOUT, deadline_ms)) return false;
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Internal Server Error";
  }
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Parses the request head; false when it is not HTTP.
bool ParseRequest(const std::string& head, HttpRequest* request) {
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t first = line.find(' ');
  const size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
  if (second == std::string::npos || line.compare(second + 1, 5, "HTTP/") != 0) return false;
  request->method = line.substr(0, first);
  request->path = line.substr(first + 1, second - first - 1);
  request->path = request->path.substr(0, request->path.find('?'));
  for (size_t at = line_end; at != std::string::npos && at + 2 < head.size();) {
    const size_t next = head.find("\r\n", at + 2);
    const std::string header =
        head.substr(at + 2, next == std::string::npos ? next : next - at - 2);
    const size_t colon = header.find(':');
    if (colon != std::string::npos && EqualsIgnoreCase(header.substr(0, colon), "accept")) {
      const size_t value = header.find_first_not_of(' ', colon + 1);
      request->accept = value == std::string::npos ? "" : header.substr(value);
    }
    at = next;
  }
  return true;
}

}  // namespace

bool SplitHostPort(const std::string& address, std::string* host, std::string* port) {
  size_t colon;
  if (!address.empty() && address[0] == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return false;
    }
    *host = address.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = address.rfind(':');
    if (colon == std::string::npos || address.find(':') != colon) return false;
    *host = address.substr(0, colon);
  }
  *port = address.substr(colon + 1);
  if (host->empty() || port->empty() || port->size() > 5) return false;
  for (char c : *port) {
    if (c < '0' || c > '9') return false;
  }
  return std::stoul(*port) <= 65535;
}

HttpServer::~HttpServer() {
  if (listen_fd_ >= 0) close(listen_fd_);
}

Status HttpServer::Listen(const std::string& address) {
  std::string host, port;
  if (!SplitHostPort(address, &host, &port)) {
    return Error(StatusCode::kInvalidArgument,
                 "'" + address + "' is not HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); error != 0) {
    return Error(StatusCode::kInvalidArgument,
                 "cannot resolve '" + host + "': " + gai_strerror(error));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0) {
      listen_fd_ = fd;
      sockaddr_storage bound{};
      socklen_t length = sizeof(bound);
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
      port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0)
    return Error(StatusCode::kIoError, "cannot listen on " + address + ": " + why);
  return Status::Ok();
}

void HttpServer::Serve(const std::function<HttpResponse(const HttpRequest&)>& handler,
                       const std::atomic<bool>& stop) {
  while (!stop.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    HandleConnection(fd, handler);
    close(fd);
  }
}

void HttpServer::HandleConnection(int fd,
                                  const std::function<HttpResponse(const HttpRequest&)>& handler) {
  const int64_t deadline = NowMs() + kRequestDeadlineMs;
  std::string head;
  char buffer[4096];
  size_t end = std::string::npos;
  while (end == std::string::npos && head.size() <= kMaxRequestBytes) {
    if (!WaitFor(fd, POLLIN, deadline)) return;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;
    head.append(buffer, static_cast<size_t>(n));
    end = head.find("\r\n\r\n");
  }
  HttpRequest request;
  HttpResponse response;
  if (end == std::string::npos) {
    response.status = 431;
  } else if (!ParseRequest(head.substr(0, end + 2), &request)) {
    response.status = 400;
  } else if (request.method != "GET" && request.method != "HEAD") {
    response.status = 405;
  } else {
    response = handler(request);
  }
  if (response.status != 200 && response.body.empty()) {
    response.body = std::string(Reason(response.status)) + "\n";
  }
  std::string reply = "HTTP/1.1 " + std::to_string(response.status) + " " +
                      Reason(response.status) + "\r\nContent-Type: " + response.content_type +
                      "\r\nContent-Length: " + std::to_string(response.body.size()) +
                      "\r\nConnection: close\r\n";
  if (response.status == 405) reply += "Allow: GET, HEAD\r\n";
  reply += "\r\n";
  if (request.method != "HEAD") reply += response.body;
  if (!SendAll(fd, reply, deadline)) return;
  // Close gracefully: a client still sending (a request we refused) would otherwise get a
  // reset that can destroy the reply it has not read yet.
  shutdown(fd, SHUT_WR);
  const int64_t linger = std::min(deadline, NowMs() + 200);
  while (WaitFor(fd, POLLIN, linger) && recv(fd, buffer, sizeof(buffer), 0) > 0) {
  }
}

}  // namespace gpuperf::live
