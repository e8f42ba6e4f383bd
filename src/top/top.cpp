#include "diescope/top/top.hpp"

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "diescope/collect/live_driver.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/top/model.hpp"

namespace diescope::top {

namespace {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal: nothing left to show it on
    done += static_cast<std::size_t>(n);
  }
}

// The terminal in top's mode while it lives: the alternate screen, no cursor, keys unbuffered and
// not echoed (Ctrl-C still raises SIGINT). The destructor puts everything back, so every way out of
// run_top (return, exception) restores the terminal; signals end the loop, they do not exit.
class TerminalMode {
 public:
  TerminalMode(int in, int out) : in_(in), out_(out) {
    if (::tcgetattr(in_, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      have_saved_ = ::tcsetattr(in_, TCSANOW, &raw) == 0;
    }
    write_all(out_, "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
  }
  ~TerminalMode() {
    write_all(out_, "\x1b[0m\x1b[?25h\x1b[?1049l");
    if (have_saved_) ::tcsetattr(in_, TCSANOW, &saved_);
  }
  TerminalMode(const TerminalMode&) = delete;
  TerminalMode& operator=(const TerminalMode&) = delete;

 private:
  int in_;
  int out_;
  termios saved_{};
  bool have_saved_ = false;
};

struct Size {
  int width = 120;
  int height = 40;
};

Size terminal_size(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) return {ws.ws_col, ws.ws_row};
  return {};
}

// The lines drawn from the top-left corner, each line's rest cleared, the header in reverse video.
std::string screen_text(const std::vector<std::string>& lines) {
  std::string out = "\x1b[H";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == 0) out += "\x1b[7m";
    out += lines[i];
    if (i == 0) out += "\x1b[0m";
    out += "\x1b[K";
    if (i + 1 < lines.size()) out += "\r\n";
  }
  return out + "\x1b[J";
}

}  // namespace

