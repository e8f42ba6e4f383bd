#include "diescope/recording/writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"
#include "format_internal.hpp"

namespace diescope {

using recfmt::Kind;

namespace {

// Lines are handed to the OS when this much is buffered, and on flush().
constexpr std::size_t kFlushBytes = 1 << 20;

std::string system_reason(int err) { return std::strerror(err); }

std::string fix_for_write_error(int err) {
  if (err == ENOSPC || err == EDQUOT) return "free space on that disk, or write the recording to another disk";
  if (err == EROFS) return "write the recording to a writable folder";
  return "check the disk and the folder, or write the recording to another path";
}

}  // namespace

RecordingWriter::RecordingWriter(std::filesystem::path path, const RecordingMeta& meta)
    : path_(std::move(path)), meta_(meta) {
  std::string meta_json;
  try {
    meta_json = recfmt::meta_to_json(meta_);
  } catch (const recfmt::MetaProblem& e) {
    throw Error("cannot write recording " + path_.string() + ": its meta is invalid: " + e.what(),
                "this is a bug in the program that made the meta; please report it", kExitInternal);
  }
  meta_.format_version = kRecordingFormatVersion;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw Error("cannot create recording " + path_.string() + ": " + system_reason(err),
                err == EACCES || err == EROFS || err == ENOENT || err == ENOTDIR || err == EISDIR
                    ? "check that the folder exists and is writable, or choose another output path"
                    : fix_for_write_error(err),
                kExitInput);
  }
  buffer_.reserve(kFlushBytes + 4096);
  buffer_ += kRecordingMagic;
  buffer_ += ' ';
  recfmt::append_integer(buffer_, kRecordingFormatVersion);
  append_line_end();
  buffer_ += "meta ";
  buffer_ += meta_json;
  append_line_end();
  try {
    flush();
  } catch (...) {
    ::close(fd_);  // the destructor does not run when a constructor throws
    fd_ = -1;
    throw;
  }
}

RecordingWriter::~RecordingWriter() {
  try {
    close();
  } catch (...) {
    // A destructor must not throw; callers that care call close() themselves.
  }
}

void RecordingWriter::check_open() const {
  if (fd_ < 0)
    throw Error("cannot write to recording " + path_.string() + ": it is already closed",
                "this is a bug in the program writing it; please report it", kExitInternal);
}

void RecordingWriter::reject(const std::string& what) const {
  throw Error("refusing to write an invalid record to " + path_.string() + ": " + what,
              "this is a bug in the collector that produced it (a value that could not be read must be NaN "
              "with a note, and times must not decrease); please report it",
              kExitInternal);
}

void RecordingWriter::stamp(int kind, TimeNs ts) {
  const auto k = static_cast<std::size_t>(kind);
  if (have_ts_[k] && ts < last_ts_[k])
    reject(std::string(recfmt::kKindWords[k]) + " record at " + std::to_string(ts) +
           " ns is earlier than the previous one at " + std::to_string(last_ts_[k]) + " ns");
  have_ts_[k] = true;
  last_ts_[k] = ts;
}

void RecordingWriter::append_line_end() {
  buffer_ += '\n';
  ++lines_;
  if (buffer_.size() >= kFlushBytes) flush();
}

namespace {

template <typename Reject>
void check_values(const std::span<const double> values, std::size_t expected, const char* what, const Reject& reject) {
  if (values.size() != expected)
    reject(std::string(what) + ": " + std::to_string(values.size()) + " values where the meta declares " +
           std::to_string(expected) + " columns");
  for (double v : values)
    if (std::isinf(v)) reject(std::string(what) + ": a value is infinite");
}

}  // namespace

