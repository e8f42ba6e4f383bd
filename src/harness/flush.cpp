#include "diescope/harness/flush.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace diescope::harness {

namespace {

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32K", "1024K", "36M" as sysfs writes cache sizes.
std::size_t parse_size(const std::string& text) {
  std::size_t value = 0;
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    value = value * 10 + static_cast<std::size_t>(text[i++] - '0');
  if (i < text.size()) {
    if (text[i] == 'K') value <<= 10;
    if (text[i] == 'M') value <<= 20;
    if (text[i] == 'G') value <<= 30;
  }
  return value;
}

// "0-3,8-11" -> 8
int count_cpus(const std::string& list) {
  int count = 0;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string part = list.substr(pos, comma - pos);
    const std::size_t dash = part.find('-');
    if (dash == std::string::npos) {
      if (!part.empty()) ++count;
    } else {
      count += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    }
    pos = comma + 1;
  }
  return count;
}

constexpr std::size_t kFallbackFlushBytes = std::size_t{64} << 20;

}  // namespace

std::vector<HostCache> host_caches() {
  std::vector<HostCache> caches;
  const std::filesystem::path root = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  for (int index = 0; std::filesystem::exists(root / ("index" + std::to_string(index)), ec); ++index) {
    const auto dir = root / ("index" + std::to_string(index));
    HostCache cache;
    try {
      cache.level = std::stoi(read_line(dir / "level"));
      cache.type = read_line(dir / "type");
      cache.size_bytes = parse_size(read_line(dir / "size"));
      cache.num_sharing = count_cpus(read_line(dir / "shared_cpu_list"));
    } catch (const std::exception&) {
      continue;  // a half-described cache is left out rather than guessed
    }
    caches.push_back(cache);
  }
  return caches;
}

HostCacheFlusher::HostCacheFlusher()
    : HostCacheFlusher([] {
        std::size_t last_level = 0;
        int deepest = 0;
        for (const HostCache& c : host_caches()) {
          if (c.type != "Instruction" && c.level >= deepest) {
            deepest = c.level;
            last_level = c.size_bytes;
          }
        }
        return last_level > 0 ? 2 * last_level : kFallbackFlushBytes;
      }()) {}

HostCacheFlusher::HostCacheFlusher(std::size_t buffer_bytes) : buffer_(buffer_bytes) {}

void HostCacheFlusher::flush() {
  // A different value each pass so the stores cannot be skipped as redundant.
  ++pass_;
  std::fill(buffer_.begin(), buffer_.end(), pass_);
  // Keep the compiler from dropping the stores: read one byte back through a volatile.
  volatile unsigned char sink = buffer_.empty() ? 0 : buffer_[buffer_.size() / 2];
  (void)sink;
}

std::string HostCacheFlusher::describe() const {
  return fmt::format("host cache flush: {:.1f} MiB written before each cold sample",
                     static_cast<double>(buffer_.size()) / (1 << 20));
}

}  // namespace diescope::harness
