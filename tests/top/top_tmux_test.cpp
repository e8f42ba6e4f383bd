// `diescope top` as a person sees it: the real binary in a 120x40 tmux window on a replayed H200
// recording, the screen read back with capture-pane, and the keys sent with send-keys
// (docs/top.md#tests). Also the plain-text frame when stdout is not a terminal. Skips where tmux is
// missing (scripts/setup.sh installs it).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "common/run_binary.hpp"
#include "diescope/top/screen.hpp"
#include "top/golden_match.hpp"

namespace diescope::test {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string capture(const std::string& command) {
  return run_shell(command, false).out;
}

bool have_tmux() {
  return std::system("command -v tmux >/dev/null 2>&1") == 0;
}

// One tmux server of its own (-L), one session running `script` in sh; killed at the end.
class TmuxSession {
 public:
  explicit TmuxSession(const std::string& script, int width = 120, int height = 40)
      : socket_("diescope-top-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++)) {
    // The shell stays a while after the script, so that the pane (and what it shows) stays:
    // a pane that dies loses its screen (tmux 3.3's remain-on-exit shows only what came last).
    tmux("new-session -d -s top -x " + std::to_string(width) + " -y " + std::to_string(height) + " " +
         shell_quote("sh -c " + shell_quote(script + "; sleep 60")));
  }
  ~TmuxSession() { tmux("kill-server"); }
  TmuxSession(const TmuxSession&) = delete;
  TmuxSession& operator=(const TmuxSession&) = delete;

