// Parent side of the sampler child: start it, read its messages, stop it, reap it.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <poll.h>
#include <thread>
#include <unistd.h>

#include "diescope/collect/sampler.hpp"
#include "diescope/core/error.hpp"

namespace diescope::collect {

namespace {

constexpr std::size_t kStderrTailBytes = 4096;

std::string join_metrics(const std::vector<std::string>& metrics) {
  std::string out;
  for (const auto& name : metrics) {
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

std::string number_arg(double value) {
  return fmt::format("{:g}", value);  // as printf's %g: six significant digits
}

}  // namespace

std::string SamplerExit::describe() const {
  std::string out;
  if (exited) {
    out = core::ExitStatus::exited_with(exit_code).describe();
  } else if (signal > 0) {
    out = core::ExitStatus::killed_by(signal).describe();
  } else {
    out = "ended in an unknown way";
  }
  if (!said_bye) out += " without finishing its protocol";
  return out;
}

std::string find_sampler_executable() {
  if (const char* env = std::getenv("DIESCOPE_CUPTI"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  auto candidate = self.parent_path() / "diescope-cupti";
  if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  return {};
}

SamplerProcess::SamplerProcess(const SamplerConfig& config) : device_(config.device) {
  std::vector<std::string> args;
  args.push_back(config.executable);
  for (const auto& a : config.leading_args) args.push_back(a);
  args.insert(args.end(),
              {"--device", std::to_string(config.device), "--interval-ms", number_arg(config.interval_ms),
               "--drain-ms", number_arg(config.drain_ms), "--metrics", join_metrics(config.metrics)});
  for (const auto& a : config.extra_args) args.push_back(a);

  core::ChildSpec spec;
  spec.argv = std::move(args);
  spec.in = core::Stdio::pipe();
  spec.out = core::Stdio::pipe();
  spec.err = core::Stdio::pipe();
  // CUDA device indexes in PCI order, as NVML numbers them, over every GPU.
  spec.set_env = {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  spec.unset_env = {"CUDA_VISIBLE_DEVICES"};
  spec.own_process_group = true;
  spec.parent_death_signal = SIGTERM;
  try {
    child_ = core::ChildProcess(spec);
  } catch (const core::StartError& e) {
    throw core::DeviceError(
        "could not run the counter sampler " + config.executable + ": " + std::strerror(e.system_error()),
        "reinstall diescope so that diescope-cupti sits beside diescope, or point DIESCOPE_CUPTI at it");
  } catch (const core::Error& e) {
    throw core::DeviceError(e.cause(), e.fix());  // no pipe: a device-side failure to the callers
  }
}

SamplerProcess::~SamplerProcess() {
  // Asked to stop first, so it disables the counters; killed only if it does not end in time.
  if (child_.running() && !exit_) {
    request_stop();
    wait(std::chrono::seconds(3));
  }
}

void SamplerProcess::read_into_buffer(core::UniqueFd& fd, std::string& buffer, bool& closed) {
  closed = false;
  if (!fd) {
    closed = true;
    return;
  }
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.reset();  // EOF or a hard error: the child is gone or closed its end
    closed = true;
    return;
  }
}

void SamplerProcess::parse_buffer(std::vector<SamplerMessage>& out, bool flush_partial) {
  std::size_t begin = 0;
  for (;;) {
    auto nl = out_buffer_.find('\n', begin);
    std::string_view line;
    if (nl == std::string::npos) {
      if (!flush_partial || begin >= out_buffer_.size()) break;
      line = std::string_view(out_buffer_).substr(begin);
      begin = out_buffer_.size();
      out.emplace_back(
          sampler_msg::Note{"protocol", "the sampler's output ended mid-line: '" + std::string(line) + "'"});
      break;
    }
    line = std::string_view(out_buffer_).substr(begin, nl - begin);
    begin = nl + 1;
    if (line.empty()) continue;
    std::string why;
    auto message = parse_message(line, &why);
    if (!message) {
      out.emplace_back(sampler_msg::Note{
          "protocol", "unreadable line from the sampler (" + why + "): " + std::string(line.substr(0, 200))});
      continue;
    }
    if (std::holds_alternative<sampler_msg::Sample>(*message)) ++samples_received_;
    if (std::holds_alternative<sampler_msg::Bye>(*message)) said_bye_ = true;
    out.push_back(std::move(*message));
  }
  out_buffer_.erase(0, begin);
}

bool SamplerProcess::pump(std::vector<SamplerMessage>& out) {
  for (auto& message : pending_) out.push_back(std::move(message));
  pending_.clear();
  bool closed = false;
  read_into_buffer(child_.stdout_pipe(), out_buffer_, closed);
  parse_buffer(out, closed);
  pump_stderr();
  return !closed;
}

bool SamplerProcess::pump_for(std::vector<SamplerMessage>& out, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::size_t before = out.size();
  for (;;) {
    bool open = pump(out);
    if (!open || out.size() > before) return open;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return open;
    pollfd fds[2] = {{output_fd(), POLLIN, 0}, {stderr_fd(), POLLIN, 0}};
    ::poll(fds, stderr_fd() >= 0 ? 2 : 1, static_cast<int>(left.count()));
  }
}

void SamplerProcess::pump_stderr() {
  bool closed = false;
  read_into_buffer(child_.stderr_pipe(), err_tail_, closed);
  if (err_tail_.size() > kStderrTailBytes) err_tail_.erase(0, err_tail_.size() - kStderrTailBytes);
}

void SamplerProcess::request_stop() {
  child_.stdin_pipe().reset();
}

void SamplerProcess::send_signal(int sig) {
  child_.signal(sig);
}

SamplerExit SamplerProcess::wait(std::chrono::milliseconds timeout) {
  if (exit_) return *exit_;
  SamplerExit result;
  if (child_.pid() <= 0) {
    exit_ = result;
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<core::ExitStatus> status;
  for (;;) {
    status = child_.try_wait();
    if (status) break;
    // Keep its pipes drained so a child blocked on a full pipe can finish; the caller still gets
    // what was read from its next pump().
    std::vector<SamplerMessage> read;
    pump(read);
    for (auto& message : read) pending_.push_back(std::move(message));
    if (std::chrono::steady_clock::now() >= deadline) {
      child_.signal(SIGKILL);
      status = child_.wait();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::vector<SamplerMessage> read;
  pump(read);
  for (auto& message : read) pending_.push_back(std::move(message));
  if (status->exited()) {
    result.exited = status->code() >= 0;  // -1: it was reaped elsewhere, nothing known
    result.exit_code = status->code();
  } else {
    result.signal = status->signal();
  }
  result.said_bye = said_bye_;
  result.stderr_tail = err_tail_;
  exit_ = result;
  return result;
}

}  // namespace diescope::collect
