// SHA-256 (OpenSSL), the one hash the project uses: token hashes, the journal's checksum
// chain, stable short names. Thread-safe.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tiresias {

std::array<unsigned char, 32> Sha256(std::string_view data);
// Lower-case hex, 64 digits.
std::string Sha256Hex(std::string_view data);

}  // namespace tiresias
