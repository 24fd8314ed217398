#include "live/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace gpuperf::live {
namespace {

// A server on a free loopback port answering /metrics, stopped at the end of the test.
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Listen("127.0.0.1:0").ok());
    thread_ = std::thread([this] {
      server_.Serve(
          [](const HttpRequest& request) {
            HttpResponse response;
            if (request.path != "/metrics") {
              response.status = 404;
            } else {
              response.body = "accept=" + request.accept + "\n";
            }
            return response;
          },
          stop_);
    });
  }
  void TearDown() override {
    stop_ = true;
    thread_.join();
  }

  int Connect() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server_.port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
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

  HttpServer server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(HttpServerTest, AnswersGetWithTheHandlersBodyAndLength) {
  const std::string reply = Exchange(
      "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\naccept: application/openmetrics-text\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Content-Length: 36\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(reply.find("\r\n\r\naccept=application/openmetrics-text\n"), std::string::npos);
}

TEST_F(HttpServerTest, HeadNotFoundOtherMethodsAndGarbage) {
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

TEST_F(HttpServerTest, AClientThatSendsNothingDoesNotKeepOthersOutForLong) {
  const int silent = Connect();  // connects, never sends
  const auto start = std::chrono::steady_clock::now();
  const std::string reply = Exchange("GET /metrics HTTP/1.1\r\n\r\n");
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_LT(waited, std::chrono::milliseconds(kRequestDeadlineMs + 2000));
  close(silent);
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