  std::string tmux(const std::string& args) const {
    return capture("tmux -L " + socket_ + " " + args + " 2>&1");
  }
  std::string screen() const { return tmux("capture-pane -p -t top"); }
  void keys(const std::string& keys) const { tmux("send-keys -t top " + keys); }
  // Waits (up to 15 s) until the screen satisfies `ok`; returns the last screen.
  std::string wait_for(const std::function<bool(const std::string&)>& ok) const {
    std::string s;
    for (int i = 0; i < 150; ++i) {
      s = screen();
      if (ok(s)) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return s;
  }
  std::string wait_for_text(const std::string& text) const {
    return wait_for([&](const std::string& s) { return s.find(text) != std::string::npos; });
  }

 private:
  static inline int counter_ = 0;
  std::string socket_;
};

std::string recording(const std::string& name) {
  return (fs::path(DIESCOPE_SOURCE_DIR) / "data/recordings/h200" / name).string();
}

// The shell around top: the terminal's settings before and after, and top's exit code.
std::string wrapped(const std::string& top_args, const std::string& tag) {
  const std::string dir = fs::temp_directory_path().string() + "/" + tag;
  // The shell outlives a Ctrl-C (its trap), so that it can say how top ended.
  return "trap : INT; mkdir -p " + dir + "; stty -g > " + dir + "/before; echo BEFORE-TOP; echo $$ > " + dir +
         "/shell; " + shell_quote(DIESCOPE_BINARY) + " top " + top_args + "; echo EXIT=$?; stty -g > " + dir +
         "/after; if cmp -s " + dir + "/before " + dir + "/after; then echo TERMINAL-RESTORED; fi";
}

TEST(TopTmux, ReplayedScreenKeysAndQuit) {
  if (!have_tmux()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  const std::string tag = "diescope-top-keys-" + std::to_string(::getpid());
  TmuxSession tmux(wrapped("--replay " + recording("ffma66.dsrec") + " --replay-loop", tag));
  // A person sees the header, GPU 0 with PM sampling recorded, both figures, the limiting unit (the
  // kernel loads FP32 on half the SMs) and the keys, on the last row.
  std::string s = tmux.wait_for_text("limiting unit: FP32");
  const std::vector<std::string> golden = split_lines(
      read_text((fs::path(DIESCOPE_SOURCE_DIR) / "tests/top/golden/tmux-ffma66-120x40.txt").string()));
  std::vector<std::string> lines = split_lines(s);
  EXPECT_EQ(golden_mismatch(lines, golden), "") << s;

  // p pauses: the header says so and the screen stays as it is.
  tmux.keys("p");
  s = tmux.wait_for_text("PAUSED");
  ASSERT_NE(s.find("PAUSED"), std::string::npos) << s;
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(tmux.screen(), s) << "the screen moved while paused";
  tmux.keys("p");
  s = tmux.wait_for([](const std::string& t) { return t.find("PAUSED") == std::string::npos; });
  EXPECT_EQ(s.find("PAUSED"), std::string::npos) << s;

  // s moves to the next sort key; the key line names the one after it.
  tmux.keys("s");
  s = tmux.wait_for_text("sort: DIE-Util");
  EXPECT_NE(s.find("sort: DIE-Util"), std::string::npos) << s;
  EXPECT_NE(s.find("s sort (GPU-Util next)"), std::string::npos) << s;
  // A key that does nothing says so.
  tmux.keys("x");
  s = tmux.wait_for_text("key 'x' does nothing");
  EXPECT_NE(s.find("key 'x' does nothing"), std::string::npos) << s;

  // q quits: the alternate screen is gone (the shell's line before top is back), exit 0, and the
  // terminal's settings are what they were.
  tmux.keys("q");
  s = tmux.wait_for_text("TERMINAL-RESTORED");
  EXPECT_NE(s.find("BEFORE-TOP"), std::string::npos) << s;
  EXPECT_NE(s.find("EXIT=0"), std::string::npos) << s;
  EXPECT_NE(s.find("TERMINAL-RESTORED"), std::string::npos) << s;
  EXPECT_EQ(s.find("GPU-Util"), std::string::npos) << s;
}

TEST(TopTmux, CtrlCAndSigtermRestoreTheTerminal) {
  if (!have_tmux()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  {
    TmuxSession tmux(wrapped("--replay " + recording("copy.dsrec") + " --replay-loop", "diescope-top-int"));
    tmux.wait_for_text("limiting unit: DRAM");
    tmux.keys("C-c");
    const std::string s = tmux.wait_for_text("EXIT=");
    EXPECT_NE(s.find("EXIT=130"), std::string::npos) << s;  // 128 + SIGINT
    EXPECT_NE(tmux.wait_for_text("TERMINAL-RESTORED").find("TERMINAL-RESTORED"), std::string::npos);
  }
  {
    const std::string tag = "diescope-top-term-" + std::to_string(::getpid());
    const std::string pid_file = fs::temp_directory_path().string() + "/" + tag + ".pid";
    // exec: the pid written is top's own.
    TmuxSession tmux("stty -g > /tmp/" + tag + ".before; sh -c 'echo $$ > " + pid_file + "; exec " +
                     DIESCOPE_BINARY + " top --replay " + recording("copy.dsrec") +
                     " --replay-loop'; echo EXIT=$?; stty -g > /tmp/" + tag + ".after; cmp -s /tmp/" + tag +
                     ".before /tmp/" + tag + ".after && echo TERMINAL-RESTORED");
    tmux.wait_for_text("limiting unit: DRAM");
    ASSERT_EQ(std::system(("kill -TERM $(cat " + pid_file + ")").c_str()), 0);
    const std::string s = tmux.wait_for_text("TERMINAL-RESTORED");
    EXPECT_NE(s.find("EXIT=143"), std::string::npos) << s;  // 128 + SIGTERM
    EXPECT_NE(s.find("TERMINAL-RESTORED"), std::string::npos) << s;
  }
}

// Count of `text` in `s`.
int count_of(const std::string& s, const std::string& text) {
  int n = 0;
  for (auto at = s.find(text); at != std::string::npos; at = s.find(text, at + 1)) ++n;
  return n;
}

TEST(TopTmux, AfterAReplayEndsItSaysSoAndKeepsTheLastFigures) {
  // docs/top.md#sources: copy.dsrec lasts 3.2 s, gemm-final-table.dsrec 6.8 s. The shorter one is
  // over first and keeps its last figures; once both are, the header says so and the clock stops.
  if (!have_tmux()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  TmuxSession tmux(
      wrapped("--replay " + recording("copy.dsrec") + " --replay " + recording("gemm-final-table.dsrec"),
              "diescope-top-over"));
  const std::string over = "replay over: last figures";
  std::string s = tmux.wait_for([&](const std::string& t) { return count_of(t, over) == 1; });
  ASSERT_EQ(count_of(s, over), 1) << s;
  EXPECT_EQ(s.find("· replay over"), s.find("· replay over: last")) << "the header says over too soon:\n"
                                                                    << s;
  EXPECT_NE(s.find("GPU 0 · NVIDIA H200 (GH100) · chip figures: PM sampling every 10 ms, recorded · " + over),
            std::string::npos)
      << s;
  s = tmux.wait_for([&](const std::string& t) { return count_of(t, over) == 2; });
  ASSERT_EQ(count_of(s, over), 2) << s;
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  s = tmux.screen();
  const std::vector<std::string> lines = split_lines(s);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("· replay over"), std::string::npos) << s;
  EXPECT_EQ(s.find("waiting for the first chip samples"), std::string::npos) << s;
  EXPECT_EQ(s.find("starting"), std::string::npos) << s;
  // The figures stay those of each recording's last second: gemm's GPU still reads its tensor work.
  EXPECT_NE(s.find("gap         4.6 points · limiting unit: Tensor"), std::string::npos) << s;
  // Nothing moves any more, the clock included.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(tmux.screen(), s);
  tmux.keys("q");
  EXPECT_NE(tmux.wait_for_text("EXIT=0").find("EXIT=0"), std::string::npos);
}

TEST(TopTmux, NarrowWindowRedrawsWithinItsWidth) {
  if (!have_tmux()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  TmuxSession tmux(
      wrapped("--replay " + recording("ffma66.dsrec") + " --replay-loop", "diescope-top-narrow"));
  tmux.wait_for_text("limiting unit: FP32");
  tmux.tmux("resize-window -t top -x 50 -y 20");
  // Redrawn for 50 columns: the title is cut to 49 columns and an ellipsis, the figures stay.
  const std::string title = "GPU 0 · NVIDIA H200 (GH100) · chip figures: PM sa…";
  const std::string s = tmux.wait_for_text(title);
  EXPECT_NE(s.find(title), std::string::npos) << s;
  for (const std::string& line : split_lines(s)) EXPECT_LE(top::display_width(line), 50) << line;
  EXPECT_NE(s.find("  GPU-Util "), std::string::npos) << s;
  EXPECT_NE(s.find("  DIE-Util "), std::string::npos) << s;
  tmux.keys("q");
  EXPECT_NE(tmux.wait_for_text("EXIT=0").find("EXIT=0"), std::string::npos);
}

TEST(TopPlainText, OneFrameWhenStdoutIsNotATerminal) {
  for (const bool once : {true, false}) {
    std::vector<std::string> args = {"top", "--replay", recording("copy.dsrec"), "--replay-speed", "4"};
    if (once) args.emplace_back("--once");
    const Ran ran = run_diescope(args);
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_EQ(ran.out.find('\x1b'), std::string::npos) << "no escape codes in plain text";
    const std::vector<std::string> lines = split_lines(ran.out);
    ASSERT_GE(lines.size(), 8u) << ran.out;
    EXPECT_EQ(
        lines[0].rfind("diescope top · replay copy.dsrec at 4x · 1 GPU · refresh 1000 ms · sort: index", 0),
        0u)
        << ran.out;
    EXPECT_NE(ran.out.find("limiting unit: DRAM"), std::string::npos) << ran.out;
    EXPECT_EQ(ran.out.find("q quit"), std::string::npos) << "no key line: nothing reads keys";
  }
}

TEST(TopPlainText, OneFrameOfAReplayShowsItsSteadyWindowOrTheTimeAsked) {
  // docs/top.md#options. ResNet-50's first two seconds are start-up (GPU-Util 0, no limiting unit);
  // its steady window is training. --at steady (the default) shows the window's end.
  Ran ran = run_diescope({"top", "--once", "--replay", recording("resnet50.dsrec")});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("limiting unit: DRAM"), std::string::npos) << ran.out;
  const Ran steady =
      run_diescope({"top", "--once", "--replay", recording("resnet50.dsrec"), "--at", "steady"});
  EXPECT_EQ(steady.out, ran.out);
  // --at 2: the first two seconds, idle; the header's time is the recording's start plus 2 s.
  ran = run_diescope({"top", "--once", "--replay", recording("resnet50.dsrec"), "--at", "2"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out.find("limiting unit: DRAM"), std::string::npos) << ran.out;
  // 1796235741514470204 ns + 2 s = 1796235743.51 s: 18:22:23 UTC.
  EXPECT_NE(split_lines(ran.out)[0].find("18:22:23 UTC"), std::string::npos) << ran.out;
  // A time outside the recording, and --at without --once, are refused with the fix.
  ran = run_diescope({"top", "--once", "--replay", recording("resnet50.dsrec"), "--at", "99"});
  EXPECT_EQ(ran.exit_code, 2);
  EXPECT_NE(ran.err.find("--at 99 is outside resnet50.dsrec, which lasts 33.50 s"), std::string::npos)
      << ran.err;
  ran = run_diescope({"top", "--replay", recording("resnet50.dsrec"), "--at", "2"});
  EXPECT_EQ(ran.exit_code, 2);
  EXPECT_NE(ran.err.find("add --once"), std::string::npos) << ran.err;
}

TEST(TopCli, RefusesWhatItCannotDo) {
  Ran ran = run_diescope({"top", "--replay", recording("copy.dsrec"), "--gpus", "0"});
  EXPECT_EQ(ran.exit_code, 2);
  EXPECT_NE(ran.err.find("--gpus"), std::string::npos) << ran.err;
  ran = run_diescope({"top", "--replay", recording("copy.dsrec"), "--sort", "gapp"});
  EXPECT_EQ(ran.exit_code, 2);
  EXPECT_NE(ran.err.find("did you mean 'gap'"), std::string::npos) << ran.err;
  ran = run_diescope({"top", "--replay", recording("copy.dsrec"), "--drain-ms", "5", "--once"});
  EXPECT_EQ(ran.exit_code, 2);
  EXPECT_NE(ran.err.find("100 to 60000"), std::string::npos) << ran.err;
  ran = run_diescope({"top", "--replay", "/nonexistent.dsrec"});
  EXPECT_EQ(ran.exit_code, 3) << ran.err;
  ran = run_diescope({"top", "--replay-loop"});
  EXPECT_EQ(ran.exit_code, 2);
}

}  // namespace
}  // namespace diescope::test
