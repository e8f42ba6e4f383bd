#!/usr/bin/env python3
"""`diescope bench` through the command line.

Usage errors: each must come before anything is measured, with a cause, a fix and exit code 2.
End to end on the fake path (when given FAKE_NVML_DIR FAKE_SAMPLER WRAPPER BENCH_DIR): the real
binary runs its rounds with a stand-in libnvidia-ml.so.1 (tests/rounds/fake_libnvidia_ml.cpp) on
LD_LIBRARY_PATH and the fake sampler child as its counter sampler, so the whole command (progress,
summary, bench.json, exit codes, interruption) is checked on a machine without a GPU.

Usage: cli_bench_test.py DIESCOPE SCRATCH_DIR [FAKE_NVML_DIR FAKE_SAMPLER WRAPPER BENCH_DIR]
"""
import json
import os
import pathlib
import pty
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cli_run import CliTest, fake_nvml_env, outcome  # noqa: E402  (tests/cli_run.py)

STEADY = "echo setup; echo 'diescope: measure start'; sleep 0.3; echo 'diescope: measure stop'"
FAST = ["--interval-ms", "5", "--drain-ms", "50"]


def main():
    diescope, scratch = sys.argv[1], sys.argv[2]
    fake = sys.argv[3:7] if len(sys.argv) >= 7 else None
    t = CliTest("cli_bench_test", diescope, scratch)
    check, run = t.check, t.run

    def expect_usage(args, cause, fix, env=None):
        r = run(args, env)
        problems = []
        if r.returncode != 2:
            problems.append(f"exit code {r.returncode}, expected 2")
        if f"diescope: error: {cause}" not in r.stderr:
            problems.append(f"no 'diescope: error: {cause}' in stderr")
        if fix not in r.stderr:
            problems.append(f"no fix mentioning {fix!r} in stderr")
        check(f"diescope {' '.join(args)}", not problems, "; ".join(problems) + f"\n--- stderr:\n{r.stderr}")

    expect_usage(["bench"], "no command to bench", "--workload stream")
    expect_usage(["bench", "--rounds", "1", "--", "/bin/true"], "--rounds 1 is out of range", "at least 2 kept rounds")
    expect_usage(["bench", "--interval-ms", "0", "--", "/bin/true"], "--interval-ms 0 is out of range", "0.1 to 10000")
    expect_usage(["bench", "--drain-ms", "1", "--", "/bin/true"], "--drain-ms 1 is out of range", "10 to 60000")
    expect_usage(["bench", "--workload", "nosuch"], "unknown workload 'nosuch'", "ffma, stream, gemm, duty")
    # The workload's own arguments are checked once, before any round.
    expect_usage(["bench", "--workload", "stream", "--", "--no-such-flag"],
                 "The following argument was not expected: --no-such-flag", "diescope workload stream --help")
    r = run(["bench", "--help"])
    check("diescope bench --help", r.returncode == 0 and "--rounds" in r.stdout and "left out" in r.stdout,
          r.stdout + r.stderr)
    made = [n for n in os.listdir(scratch) if n.startswith("diescope-bench-")]
    check("usage errors leave no bench folder", not made, str(made))

    if fake:
        nvml_dir, fake_sampler, wrapper, bench_dir = fake
        env = fake_nvml_env(nvml_dir, DIESCOPE_CUPTI=wrapper, DIESCOPE_TEST_FAKE_SAMPLER=fake_sampler)
        shutil.rmtree(bench_dir, ignore_errors=True)
        os.makedirs(bench_dir)

        # Three kept rounds: exit 0, plain progress lines (stderr is a pipe), the summary, bench.json.
        out = os.path.join(bench_dir, "cli_three_rounds")
        r = run(["bench", "--rounds", "3", *FAST, "--output", out, "--", "/bin/sh", "-c", STEADY], env)
        detail = outcome(r)
        check("three rounds: exit 0", r.returncode == 0, detail)
        check("three rounds: progress lines", "diescope bench: round 1/3 started" in r.stderr
              and "diescope bench: round 3/3 done in" in r.stderr and "GPU 0 kept (GPU-Util 97.0%" in r.stderr, detail)
        check("three rounds: summary", "3 of 3 rounds kept" in r.stdout and "95% interval" in r.stdout
              and "DIE-Util %" in r.stdout, detail)
        check("three rounds: the command's output goes to the log, not the terminal",
              "setup" not in r.stdout.splitlines(), detail)
        try:
            bench = json.load(open(os.path.join(out, "bench.json")))
            report = json.load(open(os.path.join(out, "round-02", "gpu0.dsrec.report", "report.json")))
            log = open(os.path.join(out, "round-03", "stdout.log")).read()
            check("three rounds: bench.json", bench["gpus"][0]["kept_rounds"] == [1, 2, 3] and bench["rounds_run"] == 3,
                  json.dumps(bench)[:2000])
            check("three rounds: round report", report["run_type"] == "round" and report["window"]["found"],
                  json.dumps(report)[:500])
            check("three rounds: stdout.log", "diescope: measure start" in log, log)
        except (OSError, ValueError, KeyError) as e:
            check("three rounds: files", False, repr(e))

        # A second bench into the same folder is refused.
        r = run(["bench", "--rounds", "2", *FAST, "--output", out, "--", "/bin/sh", "-c", STEADY], env)
        check("reused folder", r.returncode == 2 and "already holds a bench" in r.stderr, r.stderr)

        # No markers: every round left out; exit 1 with the fix; bench.json still written.
        out = os.path.join(bench_dir, "cli_no_markers")
        r = run(["bench", "--rounds", "2", *FAST, "--output", out, "--show-output", "--", "/bin/sh", "-c",
                 "echo working; sleep 0.2"], env)
        detail = outcome(r)
        check("no markers: exit 1", r.returncode == 1, detail)
        check("no markers: message and fix",
              "diescope: error: GPU 0 kept 0 of 2 rounds, and the statistics need at least 2" in r.stderr
              and "fix: make the command print the lines 'diescope: measure start'" in r.stderr, detail)
        check("no markers: named per round", "round 1 left out: no steady window (no markers)" in r.stdout, detail)
        check("no markers: --show-output", "working" in r.stdout, detail)
        check("no markers: bench.json", os.path.exists(os.path.join(out, "bench.json")), detail)

        # On a terminal: the progress bar is drawn and redrawn.
        out = os.path.join(bench_dir, "cli_terminal")
        master, slave = pty.openpty()
        chunks = []

        def drain():
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)

        reader = threading.Thread(target=drain)
        reader.start()
        p = subprocess.run([diescope, "bench", "--rounds", "2", *FAST, "--output", out, "--", "/bin/sh", "-c", STEADY],
                           cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=120)
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
        tty = b"".join(chunks).decode(errors="replace")
        check("terminal: progress bar", p.returncode == 0 and "\r\x1b[K[" in tty and "] round 2/2 running" in tty
              and "2/2 rounds" in tty and "round 1/2 done in" in tty, repr(tty))

        # SIGINT to diescope during round 2: forwarded, the bench stops after it, exit 130.
        out = os.path.join(bench_dir, "cli_interrupted")
        p = subprocess.Popen([diescope, "bench", "--rounds", "5", *FAST, "--output", out, "--", "/bin/sh", "-c",
                              "echo 'diescope: measure start'; sleep 1; echo 'diescope: measure stop'"],
                             cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(os.path.join(out, "round-02")):
            time.sleep(0.05)
        time.sleep(0.4)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
        detail = f"exit {p.returncode}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}"
        check("interrupted: exit 130", p.returncode == 130, detail)
        check("interrupted: says so", "interrupted during round 2" in stderr, detail)
        try:
            bench = json.load(open(os.path.join(out, "bench.json")))
            check("interrupted: bench.json", bench["interrupted"] and bench["rounds_run"] == 2
                  and bench["gpus"][0]["kept_rounds"] == [1], json.dumps(bench)[:2000])
        except (OSError, ValueError, KeyError) as e:
            check("interrupted: bench.json", False, repr(e))

    return t.finish("" if fake else " (usage errors only: no fake NVML given)")


if __name__ == "__main__":
    sys.exit(main())