std::string time_of_day(recording::TimeNs ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / recording::kNsPerSecond);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:02}:{:02}:{:02} UTC", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int run_top(ViewFeed& source, const TopOptions& options) {
  if (!(options.drain_ms >= 100) || !(options.drain_ms <= 60'000))
    throw core::UsageError(fmt::format("--drain-ms {:g} is out of range for top", options.drain_ms),
                           "give a refresh from 100 to 60000 ms (default 1000)");
  Model model(source, options.drain_ms);
  std::vector<GpuUpdate> updates(source.gpu_count());
  const bool interactive = !options.once && ::isatty(options.stdout_fd) && ::isatty(options.stdin_fd);
  const auto drain_ns = static_cast<recording::TimeNs>(options.drain_ms * 1e6);

  Frame frame;
  frame.source = source.description();
  frame.drain_ms = options.drain_ms;
  frame.sort = options.sort;
  const auto poll_source = [&](recording::TimeNs now) {
    for (auto& u : updates) u = GpuUpdate{};
    source.poll(now, updates);
    for (std::size_t i = 0; i < updates.size(); ++i) model.absorb(i, updates[i], now);
  };
  const auto build = [&](recording::TimeNs now) {
    frame.gpus = model.gpus(now);
    sort_gpus(frame.gpus, frame.sort);
    frame.time_of_day = time_of_day(model.shown_time(now));
    frame.ended = source.ended(now);
  };

  // top is the live driver's reader (docs/live-collection.md#the-driver): it waits, until its next
  // drain at the latest, for a key, a signal, a resize or the sampler's output.
  collect::LiveDriver driver;
  const auto wait_until = [&](recording::TimeNs wait_ns, bool keys) {
    collect::DriverWait wait;
    wait.due_mono = core::monotonic_ns() + wait_ns;
    if (options.stop_fd >= 0) wait.own_fds.push_back(options.stop_fd);
    if (options.resize_fd >= 0) wait.own_fds.push_back(options.resize_fd);
    if (keys) wait.own_fds.push_back(options.stdin_fd);
    wait.feed_fds = source.wait_fds();
    return wait;
  };
  const auto check = [](const collect::DriverWake& wake) {
    if (wake.error != 0) throw core::Error("poll failed", "please report this", core::kExitInternal);
  };
  // The sampler child wrote: read it now (its pipe must not fill), draw at the next drain.
  const auto source_readable = [&](const collect::DriverWake& wake) {
    for (int fd : source.wait_fds())
      if (wake.readable(fd)) return true;
    return false;
  };

  const auto print_frame = [&] {
    std::string text;
    for (const std::string& line : layout(frame, 120, 1000, false)) {
      std::string l = line;
      while (!l.empty() && l.back() == ' ') l.pop_back();
      text += l + "\n";
    }
    write_all(options.stdout_fd, text);
  };
  if (!interactive && options.at_ns && !source.live()) {
    // A replay's frame at a chosen moment (docs/top.md#options): the recordings read up to it a
    // drain at a time, as the screen would have, without waiting for their pace.
    recording::TimeNs now = source.now_ns();
    while (now < *options.at_ns) {
      now = std::min(now + drain_ns, *options.at_ns);
      poll_source(now);
    }
    build(now);
    print_frame();
    source.shutdown();
    return 0;
  }
  if (!interactive) {
    // One frame, plain text, after a drain or two of readings (docs/top.md#the-screen).
    const recording::TimeNs start = source.now_ns();
    const auto until = start + static_cast<recording::TimeNs>(options.once_after_ms * 1e6);
    recording::TimeNs now = start;
    recording::TimeNs next_poll = start;
    const std::int64_t mono_start = core::monotonic_ns();
    bool stopped = false;
    collect::DriverReader reader;
    reader.policy = [&] {
      return wait_until(std::clamp<recording::TimeNs>(next_poll - now, 0, 100 * recording::kNsPerMs), false);
    };
    reader.sink = [&](const collect::DriverWake& wake) {
      check(wake);
      if (options.stop_fd >= 0 && wake.readable(options.stop_fd)) {
        stopped = true;
        return false;
      }
      now = source.now_ns();
      if (now >= next_poll || source_readable(wake)) {
        poll_source(now);
        if (now >= next_poll) next_poll = now + drain_ns;
      }
      // A replay faster than real time still stops; a stalled source cannot hold the frame forever.
      if (core::monotonic_ns() - mono_start >
          4 * static_cast<std::int64_t>(options.once_after_ms * 1e6) + 10 * recording::kNsPerSecond)
        return false;
      return now < until && !source.ended(now);
    };
    if (now < until && !source.ended(now)) driver.drive(reader);
    if (stopped) {
      source.shutdown();
      return options.drain_stop ? options.drain_stop() : 1;
    }
    poll_source(now);
    build(now);
    print_frame();
    source.shutdown();
    return 0;
  }

  TerminalMode mode(options.stdin_fd, options.stdout_fd);
  Size size = terminal_size(options.stdout_fd);
  recording::TimeNs now = source.now_ns();
  poll_source(now);
  recording::TimeNs next_poll = now + drain_ns;
  bool dirty = true;
  bool quit = false;
  int exit_code = 0;
  const auto draw = [&] {
    if (dirty && !frame.paused) {
      build(now);
      write_all(options.stdout_fd, screen_text(layout(frame, size.width, size.height, true)));
      dirty = false;
    } else if (dirty) {  // paused: the figures stay, the header and key line change
      write_all(options.stdout_fd, screen_text(layout(frame, size.width, size.height, true)));
      dirty = false;
    }
  };
  collect::DriverReader reader;
  reader.policy = [&] {
    return wait_until(std::clamp<recording::TimeNs>(next_poll - source.now_ns(), 0, drain_ns), true);
  };
  reader.sink = [&](const collect::DriverWake& wake) {
    check(wake);
    if (options.stop_fd >= 0 && wake.readable(options.stop_fd)) {
      exit_code = options.drain_stop ? options.drain_stop() : 1;
      return false;
    }
    if (options.resize_fd >= 0 && wake.readable(options.resize_fd)) {
      if (options.drain_resize) options.drain_resize();
      size = terminal_size(options.stdout_fd);
      dirty = true;
    }
    if (wake.readable(options.stdin_fd)) {
      char keys[64];
      const ssize_t n = ::read(options.stdin_fd, keys, sizeof keys);
      if (n == 0) return false;  // the terminal closed
      for (ssize_t i = 0; i < n; ++i) {
        frame.message.clear();
        switch (keys[i]) {
          case 'q':
          case 'Q':
            quit = true;
            break;
          case 'p':
          case 'P':
          case ' ':
            frame.paused = !frame.paused;
            break;
          case 's':
          case 'S':
            frame.sort = next_sort_key(frame.sort);
            sort_gpus(frame.gpus, frame.sort);
            break;
          case '\x1b':  // the rest of an escape sequence (arrow keys): ignored
            i = n;
            break;
          default:
            frame.message =
                fmt::format("key '{}' does nothing",
                            keys[i] >= 0x20 && keys[i] < 0x7f ? std::string(1, keys[i]) : std::string("?"));
            break;
        }
      }
      dirty = true;
    }
    const bool child_wrote = source_readable(wake);
    now = source.now_ns();
    if (now >= next_poll) {
      // Readings keep coming while paused, so that resuming shows the present.
      poll_source(now);
      next_poll = now + drain_ns;
      dirty = true;
    } else if (child_wrote) {
      poll_source(now);
    }
    if (quit) return false;
    draw();
    return true;
  };
  draw();
  driver.drive(reader);
  source.shutdown();
  return exit_code;
}

}  // namespace diescope::top
