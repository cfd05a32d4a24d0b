// SHA-256 through OpenSSL's EVP interface.
#include "common/sha256.h"

#include <fmt/format.h>
#include <openssl/evp.h>

namespace tiresias {

std::array<unsigned char, 32> Sha256(std::string_view data) {
  std::array<unsigned char, 32> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
  return md;
}

std::string Sha256Hex(std::string_view data) {
  std::string hex;
  hex.reserve(64);
  for (unsigned char b : Sha256(data)) hex += fmt::format("{:02x}", b);
  return hex;
}

}  // namespace tiresias
