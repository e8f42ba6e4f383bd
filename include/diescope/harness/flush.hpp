// Cold-mode cache flushing: before each cold sample the runner asks a flusher to evict the caches
// the work could otherwise hit, outside the measured window. A flusher writes a buffer at least
// twice the cache's size, so no line of the previous sample survives (with LRU-like replacement one
// cache-sized pass can leave lines of the last set touched).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace diescope::harness {

class CacheFlusher {
 public:
  virtual ~CacheFlusher() = default;
  virtual void flush() = 0;
  virtual std::string describe() const = 0;
};

using CacheFlusherFactory = std::function<std::unique_ptr<CacheFlusher>()>;

struct HostCache {
  int level = 0;
  std::string type;  // "Data", "Instruction", "Unified"
  std::size_t size_bytes = 0;
  int num_sharing = 0;  // logical CPUs sharing it
};
// The host's caches as Linux describes them under /sys/devices/system/cpu/cpu0/cache; empty when
// the folder is missing.
std::vector<HostCache> host_caches();

// Flushes the host's last-level cache by writing a buffer of 2x its size (64 MiB when the size is
// unknown).
class HostCacheFlusher final : public CacheFlusher {
 public:
  HostCacheFlusher();
  explicit HostCacheFlusher(std::size_t buffer_bytes);
  void flush() override;
  std::string describe() const override;
  std::size_t buffer_bytes() const { return buffer_.size(); }

 private:
  std::vector<unsigned char> buffer_;
  unsigned char pass_ = 0;
};

}  // namespace diescope::harness
