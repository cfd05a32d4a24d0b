// FreeLoopbackPort hands out a port that can be bound right away.
#include "exec/free_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tiresias {
namespace {

TEST(FreeLoopbackPort, IsBindable) {
  auto port = FreeLoopbackPort();
  ASSERT_TRUE(port.has_value());
  EXPECT_GT(*port, 0);
  EXPECT_LE(*port, 65535);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  close(fd);
}

}  // namespace
}  // namespace tiresias
