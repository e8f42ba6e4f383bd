// The sampler's line protocol (see sampler.hpp for the grammar).
#include <charconv>
#include <cmath>
#include <cstdio>

#include "diescope/collect/sampler.hpp"

namespace diescope::collect {

namespace m = sampler_msg;

namespace {

void put_text(std::string& out, std::string_view text) {
  for (char c : text) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
}

template <typename Int>
void put_int(std::string& out, Int value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, end);
}

void put_double(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, end);
}

// A cursor over the fields of one line.
class Fields {
 public:
  explicit Fields(std::string_view line) : rest_(line) {}

  bool word(std::string_view& out) {
    if (rest_.empty()) return false;
    auto space = rest_.find(' ');
    out = rest_.substr(0, space);
    rest_ = space == std::string_view::npos ? std::string_view{} : rest_.substr(space + 1);
    return !out.empty();
  }
  template <typename Int>
  bool integer(Int& out) {
    std::string_view w;
    if (!word(w)) return false;
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), out);
    return ec == std::errc{} && ptr == w.data() + w.size();
  }
  bool number(double& out) {
    std::string_view w;
    if (!word(w)) return false;
    if (w == "nan" || w == "-nan") {
      out = std::nan("");
      return true;
    }
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), out);
    return ec == std::errc{} && ptr == w.data() + w.size();
  }
  bool string(std::string& out) {
    std::string_view w;
    if (!word(w)) return false;
    out = std::string(w);
    return true;
  }
  // Everything left (may be empty).
  std::string text() {
    std::string out(rest_);
    rest_ = {};
    return out;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

struct Formatter {
  std::string& out;
  void operator()(const m::Hello& h) {
    out += "hello ";
    put_int(out, h.version);
    out += ' ';
    put_int(out, h.pid);
    out += ' ';
    put_text(out, h.mode.empty() ? "-" : h.mode);
  }
  void operator()(const m::Device& d) {
    out += "device ";
    put_int(out, d.index);
    out += ' ';
    put_int(out, d.compute_capability);
    out += ' ';
    put_int(out, d.sm_count);
    out += ' ';
    put_text(out, d.uuid.empty() ? "-" : d.uuid);
    out += ' ';
    put_text(out, d.chip.empty() ? "-" : d.chip);
    out += ' ';
    put_text(out, d.name);
  }
  void operator()(const m::Metrics& ms) {
    out += "metrics ";
    put_int(out, ms.names.size());
    for (const auto& name : ms.names) {
      out += ' ';
      put_text(out, name);
    }
  }
  void operator()(const m::Clock& c) {
    out += "clock ";
    put_int(out, c.offset_ns);
    out += ' ';
    put_int(out, c.uncertainty_ns);
    out += ' ';
    put_text(out, c.method);
  }
  void operator()(const m::On& o) {
    out += "on ";
    put_int(out, o.ts_ns);
  }
  void operator()(const m::Sample& s) {
    out += "s ";
    put_int(out, s.start_ns);
    out += ' ';
    put_int(out, s.end_ns);
    for (double v : s.values) {
      out += ' ';
      put_double(out, v);
    }
  }
  void operator()(const m::Drain& d) {
    out += "drain ";
    put_int(out, d.ts_ns);
    out += ' ';
    put_int(out, d.samples);
    out += ' ';
    put_int(out, d.decode_us);
    out += ' ';
    put_int(out, d.blanked);
  }
  void operator()(const m::Overflow& o) {
    out += "overflow ";
    put_int(out, o.ts_ns);
    out += ' ';
    put_text(out, o.text);
  }
  void operator()(const m::Gap& g) {
    out += "gap ";
    put_int(out, g.from_ns);
    out += ' ';
    put_int(out, g.to_ns);
  }
  void operator()(const m::Note& n) {
    out += "note ";
    put_text(out, n.topic.empty() ? "-" : n.topic);
    out += ' ';
    put_text(out, n.text);
  }
  void operator()(const m::Off& o) {
    out += "off ";
    put_int(out, o.ts_ns);
    out += ' ';
    put_text(out, o.reason);
  }
  void operator()(const m::Error& e) {
    out += "error ";
    out += error_kind_name(e.kind);
    out += ' ';
    put_int(out, e.code);
    out += ' ';
    put_text(out, e.text);
  }
  void operator()(const m::Bye& b) {
    out += "bye ";
    put_int(out, b.samples);
  }
};

std::optional<SamplerMessage> fail(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

}  // namespace

std::string_view error_kind_name(m::ErrorKind kind) {
  switch (kind) {
    case m::ErrorKind::permission:
      return "permission";
    case m::ErrorKind::busy:
      return "busy";
    case m::ErrorKind::no_driver:
      return "no_driver";
    case m::ErrorKind::no_device:
      return "no_device";
    case m::ErrorKind::unsupported:
      return "unsupported";
    case m::ErrorKind::metrics:
      return "metrics";
    case m::ErrorKind::usage:
      return "usage";
    case m::ErrorKind::cupti:
      return "cupti";
  }
  return "cupti";
}

std::optional<m::ErrorKind> error_kind_from_name(std::string_view name) {
  for (auto kind :
       {m::ErrorKind::permission, m::ErrorKind::busy, m::ErrorKind::no_driver, m::ErrorKind::no_device,
        m::ErrorKind::unsupported, m::ErrorKind::metrics, m::ErrorKind::usage, m::ErrorKind::cupti}) {
    if (error_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

std::string format_message(const SamplerMessage& message) {
  std::string out;
  append_message(out, message);
  return out;
}

void append_message(std::string& out, const SamplerMessage& message) {
  std::visit(Formatter{out}, message);
}

std::optional<SamplerMessage> parse_message(std::string_view line, std::string* why) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Fields f(line);
  std::string_view tag;
  if (!f.word(tag)) return fail(why, "empty line");

  if (tag == "s") {
    m::Sample s;
    if (!f.integer(s.start_ns) || !f.integer(s.end_ns)) return fail(why, "sample without start and end");
    while (!f.done()) {
      double v = 0;
      if (!f.number(v)) return fail(why, "sample value is not a number");
      s.values.push_back(v);
    }
    return s;
  }
  if (tag == "hello") {
    m::Hello h;
    if (!f.integer(h.version) || !f.integer(h.pid) || !f.string(h.mode)) return fail(why, "bad hello");
    return h;
  }
  if (tag == "device") {
    m::Device d;
    if (!f.integer(d.index) || !f.integer(d.compute_capability) || !f.integer(d.sm_count) ||
        !f.string(d.uuid) || !f.string(d.chip))
      return fail(why, "bad device");
    if (d.uuid == "-") d.uuid.clear();
    if (d.chip == "-") d.chip.clear();
    d.name = f.text();
    return d;
  }
  if (tag == "metrics") {
    m::Metrics ms;
    std::size_t n = 0;
    if (!f.integer(n)) return fail(why, "bad metrics count");
    for (std::size_t i = 0; i < n; ++i) {
      std::string name;
      if (!f.string(name)) return fail(why, "metrics list shorter than its count");
      ms.names.push_back(std::move(name));
    }
    if (!f.done()) return fail(why, "metrics list longer than its count");
    return ms;
  }
  if (tag == "clock") {
    m::Clock c;
    if (!f.integer(c.offset_ns) || !f.integer(c.uncertainty_ns)) return fail(why, "bad clock");
    c.method = f.text();
    return c;
  }
  if (tag == "on") {
    m::On o;
    if (!f.integer(o.ts_ns)) return fail(why, "bad on");
    return o;
  }
  if (tag == "drain") {
    m::Drain d;
    if (!f.integer(d.ts_ns) || !f.integer(d.samples) || !f.integer(d.decode_us))
      return fail(why, "bad drain");
    if (!f.done() && !f.integer(d.blanked)) return fail(why, "bad drain");
    return d;
  }
  if (tag == "overflow") {
    m::Overflow o;
    if (!f.integer(o.ts_ns)) return fail(why, "bad overflow");
    o.text = f.text();
    return o;
  }
  if (tag == "gap") {
    m::Gap g;
    if (!f.integer(g.from_ns) || !f.integer(g.to_ns)) return fail(why, "bad gap");
    return g;
  }
  if (tag == "note") {
    m::Note n;
    if (!f.string(n.topic)) return fail(why, "note without topic");
    n.text = f.text();
    return n;
  }
  if (tag == "off") {
    m::Off o;
    if (!f.integer(o.ts_ns)) return fail(why, "bad off");
    o.reason = f.text();
    return o;
  }
  if (tag == "error") {
    m::Error e;
    std::string kind;
    if (!f.string(kind) || !f.integer(e.code)) return fail(why, "bad error");
    auto parsed = error_kind_from_name(kind);
    if (!parsed) return fail(why, "unknown error kind '" + kind + "'");
    e.kind = *parsed;
    e.text = f.text();
    return e;
  }
  if (tag == "bye") {
    m::Bye b;
    if (!f.integer(b.samples)) return fail(why, "bad bye");
    return b;
  }
  return fail(why, "unknown message '" + std::string(tag) + "'");
}

ErrorText describe_error(const m::Error& error, int device_index) {
  const std::string gpu = "GPU " + std::to_string(device_index);
  const std::string detail = error.text.empty() ? std::string{} : " (" + error.text + ")";
  switch (error.kind) {
    case m::ErrorKind::permission:
      return {
          "no permission for GPU performance counters on " + gpu + detail,
          "run diescope as root, or let every user read the counters: put 'options nvidia "
          "NVreg_RestrictProfilingToAdminUsers=0' in a file under /etc/modprobe.d/, then reload the nvidia "
          "driver (or reboot)"};
    case m::ErrorKind::busy:
      return {"the performance counters of " + gpu + " are held by another profiler" + detail,
              "stop the other profiler (Nsight Compute, Nsight Systems GPU metrics, DCGM profiling, another "
              "diescope) and run again; until then the report has GPU-Util only"};
    case m::ErrorKind::no_driver:
      return {"no NVIDIA driver could be loaded for the chip counters" + detail,
              "install the NVIDIA driver (libcuda.so.1) and check that nvidia-smi lists the GPU"};
    case m::ErrorKind::no_device:
      return {gpu + " does not exist" + detail,
              "list the GPUs with nvidia-smi -L and pass an index from it to --gpus"};
    case m::ErrorKind::unsupported:
      return {gpu + " cannot sample its performance counters" + detail,
              "PM sampling needs a Turing or newer GPU, not a MIG instance, vGPU without profiling, or "
              "confidential-computing mode; diescope reports GPU-Util only there"};
    case m::ErrorKind::metrics:
      return {"the counter set for " + gpu + " cannot be sampled" + detail,
              "this is a bug in diescope's unit table for this chip: please report it with 'diescope units' "
              "output"};
    case m::ErrorKind::usage:
      return {"the counter sampler was started with bad arguments" + detail, "please report this as a bug"};
    case m::ErrorKind::cupti:
      break;
  }
  return {"CUPTI failed while sampling the counters of " + gpu + detail,
          "check the driver with nvidia-smi; if it persists, report it with the CUPTI error shown"};
}

}  // namespace diescope::collect
