#include "diescope/recording/writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/metrics/name.hpp"
#include "diescope/recording/format.hpp"
#include "format_internal.hpp"

namespace diescope::recording {

namespace {

// Lines are handed to the OS when this much is buffered, and on flush().
constexpr std::size_t kFlushBytes = 1 << 20;

std::string system_reason(int err) {
  return std::strerror(err);
}

std::string fix_for_write_error(int err) {
  if (err == ENOSPC || err == EDQUOT)
    return "free space on that disk, or write the recording to another disk";
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
    throw core::Error("cannot write recording " + path_.string() + ": its meta is invalid: " + e.what(),
                      "this is a bug in the program that made the meta; please report it",
                      core::kExitInternal);
  }
  meta_.format_version = core::kRecordingFormatVersion;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw core::Error("cannot create recording " + path_.string() + ": " + system_reason(err),
                      err == EACCES || err == EROFS || err == ENOENT || err == ENOTDIR || err == EISDIR
                          ? "check that the folder exists and is writable, or choose another output path"
                          : fix_for_write_error(err),
                      core::kExitInput);
  }
  buffer_.reserve(kFlushBytes + 4096);
  buffer_ += kRecordingMagic;
  buffer_ += ' ';
  recfmt::append_integer(buffer_, core::kRecordingFormatVersion);
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
    throw core::Error("cannot write to recording " + path_.string() + ": it is already closed",
                      "this is a bug in the program writing it; please report it", core::kExitInternal);
}

void RecordingWriter::reject(const std::string& what) const {
  throw core::Error(
      "refusing to write an invalid record to " + path_.string() + ": " + what,
      "this is a bug in the collector that produced it (a value that could not be read must be NaN "
      "with a note, and times must not decrease); please report it",
      core::kExitInternal);
}

void RecordingWriter::stamp(std::size_t kind, TimeNs ts) {
  if (have_ts_[kind] && ts < last_ts_[kind])
    reject(std::string(kKindWords[kind]) + " record at " + std::to_string(ts) +
           " ns is earlier than the previous one at " + std::to_string(last_ts_[kind]) + " ns");
  have_ts_[kind] = true;
  last_ts_[kind] = ts;
}

void RecordingWriter::append_line_end() {
  buffer_ += '\n';
  ++lines_;
  if (buffer_.size() >= kFlushBytes) flush();
}

