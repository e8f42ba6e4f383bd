// Every failure a user can cause on the command line prints the project's own message: the cause
// (with the closest valid name when a name was mistyped), a fix, and the exit code of its kind
// (docs/report.md, docs/agent.md; CONTRIBUTING.md, "Command-line options"). Each such failure is one
// test here, run through the real binary.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "common/run_binary.hpp"

namespace diescope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = DIESCOPE_SOURCE_DIR;
const fs::path kRecording = fs::path(kSource) / "data/recordings/h200-probe-shape.dsrec";

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("diescope-usage-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The message every refusal prints: two lines on stderr (after the agent's own log lines), the cause
// and the fix, nothing on stdout
// unless `stdout_allowed` (report's headline comes before a folder error).
void expect_message(const Ran& ran, int code, const std::string& cause_has, bool stdout_allowed = false) {
  EXPECT_EQ(ran.exit_code, code) << ran.err;
  std::vector<std::string> lines;
  std::istringstream in(ran.err);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // The agent logs what it starts before it fails; those lines are its own, and the message ends it.
  while (lines.size() > 2 && lines.front().rfind("diescope agent: ", 0) == 0) lines.erase(lines.begin());
  ASSERT_EQ(lines.size(), 2u) << ran.err;
  EXPECT_EQ(lines[0].rfind("diescope: error: ", 0), 0u) << ran.err;
  EXPECT_NE(lines[0].find(cause_has), std::string::npos) << "wanted '" << cause_has << "' in: " << ran.err;
  EXPECT_EQ(lines[1].rfind("  fix: ", 0), 0u) << ran.err;
  EXPECT_GT(lines[1].size(), 8u) << ran.err;
  // No raw parser text, and no 300-digit bound.
  for (const char* raw : {"Could not convert", "is not an allowed value", "A subcommand is required",
                          "not expected", "Run with --help"})
    EXPECT_EQ(ran.err.find(raw), std::string::npos) << ran.err;
  EXPECT_FALSE(std::regex_search(ran.err, std::regex("[0-9]{20}"))) << ran.err;
  if (!stdout_allowed) {
    EXPECT_EQ(ran.out, "") << ran.out;
  }
}

// ---- 1. Command-line parsing ----

TEST(Parsing, ATopLevelTypoNamesTheClosestCommand) {
  expect_message(run_diescope({"reprot", "x"}), 2, "unknown command 'reprot'; did you mean 'report'?");
  expect_message(run_diescope({"calibrat"}), 2, "did you mean 'calibrate'?");
  // Nothing close: the commands are listed in the fix instead.
  const Ran far = run_diescope({"frobnicate"});
  expect_message(far, 2, "unknown command 'frobnicate'");
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos);
  EXPECT_NE(far.err.find("run, bench, report"), std::string::npos) << far.err;
}

TEST(Parsing, ATopLevelOptionTypoNamesTheClosestOption) {
  expect_message(run_diescope({"--versio"}), 2, "unknown option '--versio'; did you mean '--version'?");
  expect_message(run_diescope({}), 2, "name a command");
  EXPECT_EQ(run_diescope({"--version"}).exit_code, 0);
}

TEST(Parsing, ACommandOptionTypoNamesTheClosestOption) {
  expect_message(run_diescope({"report", kRecording.string(), "--outptu", "x"}), 2,
                 "report: unknown option '--outptu'; did you mean '--output'?");
  expect_message(run_diescope({"run", "--interval-m", "10", "--", "true"}), 2,
                 "unknown option '--interval-m'; did you mean '--interval-ms'?");
  expect_message(run_diescope({"report", kRecording.string(), "--format", "htm"}), 2,
                 "'htm' is not a format; did you mean 'html'?");
  expect_message(run_diescope({"report"}), 2, "report: PATH is missing");
  expect_message(run_diescope({"report", kRecording.string(), "--output"}), 2, "--output needs a value");
}

