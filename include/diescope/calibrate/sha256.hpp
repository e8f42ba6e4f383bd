// SHA-256 (FIPS 180-4), small and dependency-free: reports name the calibration file they used by its
// digest, and the binary must run on machines that have no libcrypto to link at run time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace diescope::calibrate {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // The 32-byte digest. The object is spent afterwards: call reset() to hash something else.
  std::array<std::uint8_t, 32> finish();
  void reset();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> block_{};
  std::size_t block_used_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `bytes`, 64 characters.
std::string sha256_hex(std::string_view bytes);

}  // namespace diescope::calibrate