namespace {

// ---- each kind's rules and fields (docs/recording-format.md, "Records") ---------------------------
// check_fields() calls reject(what) for a record that breaks a rule of its kind; append_fields()
// writes the fields after the kind's word, its time first.

using Reject = std::function<void(const std::string&)>;

void check_values(const std::span<const double> values, std::size_t expected, const char* what,
                  const Reject& reject) {
  if (values.size() != expected)
    reject(std::string(what) + ": " + std::to_string(values.size()) + " values where the meta declares " +
           std::to_string(expected) + " columns");
  for (double v : values)
    if (std::isinf(v)) reject(std::string(what) + ": a value is infinite");
}

void check_fields(const ChipSample& s, const RecordingMeta& meta, const Reject& reject) {
  check_values(s.units, meta.units.size(), "chip sample units", reject);
  check_values(s.diagnostics, meta.diagnostics.size(), "chip sample diagnostics", reject);
  check_values(s.counts, meta.counts.size(), "chip sample counts", reject);
  if (s.end_ns < s.start_ns)
    reject("chip sample ends (" + std::to_string(s.end_ns) + " ns) before it starts (" +
           std::to_string(s.start_ns) + " ns)");
}
void append_fields(std::string& out, const ChipSample& s) {
  recfmt::append_integer(out, s.start_ns);
  out += ' ';
  recfmt::append_integer(out, s.end_ns);
  for (const auto& group : {s.units, s.diagnostics, s.counts}) {
    for (double v : group) {
      out += ' ';
      recfmt::append_number(out, v);
    }
  }
}

void check_fields(const UtilSample& s, const RecordingMeta&, const Reject& reject) {
  if (!(s.pct >= 0 && s.pct <= 100))
    reject("GPU-Util " + std::to_string(s.pct) +
           " is not a number from 0 to 100 (an unreadable poll is left out)");
}
void append_fields(std::string& out, const UtilSample& s) {
  recfmt::append_integer(out, s.ts_ns);
  out += ' ';
  recfmt::append_number(out, s.pct);
  out += s.source == UtilSource::polled ? " polled" : " samples";
}

void check_fields(const ClockReading& r, const RecordingMeta&, const Reject& reject) {
  for (double v : {r.sm_mhz, r.mem_mhz})
    if (std::isinf(v) || v < 0) reject("clock " + std::to_string(v) + " MHz is infinite or negative");
}
void append_fields(std::string& out, const ClockReading& r) {
  recfmt::append_integer(out, r.ts_ns);
  out += ' ';
  recfmt::append_number(out, r.sm_mhz);
  out += ' ';
  recfmt::append_number(out, r.mem_mhz);
}

void check_fields(const ThrottleReading&, const RecordingMeta&, const Reject&) {}
void append_fields(std::string& out, const ThrottleReading& r) {
  recfmt::append_integer(out, r.ts_ns);
  out += ' ';
  if (!r.mask) {
    out += '?';
  } else if (*r.mask == 0) {
    out += '-';
  } else {
    bool first = true;
    for (const std::string& name : throttle_reason_names(*r.mask)) {
      if (!first) out += ',';
      out += name;
      first = false;
    }
  }
}

void check_fields(const PowerLimitReading& r, const RecordingMeta&, const Reject& reject) {
  if (std::isinf(r.limit_w) || r.limit_w < 0)
    reject("power limit " + std::to_string(r.limit_w) + " W is infinite or negative");
  if (std::isinf(r.draw_w) || r.draw_w < 0)
    reject("power draw " + std::to_string(r.draw_w) + " W is infinite or negative");
  if (std::isinf(r.energy_mj) || r.energy_mj < 0)
    reject("energy counter " + std::to_string(r.energy_mj) + " mJ is infinite or negative");
}
void append_fields(std::string& out, const PowerLimitReading& r) {
  recfmt::append_integer(out, r.ts_ns);
  for (double v : {r.limit_w, r.draw_w, r.energy_mj}) {
    out += ' ';
    recfmt::append_number(out, v);
  }
}

void check_fields(const EngineReading& r, const RecordingMeta& meta, const Reject& reject) {
  check_values(r.values, meta.engines.size(), "engine reading", reject);
}
void append_fields(std::string& out, const EngineReading& r) {
  recfmt::append_integer(out, r.ts_ns);
  for (double v : r.values) {
    out += ' ';
    recfmt::append_number(out, v);
  }
}

void check_fields(const ProcessReading& r, const RecordingMeta&, const Reject& reject) {
  if (r.compute < -1 || r.graphics < -1 || r.exited < 0)
    reject("process counts must be -1 (unreadable) or more, and exited 0 or more");
}
void append_fields(std::string& out, const ProcessReading& r) {
  recfmt::append_integer(out, r.ts_ns);
  for (int v : {r.compute, r.graphics, r.exited}) {
    out += ' ';
    recfmt::append_integer(out, v);
  }
}

void check_fields(const HostSample& s, const RecordingMeta&, const Reject& reject) {
  if (s.values.empty()) reject("a host sample holds no values");
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    if (std::isinf(s.values[i].value))
      reject("host stream " + std::to_string(s.values[i].id) + ": the value is infinite");
    if (i > 0 && s.values[i].id <= s.values[i - 1].id)
      reject("a host sample's stream ids must ascend (" + std::to_string(s.values[i - 1].id) + " then " +
             std::to_string(s.values[i].id) + ")");
  }
}
void append_fields(std::string& out, const HostSample& s) {
  recfmt::append_integer(out, s.ts_ns);
  for (const HostValue& v : s.values) {
    out += ' ';
    recfmt::append_integer(out, v.id);
    out += ' ';
    recfmt::append_number(out, v.value);
  }
}

void check_fields(const HostStream& h, const RecordingMeta&, const Reject& reject) {
  if (h.id < 0) reject("host stream id " + std::to_string(h.id) + " is negative");
  const metrics::MetricDescriptor& d = h.descriptor;
  if (const auto problem = metrics::check_suffix(d.name, d.type))
    reject("host stream " + std::to_string(h.id) + ": " + problem->reason);
  if (!metrics::parse_scope(metrics::scope_word(d.scope)))
    reject("host stream " + std::to_string(h.id) + ": scope \"" +
           recfmt::excerpt(metrics::scope_word(d.scope)) + "\" cannot be written as one word");
  if (d.peak && !std::isfinite(*d.peak))
    reject("host stream " + std::to_string(h.id) +
           ": the peak is not finite (leave it out, with the reason)");
}
void append_fields(std::string& out, const HostStream& h) {
  recfmt::append_integer(out, h.ts_ns);
  out += ' ';
  recfmt::append_integer(out, h.id);
  const metrics::MetricDescriptor& d = h.descriptor;
  out += ' ';
  out += d.full_name();
  out += ' ';
  out += metrics::to_string(d.type);
  out += ' ';
  out += metrics::to_string(d.unit);
  out += ' ';
  out += metrics::scope_word(d.scope);
  out += ' ';
  recfmt::append_number(out, d.peak.value_or(std::numeric_limits<double>::quiet_NaN()));
  if (!d.peak && !d.no_peak_reason.empty()) {
    out += ' ';
    recfmt::append_escaped(out, d.no_peak_reason);
  }
}