TEST(Parsing, BadNumbersAndGpuIndexesAreNamedWithTheirValue) {
  expect_message(run_diescope({"run", "--gpus", "abc", "--", "true"}), 2, "--gpus 'abc' is not a GPU index");
  expect_message(run_diescope({"run", "--gpus", "0,x", "--", "true"}), 2, "--gpus 'x' is not a GPU index");
  expect_message(run_diescope({"units", "--gpus", "-1", "--nvml-probe"}), 2,
                 "--gpus '-1' is not a GPU index");
  // The old spelling of the case, through its hidden alias: the same message, named as given.
  expect_message(run_diescope({"units", "--gpu", "-1", "--nvml-probe"}), 2, "--gpu '-1' is not a GPU index");
  expect_message(run_diescope({"run", "--interval-ms", "ten", "--", "true"}), 2,
                 "--interval-ms 'ten' is not a number");
  expect_message(run_diescope({"bench", "--rounds", "2.5", "--", "true"}), 2,
                 "--rounds '2.5' is not a whole number");
  expect_message(run_diescope({"calibrate", "--gpus", "0,1"}), 2,
                 "--gpus names 2 GPUs; this command takes one");
  expect_message(run_diescope({"workload", "ffma", "--gpus", "x"}), 2, "'x' is not a GPU index");
}

// run --duty ON/PERIOD (docs/method.md#duty-cycles-in-run): two numbers of ms, each part of the period at
// least run's 100 ms loop, refused before any counter is touched.
TEST(Parsing, ADutyCycleRunCannotHonourIsRefused) {
  expect_message(run_diescope({"run", "--duty", "2000", "--", "true"}), 2, "--duty '2000' is not ON/PERIOD");
  expect_message(run_diescope({"run", "--duty", "2s/10s", "--", "true"}), 2,
                 "--duty's ON '2s' is not a number");
  expect_message(run_diescope({"run", "--duty", "50/1000", "--", "true"}), 2,
                 "the counters' on-time 50 ms is shorter than run's 100 ms loop");
  // 1050 - 1000 = 50 ms off, under one 100 ms loop; 1000/1000 leaves them off for 0 ms.
  expect_message(run_diescope({"run", "--duty", "1000/1050", "--", "true"}), 2,
                 "the period leaves the counters off for 50 ms");
  expect_message(run_diescope({"run", "--duty", "1000/1000", "--", "true"}), 2,
                 "the period leaves the counters off for 0 ms");
}

// docs/attribution.md#user-labels and #diescope-jobs: each refusal before anything is measured.
TEST(Parsing, AttributionRefusalsNameTheCause) {
  expect_message(run_diescope({"run", "--label", "no equals", "--", "true"}), 2,
                 "label \"no equals\" has no '='");
  expect_message(run_diescope({"run", "--label", "pod=mine", "--", "true"}), 2,
                 "label key \"pod\" is one diescope sets itself");
  const std::string rec = std::string(DIESCOPE_SOURCE_DIR) + "/data/recordings/h200/ffma66.dsrec";
  expect_message(
      run_diescope({"agent", "--replay", rec, "--labels-file", "labels.txt", "--no-db", "--no-listen"}), 2,
      "--labels-file is for live monitoring");
  expect_message(run_diescope({"jobs", "--db", "/nonexistent/agent.db"}), 3, "no such record store");
  expect_message(run_diescope({"jobs", "--since", "yesterday", "--db", "/nonexistent/agent.db"}), 2,
                 "--since \"yesterday\" is neither a duration nor a UTC time");
  expect_message(run_diescope({"jobs", "--format", "xml"}), 2, "--format xml is not a jobs format");
}

// ---- 2. One name per concept ----

TEST(Names, OldSpellingsStillWorkAsHiddenAliases) {
  const fs::path dir = scratch("aliases");
  for (const char* spelling : {"--output", "--out", "--report"}) {
    const fs::path out = dir / spelling;
    const Ran ran = run_diescope({"report", kRecording.string(), "--format", "json", spelling, out.string()});
    EXPECT_EQ(ran.exit_code, 0) << spelling << ": " << ran.err;
    EXPECT_TRUE(fs::is_regular_file(out / "report.json")) << spelling;
  }
  expect_message(run_diescope({"report", kRecording.string(), "--output", "a", "--out", "b"}), 2,
                 "are two spellings of one option");
  // --gpu and --device name calibrate's GPU as --gpus does: a bad value is refused before the driver.
  expect_message(run_diescope({"calibrate", "--device", "x"}), 2, "--device 'x' is not a GPU index");
  expect_message(run_diescope({"calibrate", "--gpu", "1,2"}), 2, "--gpu names 2 GPUs");
}

