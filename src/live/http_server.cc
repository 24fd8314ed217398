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
#include <vector>

namespace gpuperf::live {
namespace {

constexpr size_t kMaxRequestBytes = 16 * 1024;

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
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

enum class Phase { kReading, kWriting, kDraining, kDone };

// One client: its request read so far, then its reply sent so far, then what it still sends
// being read away after our side is shut (so that closing does not reset the reply).
struct Connection {
  int fd = -1;
  uint64_t serial = 0;  // accept order: the oldest is closed first when there are too many
  Phase phase = Phase::kReading;
  int64_t deadline_ms = 0;
  std::string request;
  std::string reply;
  size_t sent = 0;
};

std::string Respond(const std::string& head, size_t end,
                    const std::function<HttpResponse(const HttpRequest&)>& handler) {
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
  return reply;
}

// Sends what the socket takes now; once all is sent, shuts our side and drains.
void SendSome(Connection& c, int64_t now) {
  while (c.sent < c.reply.size()) {
    const ssize_t n = send(c.fd, c.reply.data() + c.sent, c.reply.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      c.phase = Phase::kDone;
      return;
    }
    c.sent += static_cast<size_t>(n);
  }
  // Close gracefully: a client still sending (a request we refused) would otherwise get a
  // reset that can destroy the reply it has not read yet.
  shutdown(c.fd, SHUT_WR);
  c.phase = Phase::kDraining;
  c.deadline_ms = std::min(c.deadline_ms, now + 200);
}

// Moves a connection on after poll said `events` for it.
void Advance(Connection& c, short events,
             const std::function<HttpResponse(const HttpRequest&)>& handler,
             const HttpServerLimits& limits, int64_t now, char* buffer, size_t size) {
  if (events & POLLNVAL) {
    c.phase = Phase::kDone;
    return;
  }
  if (c.phase == Phase::kWriting) {
    SendSome(c, now);
    return;
  }
  // Reading or draining: take what is there.
  for (;;) {
    const ssize_t n = recv(c.fd, buffer, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      c.phase = Phase::kDone;  // closed (or reset) before a whole request: nothing to answer
      return;
    }
    if (c.phase == Phase::kDraining) continue;
    c.request.append(buffer, static_cast<size_t>(n));
    const size_t end = c.request.find("\r\n\r\n");
    if (end != std::string::npos || c.request.size() > kMaxRequestBytes) {
      c.reply = Respond(c.request, end, handler);
      c.request.clear();
      c.phase = Phase::kWriting;
      c.deadline_ms = now + limits.deadline_ms;
      SendSome(c, now);
      return;
    }
  }
}

void CloseDone(std::vector<Connection>& connections) {
  auto done = std::remove_if(connections.begin(), connections.end(), [](const Connection& c) {
    if (c.phase != Phase::kDone) return false;
    close(c.fd);
    return true;
  });
  connections.erase(done, connections.end());
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
    // Non-blocking: Serve accepts until there is no one left to accept.
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
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
  std::vector<Connection> connections;
  std::vector<pollfd> polled;
  uint64_t accepted = 0;
  char buffer[4096];
  while (!stop.load()) {
    int64_t now = NowMs();
    // Wake for the stop flag, and for the nearest deadline.
    int64_t wake = now + 200;
    polled.assign(1, pollfd{listen_fd_, POLLIN, 0});
    for (const Connection& c : connections) {
      wake = std::min(wake, c.deadline_ms);
      polled.push_back(
          pollfd{c.fd, static_cast<short>(c.phase == Phase::kWriting ? POLLOUT : POLLIN), 0});
    }
    const int timeout_ms = static_cast<int>(std::max<int64_t>(0, wake - now));
    if (poll(polled.data(), polled.size(), timeout_ms) < 0 && errno != EINTR) break;
    now = NowMs();
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      const short events = polled[i + 1].revents;
      if (events != 0) Advance(c, events, handler, limits_, now, buffer, sizeof(buffer));
      if (c.phase != Phase::kDone && now >= c.deadline_ms) c.phase = Phase::kDone;
    }
    CloseDone(connections);
    if (polled[0].revents & POLLIN) {
      // A few at a time: a connection just accepted gets its turn to be read before a flood
      // of newer ones could push it out as the oldest.
      for (int i = 0; i < 16; ++i) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        if (!connections.empty() && connections.size() >= limits_.max_connections) {
          auto oldest = std::min_element(
              connections.begin(), connections.end(),
              [](const Connection& a, const Connection& b) { return a.serial < b.serial; });
          close(oldest->fd);
          connections.erase(oldest);
        }
        Connection& c = connections.emplace_back();
        c.fd = fd;
        c.serial = ++accepted;
        c.deadline_ms = now + limits_.deadline_ms;
      }
    }
  }
  for (Connection& c : connections) close(c.fd);
}

}  // namespace gpuperf::live