void check_fields(const GpuHolder& h, const RecordingMeta&, const Reject& reject) {
  if (h.pid <= 0) reject("holder " + std::to_string(h.pid) + ": a pid must be above 0");
  if (h.role == HolderRole::gone && !h.name.empty())
    reject("holder " + std::to_string(h.pid) + ": a process that left the lists carries no name");
}
void append_fields(std::string& out, const GpuHolder& h) {
  recfmt::append_integer(out, h.ts_ns);
  out += ' ';
  recfmt::append_integer(out, h.pid);
  out += ' ';
  out += holder_role_text(h.role);
  if (!h.name.empty()) {
    out += ' ';
    recfmt::append_escaped(out, h.name);
  }
}

void check_fields(const HostTask& t, const RecordingMeta&, const Reject& reject) {
  if (t.pid <= 0 || t.ppid < 0)
    reject("task " + std::to_string(t.pid) + ": a pid must be above 0 and a parent's 0 or more");
}
void append_fields(std::string& out, const HostTask& t) {
  recfmt::append_integer(out, t.ts_ns);
  out += ' ';
  recfmt::append_integer(out, t.pid);
  out += ' ';
  recfmt::append_integer(out, t.ppid);
  if (!t.name.empty()) {
    out += ' ';
    recfmt::append_escaped(out, t.name);
  }
}

void check_fields(const Mark&, const RecordingMeta&, const Reject&) {}
void append_fields(std::string& out, const Mark& m) {
  recfmt::append_integer(out, m.ts_ns);
  out += m.kind == MarkKind::start ? " start" : " stop";
}

void check_fields(const CountersEvent&, const RecordingMeta&, const Reject&) {}
void append_fields(std::string& out, const CountersEvent& e) {
  recfmt::append_integer(out, e.ts_ns);
  out += e.on ? " on" : " off";
  if (!e.reason.empty()) {
    out += ' ';
    recfmt::append_escaped(out, e.reason);
  }
}

void check_fields(const Note& n, const RecordingMeta&, const Reject& reject) {
  bool word = !n.topic.empty();
  for (char c : n.topic)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) word = false;
  if (!word) reject("note topic \"" + recfmt::excerpt(n.topic) + "\" must be one word without spaces");
}
void append_fields(std::string& out, const Note& n) {
  recfmt::append_integer(out, n.ts_ns);
  out += ' ';
  out += n.topic;
  if (!n.text.empty()) {
    out += ' ';
    recfmt::append_escaped(out, n.text);
  }
}

void check_fields(const ClockJump&, const RecordingMeta&, const Reject&) {}
void append_fields(std::string& out, const ClockJump& j) {
  recfmt::append_integer(out, j.ts_ns);
  out += ' ';
  recfmt::append_integer(out, j.step_ns);
}

void check_fields(const RunEnd&, const RecordingMeta&, const Reject&) {}  // written once: append() checks
void append_fields(std::string& out, const RunEnd& e) {
  recfmt::append_integer(out, e.ts_ns);
  out += ' ';
  recfmt::append_integer(out, e.exit_code);
  const std::string how = run_ending_text(e.ending);
  if (!how.empty()) {
    out += ' ';
    recfmt::append_escaped(out, how);
  }
}

}  // namespace

void RecordingWriter::write_record(AnyRecord record) {
  std::visit([this](const auto* r) { append(*r); }, record);
}

template <typename Record>
void RecordingWriter::append(const Record& record) {
  check_open();
  check_fields(record, meta_, [this](const std::string& what) { reject(what); });
  if constexpr (std::is_same_v<Record, RunEnd>) {
    if (saw_end_) reject("the run's end is written twice");
  }
  if constexpr (std::is_same_v<Record, HostStream>) {
    if (host_ids_.contains(record.id))
      reject("host stream " + std::to_string(record.id) + " is declared twice");
  }
  if constexpr (std::is_same_v<Record, HostSample>) {
    for (const HostValue& v : record.values)
      if (!host_ids_.contains(v.id))
        reject("host stream " + std::to_string(v.id) + " has a value before its hstream declaration");
  }
  stamp(kind_index<Record>, order_time(record));
  if constexpr (std::is_same_v<Record, RunEnd>) saw_end_ = true;
  if constexpr (std::is_same_v<Record, HostStream>) host_ids_.insert(record.id);
  buffer_ += Record::kKindWord;
  buffer_ += ' ';
  append_fields(buffer_, record);
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
      throw core::Error("writing recording " + path_.string() + " failed: " + system_reason(err),
                        fix_for_write_error(err), core::kExitInput);
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
    throw core::Error("saving recording " + path_.string() + " to disk failed: " + system_reason(sync_err),
                      fix_for_write_error(sync_err), core::kExitInput);
  if (closed != 0)
    throw core::Error("closing recording " + path_.string() + " failed: " + system_reason(close_err),
                      fix_for_write_error(close_err), core::kExitInput);
}

}  // namespace diescope::recording