TEST(Names, AgentHelpSaysTheListenDefaultIsThisHostOnly) {
  const Ran ran = run_diescope({"agent", "--help"});
  EXPECT_NE(ran.out.find(":PORT alone binds 127.0.0.1 too: this host only"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("0.0.0.0:9402 serves every"), std::string::npos) << ran.out;
}

// ---- 3. report's output folder ----

TEST(Report, TheDefaultFolderIsInTheCurrentFolderNotBesideTheRecording) {
  const fs::path dir = scratch("default-folder");
  const fs::path data = dir / "data", cwd = dir / "cwd";
  fs::create_directories(data);
  fs::create_directories(cwd);
  fs::copy_file(kRecording, data / "run.dsrec");
  const Ran ran = run_diescope({"report", (data / "run.dsrec").string()}, cwd);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_TRUE(fs::is_regular_file(cwd / "run.dsrec.report" / "report.json"));
  EXPECT_TRUE(fs::is_regular_file(cwd / "run.dsrec.report" / "samples.csv"));
  EXPECT_FALSE(fs::exists(data / "run.dsrec.report")) << "report wrote beside the recording";
  EXPECT_NE(ran.out.find("wrote run.dsrec.report/report.json"), std::string::npos) << ran.out;
}

TEST(Report, AFolderThatCannotBeWrittenIsAnErrorAfterTheHeadline) {
  const fs::path dir = scratch("unwritable");
  write_text(dir / "a-file", "not a folder\n");
  // A folder under a file cannot be made, whoever runs the test (root included).
  const Ran ran =
      run_diescope({"report", kRecording.string(), "--output", (dir / "a-file" / "out").string()});
  expect_message(ran, 3, "cannot write the report into", true);
  EXPECT_EQ(ran.out.rfind("diescope: ", 0), 0u) << "no headline before the error: " << ran.out;
  EXPECT_NE(ran.out.find("DIE-Util"), std::string::npos) << ran.out;
  if (::geteuid() != 0) {
    // A folder without write permission, for users other than root.
    fs::create_directories(dir / "read-only");
    ::chmod((dir / "read-only").c_str(), 0555);
    const Ran ro = run_diescope({"report", kRecording.string(), "--output", (dir / "read-only").string()});
    expect_message(ro, 3, "cannot write the report into", true);
    EXPECT_NE(ro.out.find("DIE-Util"), std::string::npos) << ro.out;
    ::chmod((dir / "read-only").c_str(), 0755);
  }
}

TEST(Report, StandardInputAndOutputAreRefusedNotMisread) {
  const fs::path cwd = scratch("dash");
  expect_message(run_diescope({"report", "-"}, cwd), 2, "not from standard input");
  expect_message(run_diescope({"report", kRecording.string(), "--output", "-"}, cwd), 2,
                 "--output - would make a folder named '-'");
  EXPECT_FALSE(fs::exists(cwd / "-"));
}

// ---- 4. Impossible values in a recording ----

// The bundled recording's text with one chip sample (the `nth`, from 1) changed by `edit`, or
// left out when `edit` returns an empty line.
std::string with_chip_sample(int nth, const std::function<std::string(std::vector<std::string>)>& edit) {
  std::istringstream in(read_all(kRecording));
  std::string out;
  int seen = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("chip ", 0) == 0 && ++seen == nth) {
      std::vector<std::string> fields;
      std::istringstream words(line);
      for (std::string w; words >> w;) fields.push_back(w);
      line = edit(fields);
      if (line.empty()) continue;
    }
    out += line + "\n";
  }
  return out;
}

std::string joined(const std::vector<std::string>& fields) {
  std::string line;
  for (const auto& f : fields) line += (line.empty() ? "" : " ") + f;
  return line;
}