void RecordingWriter::write(const ChipSample& s) {
  check_open();
  auto fail = [this](const std::string& w) { reject(w); };
  check_values(s.units, meta_.units.size(), "chip sample units", fail);
  check_values(s.diagnostics, meta_.diagnostics.size(), "chip sample diagnostics", fail);
  check_values(s.counts, meta_.counts.size(), "chip sample counts", fail);
  if (s.end_ns < s.start_ns)
    reject("chip sample ends (" + std::to_string(s.end_ns) + " ns) before it starts (" + std::to_string(s.start_ns) + " ns)");
  stamp(recfmt::index_of(Kind::chip), s.start_ns);
  buffer_ += "chip ";
  recfmt::append_integer(buffer_, s.start_ns);
  buffer_ += ' ';
  recfmt::append_integer(buffer_, s.end_ns);
  for (const auto& group : {s.units, s.diagnostics, s.counts}) {
    for (double v : group) {
      buffer_ += ' ';
      recfmt::append_number(buffer_, v);
    }
  }
  append_line_end();
}

void RecordingWriter::write(const OwnedChipSample& s) {
  write(ChipSample{s.start_ns, s.end_ns, s.units, s.diagnostics, s.counts});
}

void RecordingWriter::write(const UtilSample& s) {
  check_open();
  if (!(s.pct >= 0 && s.pct <= 100))
    reject("GPU-Util " + std::to_string(s.pct) + " is not a number from 0 to 100 (an unreadable poll is left out)");
  stamp(recfmt::index_of(Kind::util), s.ts_ns);
  buffer_ += "util ";
  recfmt::append_integer(buffer_, s.ts_ns);
  buffer_ += ' ';
  recfmt::append_number(buffer_, s.pct);
  buffer_ += s.source == UtilSource::polled ? " polled" : " samples";
  append_line_end();
}

void RecordingWriter::write(const ClockReading& r) {
  check_open();
  for (double v : {r.sm_mhz, r.mem_mhz})
    if (std::isinf(v) || v < 0) reject("clock " + std::to_string(v) + " MHz is infinite or negative");
  stamp(recfmt::index_of(Kind::clock), r.ts_ns);
  buffer_ += "clock ";
  recfmt::append_integer(buffer_, r.ts_ns);
  buffer_ += ' ';
  recfmt::append_number(buffer_, r.sm_mhz);
  buffer_ += ' ';
  recfmt::append_number(buffer_, r.mem_mhz);
  append_line_end();
}

void RecordingWriter::write(const ThrottleReading& r) {
  check_open();
  stamp(recfmt::index_of(Kind::throttle), r.ts_ns);
  buffer_ += "throttle ";
  recfmt::append_integer(buffer_, r.ts_ns);
  buffer_ += ' ';
  if (!r.mask) {
    buffer_ += '?';
  } else if (*r.mask == 0) {
    buffer_ += '-';
  } else {
    bool first = true;
    for (const std::string& name : throttle_reason_names(*r.mask)) {
      if (!first) buffer_ += ',';
      buffer_ += name;
      first = false;
    }
  }
  append_line_end();
}

void RecordingWriter::write(const PowerLimitReading& r) {
  check_open();
  if (std::isinf(r.limit_w) || r.limit_w < 0) reject("power limit " + std::to_string(r.limit_w) + " W is infinite or negative");
  stamp(recfmt::index_of(Kind::power), r.ts_ns);
  buffer_ += "power ";
  recfmt::append_integer(buffer_, r.ts_ns);
  buffer_ += ' ';
  recfmt::append_number(buffer_, r.limit_w);
  append_line_end();
}

void RecordingWriter::write(const EngineReading& r) {
  check_open();
  check_values(r.values, meta_.engines.size(), "engine reading", [this](const std::string& w) { reject(w); });
  stamp(recfmt::index_of(Kind::engine), r.ts_ns);
  buffer_ += "engine ";
  recfmt::append_integer(buffer_, r.ts_ns);
  for (double v : r.values) {
    buffer_ += ' ';
    recfmt::append_number(buffer_, v);
  }
  append_line_end();
}

void RecordingWriter::write(const OwnedEngineReading& r) { write(EngineReading{r.ts_ns, r.values}); }

