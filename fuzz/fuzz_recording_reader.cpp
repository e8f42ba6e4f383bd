// libFuzzer target for the recording reader: the input is written to a file, opened with
// open_recording() and every stream is read to its end. An InputError is the expected answer to
// bad input; any other exception, a crash or a sanitizer report is a bug.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <type_traits>

#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"

namespace {

// One file for every input, in memory-backed /dev/shm when there is one.
struct InputFile {
  InputFile() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = tmp ? tmp : (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    path = dir + "/diescope-fuzz-recording-XXXXXX";
    fd = ::mkstemp(path.data());
    if (fd < 0) std::abort();
  }
  ~InputFile() {
    ::close(fd);
    ::unlink(path.c_str());
  }
  void write(const std::uint8_t* data, std::size_t size) const {
    if (::ftruncate(fd, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  std::string path;
  int fd = -1;
};

template <typename Record, typename Stream>
void drain(Stream stream) {
  Record r;
  while (stream->next(r)) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const InputFile file;
  file.write(data, size);
  try {
    const auto source = diescope::recording::open_recording(file.path);
    using namespace diescope::recording;
    // Touch what the analysis touches: every sample's values and every side record.
    ChipSample c;
    double sum = 0;
    for (auto s = source->stream<ChipSample>(); s->next(c);) {
      for (double v : c.units) sum += v;
      for (double v : c.diagnostics) sum += v;
      for (double v : c.counts) sum += v;
    }
    EngineReading e;
    for (auto s = source->stream<EngineReading>(); s->next(e);)
      for (double v : e.values) sum += v;
    for_each_kind<StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
      if constexpr (!std::is_same_v<Record, ChipSample> && !std::is_same_v<Record, EngineReading>)
        drain<Record>(source->stream<Record>());
    });
    const SideRecords& side = source->side();
    std::size_t text = 0;
    for (const Note& n : side.notes) text += n.topic.size() + n.text.size();
    for (const CountersEvent& ev : side.counters) text += ev.reason.size();
    if (side.end) text += side.end->ending.text.size();
    // Keep the reads from being optimised away.
    if (sum == 12345.678 && text == 7) std::abort();
  } catch (const diescope::core::InputError&) {
    // The expected answer to bad input.
  }
  return 0;
}