json report_of(const fs::path& recording, const fs::path& out, Ran* ran = nullptr) {
  const Ran r = run_diescope({"report", recording.string(), "--output", out.string()});
  if (ran) *ran = r;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out / "report.json");
  return json::parse(in);
}

TEST(ImpossibleValues, ASampleWithAnImpossibleValueIsLeftOutLikeAnAbsentOne) {
  const fs::path dir = scratch("impossible");
  // The 100th chip sample lies in the run's busy part; the first unit is FP32 (fields: kind, start,
  // end, then the units).
  write_text(dir / "absent.dsrec", with_chip_sample(100, [](auto) { return std::string(); }));
  const json absent = report_of(dir / "absent.dsrec", dir / "absent");
  for (const char* value : {"5000", "1e308", "-5"}) {
    SCOPED_TRACE(value);
    const fs::path rec = dir / (std::string("v") + value + ".dsrec");
    write_text(rec, with_chip_sample(100, [value](std::vector<std::string> f) {
                 f.at(3) = value;
                 return joined(f);
               }));
    Ran ran;
    const json r = report_of(rec, dir / ("out" + std::string(value)), &ran);
    // Left out: DIE-Util and the limiting unit are those of the recording without the sample.
    EXPECT_EQ(r["results"]["die_util_pct"], absent["results"]["die_util_pct"]);
    EXPECT_EQ(r["results"]["limiting_unit"], absent["results"]["limiting_unit"]);
    EXPECT_EQ(r["results"]["samples"]["dropped_broken"].get<long>(),
              absent["results"]["samples"]["dropped_broken"].get<long>() + 1);
    bool noted = false;
    for (const auto& n : r["notes"])
      noted = noted || n["text"].get<std::string>().rfind(
                           "1 chip sample(s) hold a value no counter can produce", 0) == 0;
    EXPECT_TRUE(noted) << r["notes"].dump();
    // Nothing on the terminal is a huge or negative-zero figure.
    EXPECT_FALSE(std::regex_search(ran.out, std::regex("[0-9]{4,}\\.[0-9]%"))) << ran.out;
    EXPECT_EQ(ran.out.find("-0.0%"), std::string::npos) << ran.out;
  }
}

