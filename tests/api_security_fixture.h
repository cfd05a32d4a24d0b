// The fixture of the API's security tests (tests/api_security_test.cc, api_identity_test.cc):
// a real `tiresias serve` in a fresh directory, clients over TCP and raw connections, and a
// child process that calls as `nobody`.
#pragma once

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/client.h"
#include "serve_process.h"
#include "test_util.h"

namespace tiresias {
namespace testing {

// Runs `fn` in a child process as `nobody` (65534) and returns what it returned: a local
// user other than the test's own, as the kernel will name it.
inline std::string AsNobody(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string out =
        setgid(65534) == 0 && setuid(65534) == 0 ? fn() : std::string("cannot become nobody");
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string got(4096, '\0');
  got.resize(static_cast<size_t>(std::max<ssize_t>(0, read(fds[0], got.data(), got.size()))));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return got;
}

}  // namespace testing

class ApiSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir(
        fmt::format("api_{}", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override {
    serve_.reset();
    if (!HasFailure()) testing::RemoveServeDir(dir_);
  }
  void Serve(std::vector<std::string> args) {
    serve_ = std::make_unique<testing::ServeProcess>(dir_, std::move(args));
    serve_->Start();
  }
  std::string Url() { return testing::Trimmed(testing::ReadAll(dir_ / "tiresias.addr")); }
  int Port() { return std::stoi(Url().substr(Url().rfind(':') + 1)); }
  ApiClient Tcp(const std::string& token) {
    return *ApiClient::Connect({.server = Url(), .state_dir = "/nonexistent", .token = token});
  }
  // A TCP connection to the API that sends nothing yet.
  int OpenRaw() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(Port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  std::filesystem::path dir_;
  std::unique_ptr<testing::ServeProcess> serve_;
};

}  // namespace tiresias
