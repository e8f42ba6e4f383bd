#!/usr/bin/env python3
"""`diescope bench` through the command line: the usage errors it must give before it measures
anything (each with a cause, a fix and exit code 2), and its help. Runs on any machine: none of
these cases reaches the GPU or NVML.
Usage: cli_bench_test.py DIESCOPE SCRATCH_DIR
"""
import os
import subprocess
import sys


def run(diescope, args, cwd):
    return subprocess.run([diescope, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def main():
    diescope, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    failures = []

    def expect_usage(args, cause, fix):
        r = run(diescope, args, scratch)
        problems = []
        if r.returncode != 2:
            problems.append(f"exit code {r.returncode}, expected 2")
        if f"diescope: error: {cause}" not in r.stderr:
            problems.append(f"no 'diescope: error: {cause}' in stderr")
        if fix not in r.stderr:
            problems.append(f"no fix mentioning {fix!r} in stderr")
        if "Traceback" in r.stderr or "terminate called" in r.stderr:
            problems.append("crashed")
        if problems:
            failures.append(f"diescope {' '.join(args)}: {'; '.join(problems)}\n--- stderr:\n{r.stderr}")

    expect_usage(["bench"], "no command to bench", "--workload stream")
    expect_usage(["bench", "--rounds", "1", "--", "/bin/true"], "--rounds 1 is out of range", "at least 2 kept rounds")
    expect_usage(["bench", "--interval-ms", "0", "--", "/bin/true"], "--interval-ms 0 is out of range", "0.1 to 10000")
    expect_usage(["bench", "--drain-ms", "1", "--", "/bin/true"], "--drain-ms 1 is out of range", "10 to 60000")
    expect_usage(["bench", "--workload", "nosuch"], "unknown workload 'nosuch'", "ffma, stream, gemm, duty")
    # The workload's own arguments are checked once, before any round.
    expect_usage(["bench", "--workload", "stream", "--", "--no-such-flag"],
                 "The following argument was not expected: --no-such-flag", "diescope workload stream --help")
    r = run(diescope, ["bench", "--help"], scratch)
    if r.returncode != 0 or "--rounds" not in r.stdout or "--workload" not in r.stdout or "left out" not in r.stdout:
        failures.append(f"diescope bench --help: exit {r.returncode}\n{r.stdout}{r.stderr}")
    # Nothing was measured, so no bench folder was made.
    made = [n for n in os.listdir(scratch) if n.startswith("diescope-bench-")]
    if made:
        failures.append(f"usage errors left bench folders behind: {made}")

    for f in failures:
        print("FAIL", f)
    print(f"cli_bench_test: {7 - len(failures)} of 7 cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