TEST(ImpossibleValues, ControlBytesFromARecordingAreShownNotSentToTheTerminal) {
  const fs::path dir = scratch("escape");
  std::string text = read_all(kRecording);
  const std::string model = "\"model\":\"NVIDIA H200\"";
  ASSERT_NE(text.find(model), std::string::npos);
  // JSON's \u001b is an ESC byte in the model name once parsed; [2J would clear the screen.
  text.replace(text.find(model), model.size(), "\"model\":\"NVIDIA H200\\u001b[2J\\u0007\"");
  write_text(dir / "escape.dsrec", text);
  const Ran ran = run_diescope({"report", (dir / "escape.dsrec").string(), "--format", "terminal"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(ran.out.find('\x07'), std::string::npos);
  EXPECT_NE(ran.out.find("NVIDIA H200\\x1b[2J\\x07"), std::string::npos) << ran.out;
}

// ---- 5. The agent's options ----

std::vector<std::string> replay(std::vector<std::string> more) {
  std::vector<std::string> args{"agent", "--replay", kRecording.string(), "--replay-speed", "100"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(Agent, ContradictoryOrEmptyOptionsAreRefused) {
  const fs::path dir = scratch("agent");
  expect_message(run_diescope(replay({"--db", "", "--no-listen"})), 2, "--db was given an empty path");
  expect_message(run_diescope(replay({"--no-db", "--db", (dir / "x.db").string(), "--no-listen"})), 2,
                 "--no-db and --db");
  expect_message(run_diescope(replay({"--no-db", "--no-listen", "--listen", "127.0.0.1:0"})), 2,
                 "--no-listen and --listen");
  expect_message(run_diescope(replay({"--no-db", "--no-listen", "--interval-ms", "-5"})), 2,
                 "--interval-ms -5 is out of range");
  EXPECT_FALSE(fs::exists(dir / "x.db"));
}

TEST(Agent, AFileThatIsNotSqliteIsNamedAsSuch) {
  const fs::path dir = scratch("agent-db");
  write_text(dir / "notes.db", "these are my notes, not a database\n");
  expect_message(run_diescope(replay({"--db", (dir / "notes.db").string(), "--no-listen"})), 3,
                 "is not an SQLite database");
  EXPECT_EQ(read_all(dir / "notes.db"), "these are my notes, not a database\n");
}

TEST(Agent, AnAddressThisHostDoesNotHaveIsNamedAsSuch) {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): no host has it, so binding fails with "not available".
  const Ran ran = run_diescope(replay({"--no-db", "--listen", "192.0.2.1:9402"}));
  expect_message(ran, 4, "192.0.2.1 is not an address of this host");
  EXPECT_EQ(ran.err.find("choose a free port"), std::string::npos) << ran.err;
}

TEST(Agent, TheDocsReplayExampleShowsTheWorkload) {
  // The example in docs/agent.md, run as written (from the repository), 20 times faster.
  std::ifstream doc(kSource + "/docs/agent.md");
  std::string example;
  for (std::string line; std::getline(doc, line);)
    if (line.rfind("diescope agent --replay data/recordings/", 0) == 0)
      example = line.substr(0, line.find('#'));
  ASSERT_FALSE(example.empty()) << "docs/agent.md has no replay example of a bundled recording";
  std::vector<std::string> args;
  std::istringstream words(example);
  for (std::string w; words >> w;) args.push_back(w);
  args.erase(args.begin());  // "diescope"
  args.insert(args.end(), {"--replay-speed", "20"});
  const Ran ran = run_diescope(args, kSource);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  double busiest = 0;
  int records = 0;
  std::istringstream lines(ran.out);
  for (std::string line; std::getline(lines, line);) {
    const json record = json::parse(line);
    ++records;
    if (record["chip"]["die_util_pct"].is_number())
      busiest = std::max(busiest, record["chip"]["die_util_pct"].get<double>());
  }
  EXPECT_GE(records, 2) << ran.out;
  // ffma66 loads FP32 on half the SMs: a record of the work reads well above idle.
  EXPECT_GT(busiest, 25.0) << ran.out;
}

// ---- 6. Calibration files and workload help ----

TEST(Calibration, AnInvalidFileIsRefusedLikeAMissingOne) {
  const fs::path dir = scratch("calibration");
  write_text(dir / "bad.json", "FP32 passed (typed by hand)\n");
  const std::string missing = (dir / "missing.json").string(), bad = (dir / "bad.json").string();
  for (const auto& command : {std::vector<std::string>{"report", kRecording.string(), "--format", "terminal"},
                              std::vector<std::string>{"run", "--output", (dir / "run").string()}}) {
    auto with = [&](const std::string& path) {
      std::vector<std::string> args = command;
      args.insert(args.end(), {"--calibration", path});
      if (command.front() == "run") args.insert(args.end(), {"--", "true"});
      return run_diescope(args);
    };
    expect_message(with(missing), 3, "missing.json: no such file or folder");
    expect_message(with(bad), 3, "bad.json: could not be read as a calibration file: not JSON");
  }
  EXPECT_FALSE(fs::exists(dir / "run")) << "run measured before refusing the calibration";
}

TEST(Workload, HelpNeedsNoCudaExecutable) {
  // A copy of diescope alone in a folder: no diescope-workload beside it.
  const fs::path dir = scratch("workload");
  fs::copy_file(DIESCOPE_BINARY, dir / "diescope");
  const Ran ran = run_diescope_at(dir / "diescope", {"workload", "ffma", "--help"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("--sms"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("--gpus"), std::string::npos) << ran.out;
  // Bad options are refused here too; running one needs the executable and says so.
  expect_message(run_diescope_at(dir / "diescope", {"workload", "ffma", "--sms", "x"}), 2, "--sms");
  const Ran run = run_diescope_at(dir / "diescope", {"workload", "ffma"});
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_NE(run.err.find("not installed"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace diescope::test
