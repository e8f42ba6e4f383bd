#include "diescope/core/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace diescope::core {

namespace {

// The one table signal handlers read: for each signal number, the write end of the pipe that
// receives it, plus one (so the zero-initialised table means "no pipe"). Lock-free atomics, so the
// handler may read it.
std::atomic<int> g_write_end_plus_one[NSIG];

constexpr std::size_t kRecordBytes = 2;  // the signal number, then 1 when from the kernel

void on_signal(int number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  const int fd = g_write_end_plus_one[number].load(std::memory_order_relaxed) - 1;
  if (fd >= 0) {
    const unsigned char record[kRecordBytes] = {
        static_cast<unsigned char>(number), static_cast<unsigned char>(info && info->si_code == SI_KERNEL)};
    // A full pipe drops the record: a loop that far behind has the earlier ones still to read.
    [[maybe_unused]] const ssize_t written = ::write(fd, record, sizeof record);
  }
  errno = saved_errno;
}

}  // namespace

std::string signal_name(int number) {
  const char* abbrev = ::sigabbrev_np(number);
  return abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(number);
}

SignalSelfPipe::SignalSelfPipe(std::initializer_list<int> caught, std::initializer_list<int> ignored)
    : pipe_(make_pipe("signals")) {
  set_nonblocking(pipe_.read.get());
  set_nonblocking(pipe_.write.get());
  struct sigaction catch_action {};
  catch_action.sa_sigaction = on_signal;
  catch_action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&catch_action.sa_mask);
  for (int number : caught) {
    // The table first, so a signal arriving once the handler is in place finds this pipe.
    previous_targets_.emplace_back(number, g_write_end_plus_one[number].exchange(pipe_.write.get() + 1));
    struct sigaction previous {};
    ::sigaction(number, &catch_action, &previous);
    previous_actions_.emplace_back(number, previous);
  }
  struct sigaction ignore_action {};
  ignore_action.sa_handler = SIG_IGN;
  sigemptyset(&ignore_action.sa_mask);
  for (int number : ignored) {
    struct sigaction previous {};
    ::sigaction(number, &ignore_action, &previous);
    previous_actions_.emplace_back(number, previous);
  }
}

SignalSelfPipe::~SignalSelfPipe() {
  // Dispositions first, then the table, so no handler writes to this pipe once it is closed.
  for (std::size_t i = previous_actions_.size(); i-- > 0;)
    ::sigaction(previous_actions_[i].first, &previous_actions_[i].second, nullptr);
  for (std::size_t i = previous_targets_.size(); i-- > 0;)
    g_write_end_plus_one[previous_targets_[i].first].store(previous_targets_[i].second);
}

std::optional<CaughtSignal> SignalSelfPipe::next() {
  unsigned char record[kRecordBytes];
  for (;;) {
    const ssize_t got = ::read(pipe_.read.get(), record, sizeof record);
    if (got == static_cast<ssize_t>(sizeof record)) return CaughtSignal{record[0], record[1] != 0};
    if (got < 0 && errno == EINTR) continue;
    return std::nullopt;  // EAGAIN: nothing waits (a record is written whole, so never half of one)
  }
}

}  // namespace diescope::core
