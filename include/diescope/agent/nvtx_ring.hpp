// NVTX rings (docs/agent.md#nvtx-in-captures): libdiescope-nvtx.so, loaded into a program through
// NVTX_INJECTION64_PATH, timestamps each NVTX push, pop, range start and range end into a small
// per-process ring, a file under a folder both sides know (DIESCOPE_NVTX_DIR, /dev/shm/diescope-nvtx by
// default), named <pid>.ring. During a capture the agent reads the rings of the job's processes and
// turns the events into ranges (RingReader).
//
// The layout below is shared by the library (which links nothing of diescope) and the reader, so it
// is plain data. Every slot is written whole and then published by storing its sequence number
// (index + 1) with release order; the reader checks the number before and after copying a slot, so a
// slot overwritten while it was read is counted as lost, never misread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace diescope::agent {

namespace nvtx_ring {

inline constexpr char kMagic[8] = {'D', 'S', 'N', 'V', 'T', 'X', '1', '\0'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kSlots = 32768;  // 2 MiB of slots a process
inline constexpr std::size_t kNameBytes = 32;   // a name's first 31 bytes are kept
inline constexpr const char* kDefaultDir = "/dev/shm/diescope-nvtx";
inline constexpr const char* kDirVariable = "DIESCOPE_NVTX_DIR";

enum class EventKind : std::uint16_t { push = 1, pop = 2, start = 3, end = 4 };

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t slot_bytes;
  std::uint32_t capacity;  // slots
  std::int32_t pid;
  std::uint64_t written;   // slots claimed so far (atomic); slot i lives at i % capacity
  std::uint64_t clock_id;  // the clock of ts_ns: CLOCK_REALTIME (0)
  std::uint64_t reserved[3];
};
static_assert(sizeof(Header) == 64);

struct Slot {
  std::uint64_t seq;  // index + 1 once the slot is whole (atomic, release); 0: never written
  std::int64_t ts_ns;
  std::uint64_t id;  // start/end: the range's id; push/pop: 0
  std::uint32_t tid;
  std::uint16_t kind;     // EventKind
  std::uint16_t depth;    // push: the depth after it (1: outermost); pop: the depth before it
  char name[kNameBytes];  // push and start: the message, NUL-terminated; pop and end: empty
};
static_assert(sizeof(Slot) == 64);

inline constexpr std::size_t file_bytes(std::uint32_t capacity) {
  return sizeof(Header) + static_cast<std::size_t>(capacity) * sizeof(Slot);
}

}  // namespace nvtx_ring

// One NVTX range as the agent records it: a push/pop pair of one thread, or a start/end pair.
struct NvtxRange {
  std::int64_t pid = 0;
  std::uint32_t tid = 0;
  int depth = 0;  // push/pop: 1 for an outermost range; start/end: 0
  std::string name;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool open = false;  // still open when the reading stopped: end_ns is where it stopped
};

// The events of one process's ring since the previous read, paired into ranges. Holds the ring's
// mapping for as long as it lives, so a process that exits (its library unlinks the file) can still be
// read to its end.
class RingReader {
 public:
  // Opens `path`; nullopt with `why` set when it is not a ring of this layout.
  static std::optional<RingReader> open(const std::filesystem::path& path, std::string& why);
  RingReader(RingReader&& other) noexcept;
  RingReader& operator=(RingReader&& other) noexcept;
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;
  ~RingReader();

  std::int64_t pid() const { return pid_; }
  // Reads every event published since the previous read; appends the ranges that closed, whose end is
  // at or after `since_ns` (a range that began earlier keeps its own start). Returns events read.
  std::size_t read(std::int64_t since_ns, std::vector<NvtxRange>& out);
  // The ranges still open, ended at `at_ns` and marked open.
  void close_open(std::int64_t at_ns, std::int64_t since_ns, std::vector<NvtxRange>& out) const;
  // Events that were overwritten before they could be read, or read torn.
  std::uint64_t lost() const { return lost_; }
  // Pops and ends that matched no push or start (their opening event was lost or came before the ring).
  std::uint64_t unmatched() const { return unmatched_; }

 private:
  RingReader() = default;
  void take(const nvtx_ring::Slot& s, std::int64_t since_ns, std::vector<NvtxRange>& out);
  void* map_ = nullptr;
  std::size_t bytes_ = 0;
  std::int64_t pid_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint64_t next_ = 0;  // the next slot index to read
  std::uint64_t lost_ = 0;
  std::uint64_t unmatched_ = 0;
  struct Open {
    std::string name;
    std::int64_t start_ns = 0;
    int depth = 0;
    std::uint32_t tid = 0;
  };
  std::map<std::uint32_t, std::vector<Open>> stacks_;  // push/pop: per thread
  std::map<std::uint64_t, Open> started_;              // start/end: by id
};

// The ring folder: $DIESCOPE_NVTX_DIR when set, else nvtx_ring::kDefaultDir.
std::filesystem::path nvtx_ring_dir();

// Whether `pid` is `root` or one of its descendants, by the parent links in `proc`/PID/stat.
bool in_process_tree(const std::filesystem::path& proc, std::int64_t pid, std::int64_t root);

}  // namespace diescope::agent
