#include "live/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <thread>
#include <vector>

namespace gpuperf::live {
namespace {

// More than loopback sockets buffer between a server and a client that does not read.
constexpr size_t kBigReplyBytes = 32u << 20;

// A server on a free loopback port answering /metrics, stopped at the end of the test.
class HttpServerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void Start(HttpServerLimits limits) {
    server_ = std::make_unique<HttpServer>(limits);
    ASSERT_TRUE(server_->Listen("127.0.0.1:0").ok());
    thread_ = std::thread([this] {
      server_->Serve(
          [](const HttpRequest& request) {
            HttpResponse response;
            if (request.path == "/big") {
              response.body = std::string(kBigReplyBytes, 'x');
            } else if (request.path != "/metrics") {
              response.status = 404;
            } else {
              response.body = "accept=" + request.accept + "\n";
            }
            return response;
          },
          stop_);
    });
  }

  int Connect() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server_->port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    // A server that never answers fails the test instead of hanging it.
    timeval limit{60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    return fd;
  }
  // Sends `request` and returns everything the server sent back before closing.
  std::string Exchange(const std::string& request) {
    const int fd = Connect();
    EXPECT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string reply;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) reply.append(buffer, n);
    close(fd);
    return reply;
  }
  // Whether the server still holds `fd` open (nothing to read yet, no end of stream).
  static bool StillOpen(int fd) {
    char byte;
    return recv(fd, &byte, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
  }
  // Whether the server closed `fd` (waits for it).
  static bool Closed(int fd) {
    char byte;
    return recv(fd, &byte, 1, 0) == 0;
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(HttpServerTest, AnswersGetWithTheHandlersBodyAndLength) {
  Start({});
  const std::string reply = Exchange(
      "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\naccept: application/openmetrics-text\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Content-Length: 36\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(reply.find("\r\n\r\naccept=application/openmetrics-text\n"), std::string::npos);
}

TEST_F(HttpServerTest, HeadNotFoundOtherMethodsAndGarbage) {
  Start({});
  const std::string head = Exchange("HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");  // headers only
  EXPECT_EQ(Exchange("GET /nope HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 Not Found", 0), 0u);
  const std::string post = Exchange("POST /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_EQ(Exchange("hello\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(Exchange("GET / HTTP/1.1\r\nX: " + std::string(20000, 'a')).rfind("HTTP/1.1 431", 0),
            0u);
}

// Slow clients (connected and silent, or half a request sent) hold only their own
// connections: a request is answered while every one of them is still waiting, with a
// deadline long enough that none of them runs out during the test.
TEST_F(HttpServerTest, SlowClientsDoNotDelayOthers) {
  Start({.deadline_ms = 600000, .max_connections = 128});
  std::vector<int> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(Connect());
    if (i % 2 == 1) {
      const std::string half = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
      ASSERT_EQ(send(slow.back(), half.data(), half.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(half.size()));
    }
  }
  const std::string reply = Exchange("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  for (int fd : slow) {
    EXPECT_TRUE(StillOpen(fd));
    close(fd);
  }
}

// Past the connection limit the oldest goes: a flood of idle connections cannot keep a
// scrape out. Connections are accepted in the order they were made, so when the request
// made last is answered, the 10 before it were all accepted and the oldest 7 (11 - 4) closed.
TEST_F(HttpServerTest, TooManyConnectionsCloseTheOldest) {
  Start({.deadline_ms = 600000, .max_connections = 4});
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) idle.push_back(Connect());
  const std::string reply = Exchange("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  for (int i = 0; i < 10; ++i) {
    if (i < 7) {
      EXPECT_TRUE(Closed(idle[i])) << i;
    } else {
      EXPECT_TRUE(StillOpen(idle[i])) << i;
    }
    close(idle[i]);
  }
}

// A reply larger than the sockets can hold is sent as the client reads it, while others are
// answered meanwhile.
TEST_F(HttpServerTest, AClientThatReadsSlowlyGetsItsWholeReplyAndDelaysNoOne) {
  Start({.deadline_ms = 600000, .max_connections = 128});
  const int slow = Connect();
  const std::string request = "GET /big HTTP/1.1\r\n\r\n";
  ASSERT_EQ(send(slow, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  EXPECT_EQ(Exchange("GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  std::string reply;
  char buffer[65536];
  ssize_t n;
  while ((n = recv(slow, buffer, sizeof(buffer), 0)) > 0) reply.append(buffer, n);
  close(slow);
  const size_t body = reply.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(reply.size() - body - 4, kBigReplyBytes);
  EXPECT_NE(reply.find("Content-Length: " + std::to_string(kBigReplyBytes) + "\r\n"),
            std::string::npos);
}

TEST(HttpAddressTest, HostAndPort) {
  std::string host, port;
  EXPECT_TRUE(SplitHostPort("127.0.0.1:9464", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, "9464");
  EXPECT_TRUE(SplitHostPort("[::1]:80", &host, &port));
  EXPECT_EQ(host, "::1");
  for (const char* bad : {"9464", ":9464", "host:", "host:99999", "::1:80", "[::1]80", "h:x1"}) {
    EXPECT_FALSE(SplitHostPort(bad, &host, &port)) << bad;
  }
  HttpServer server;
  EXPECT_FALSE(server.Listen("nonsense").ok());
}

}  // namespace
}  // namespace gpuperf::live