void RecordingWriter::write(const ProcessReading& r) {
  check_open();
  if (r.compute < -1 || r.graphics < -1 || r.exited < 0)
    reject("process counts must be -1 (unreadable) or more, and exited 0 or more");
  stamp(recfmt::index_of(Kind::proc), r.ts_ns);
  buffer_ += "proc ";
  recfmt::append_integer(buffer_, r.ts_ns);
  for (int v : {r.compute, r.graphics, r.exited}) {
    buffer_ += ' ';
    recfmt::append_integer(buffer_, v);
  }
  append_line_end();
}

void RecordingWriter::write(const Mark& m) {
  check_open();
  stamp(recfmt::index_of(Kind::mark), m.ts_ns);
  buffer_ += "mark ";
  recfmt::append_integer(buffer_, m.ts_ns);
  buffer_ += m.kind == MarkKind::start ? " start" : " stop";
  append_line_end();
}

void RecordingWriter::write(const CountersEvent& e) {
  check_open();
  stamp(recfmt::index_of(Kind::counters), e.ts_ns);
  buffer_ += "counters ";
  recfmt::append_integer(buffer_, e.ts_ns);
  buffer_ += e.on ? " on" : " off";
  if (!e.reason.empty()) {
    buffer_ += ' ';
    recfmt::append_escaped(buffer_, e.reason);
  }
  append_line_end();
}

void RecordingWriter::write(const Note& n) {
  check_open();
  bool word = !n.topic.empty();
  for (char c : n.topic)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) word = false;
  if (!word) reject("note topic \"" + recfmt::excerpt(n.topic) + "\" must be one word without spaces");
  stamp(recfmt::index_of(Kind::note), n.ts_ns);
  buffer_ += "note ";
  recfmt::append_integer(buffer_, n.ts_ns);
  buffer_ += ' ';
  buffer_ += n.topic;
  if (!n.text.empty()) {
    buffer_ += ' ';
    recfmt::append_escaped(buffer_, n.text);
  }
  append_line_end();
}

void RecordingWriter::write(const ClockJump& j) {
  check_open();
  stamp(recfmt::index_of(Kind::jump), j.ts_ns);
  buffer_ += "jump ";
  recfmt::append_integer(buffer_, j.ts_ns);
  buffer_ += ' ';
  recfmt::append_integer(buffer_, j.step_ns);
  append_line_end();
}

void RecordingWriter::write(const RunEnd& e) {
  check_open();
  if (saw_end_) reject("the run's end is written twice");
  stamp(recfmt::index_of(Kind::end), e.ts_ns);
  saw_end_ = true;
  buffer_ += "end ";
  recfmt::append_integer(buffer_, e.ts_ns);
  buffer_ += ' ';
  recfmt::append_integer(buffer_, e.exit_code);
  if (!e.how.empty()) {
    buffer_ += ' ';
    recfmt::append_escaped(buffer_, e.how);
  }
  append_line_end();
}

void RecordingWriter::flush() {
  check_open();
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      // Keep what was not written, so a later flush can retry once space is freed.
      buffer_.erase(0, done);
      throw Error("writing recording " + path_.string() + " failed: " + system_reason(err), fix_for_write_error(err),
                  kExitInput);
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void RecordingWriter::close() {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  const int synced = ::fsync(fd_);
  const int sync_err = errno;
  const int closed = ::close(fd_);
  const int close_err = errno;
  fd_ = -1;
  if (synced != 0 && sync_err != EINVAL)  // EINVAL: a file (e.g. a pipe) that cannot be synced
    throw Error("saving recording " + path_.string() + " to disk failed: " + system_reason(sync_err),
                fix_for_write_error(sync_err), kExitInput);
  if (closed != 0)
    throw Error("closing recording " + path_.string() + " failed: " + system_reason(close_err),
                fix_for_write_error(close_err), kExitInput);
}

}  // namespace diescope
