#!/usr/bin/env python3
"""diescope's multi-GPU paths on a CPU machine: a stand-in host of two GPUs (docs/method.md#several-gpus).

The real diescope binary of a build runs with the test stand-in libnvidia-ml.so.1 of two GPUs
(tests/rounds/fake_libnvidia_ml.cpp) on LD_LIBRARY_PATH and the fake sampler child, which holds every
unit of GPU N at a set level (--fake-level N:PCT). Nothing here touches a GPU: it checks the plumbing
and the comparison's rules, not any chip. Each figure is set beside the value worked out by hand:
DIE-Util is the level (every unit reads it in every sample), GPU-Util the stand-in's whole percent,
GPM's NVLink rate R MiB/s is R x 2^20 bytes per second.

  bench/multi_gpu/cpu_two_gpu_stand_in.py BUILD [CSV]      BUILD: a build folder (build/ci) with
        bin/diescope, the fake sampler and tests/rounds/fake-nvml/libnvidia-ml.so.1
Cases: run over both GPUs, run --gpus 1, run with GPU 1 idle, run --source gpm (NVLink), bench --rounds 3,
the agent's /metrics scraped as text, top --once. Writes the rows (case, gpu, figure, measured,
expected) to CSV when given, and prints the rows as a markdown table, with the time each case took and
top's frame. Exit 1 when any figure differs from the one worked out by hand.
"""
import csv
import json
import os
import re
import signal
import socket
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

STEADY = "echo 'diescope: measure start'; sleep 1; echo 'diescope: measure stop'"
FAST = ["--interval-ms", "10", "--drain-ms", "50"]
UUID0 = "GPU-00000000-1111-2222-3333-444444444444"
UUID1 = "GPU-00000000-1111-2222-3333-444444444441"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    csv_path = sys.argv[2] if len(sys.argv) == 3 else None
    diescope = os.path.join(build, "bin", "diescope")
    nvml_dir = os.path.join(build, "tests", "rounds", "fake-nvml")
    fake = shutil.which("diescope_sampler_fake", path=os.path.join(build, "tests", "collect")) or \
        os.path.join(build, "bin", "diescope_sampler_fake")
    for path, what in ((diescope, "diescope"), (os.path.join(nvml_dir, "libnvidia-ml.so.1"), "the stand-in NVML"),
                       (fake, "the fake sampler")):
        if not os.path.exists(path):
            sys.exit(f"cpu_two_gpu_stand_in.py: no {what} at {path}\nfix: cmake --build {build} --target diescope "
                     "rounds_fake_nvml diescope_sampler_fake")
    work = tempfile.mkdtemp(prefix="diescope-multi-gpu-")
    rows = []
    times = {}

    def sampler(levels):
        path = os.path.join(work, "sampler-" + "-".join(f"{d}_{p}" for d, p in levels.items()) + ".sh")
        extra = " ".join(f"--fake-level {d}:{p}" for d, p in levels.items())
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\n[ "$1" = sample ] && shift\nexec "{fake}" "$@" {extra}\n')
        os.chmod(path, 0o755)
        return path

    def env_of(utils, levels, nvlink=0):
        return dict(os.environ, LD_LIBRARY_PATH=nvml_dir, DIESCOPE_FAKE_NVML_GPUS="2",
                    DIESCOPE_FAKE_NVML_GPU_UTIL=",".join(map(str, utils)), DIESCOPE_FAKE_NVML_NVLINK_MIBS=str(nvlink),
                    DIESCOPE_CUPTI=sampler(levels))

    def run(case, args, env):
        t = time.time()
        r = subprocess.run([diescope, *args], cwd=work, env=env, capture_output=True, text=True, timeout=600)
        times[case] = time.time() - t
        if r.returncode != 0:
            sys.exit(f"{case}: diescope {' '.join(args)} exited {r.returncode}\n{r.stderr[-3000:]}")
        return r

    def add(case, gpu, figure, measured, expected):
        rows.append({"case": case, "gpu": gpu, "figure": figure, "measured": measured, "expected": expected})

    def run_case(case, args, env, expect):
        out = os.path.join(work, case)
        dash = args.index("--")
        run(case, [*args[:dash], "--output", out, *args[dash:]], env)
        for name in sorted(os.listdir(out)):
            if not name.endswith(".report"):
                continue
            rep = json.load(open(os.path.join(out, name, "report.json")))
            span = rep["window"]["results"] if rep["window"]["found"] else rep["results"]
            i = rep["gpu"]["index"]
            add(case, i, "DIE-Util %", span["headline"]["die_util_pct"], expect["die"][i])
            add(case, i, "GPU-Util %", span["headline"]["gpu_util_pct"], expect["gpu"][i])
        summary_path = os.path.join(out, "gpus.json")
        if os.path.exists(summary_path):
            s = json.load(open(summary_path))
            add(case, "all", "least-used GPU", s["least_used_gpu"], expect["least"])
            add(case, "all", "gap between GPUs, points", s["gap_points"], expect["gap"])
            add(case, "all", "busy GPUs", " ".join(map(str, s["busy_gpus"])), expect["busy"])
            for g in s["gpus"]:
                if g["nvlink_tx_bytes_per_s"] is not None:
                    add(case, g["index"], "NVLink TX B/s", round(g["nvlink_tx_bytes_per_s"]), expect["nvlink"])
                    add(case, g["index"], "NVLink RX B/s", round(g["nvlink_rx_bytes_per_s"]), expect["nvlink"])
        else:
            add(case, "all", "gpus.json", "none", expect.get("summary", "none"))

    two = env_of([97, 88], {0: 60, 1: 20})
    run_case("run, two GPUs", ["run", *FAST, "--window", "markers", "--", "/bin/sh", "-c", STEADY], two,
             {"die": {0: 60.0, 1: 20.0}, "gpu": {0: 97.0, 1: 88.0}, "least": 1, "gap": 40.0, "busy": "0 1"})
    run_case("run --gpus 1", ["run", *FAST, "--window", "markers", "--gpus", "1", "--", "/bin/sh", "-c", STEADY], two,
             {"die": {1: 20.0}, "gpu": {1: 88.0}})
    run_case("run, GPU 1 idle", ["run", *FAST, "--window", "markers", "--", "/bin/sh", "-c", STEADY],
             env_of([97, 0], {0: 60, 1: 0}),
             {"die": {0: 60.0, 1: 0.0}, "gpu": {0: 97.0, 1: 0.0}, "least": 1, "gap": 60.0, "busy": "0"})
    gpm = env_of([97, 88], {}, nvlink=1000)
    out = os.path.join(work, "gpm")
    run("run --source gpm", ["run", "--source", "gpm", "--interval-ms", "100", "--drain-ms", "100", "--output", out,
                             "--", "/bin/sh", "-c", "sleep 2"], gpm)
    s = json.load(open(os.path.join(out, "gpus.json")))
    for g in s["gpus"]:
        add("run --source gpm", g["index"], "NVLink TX B/s", round(g["nvlink_tx_bytes_per_s"]), 1000 * 2**20)
        add("run --source gpm", g["index"], "NVLink RX B/s", round(g["nvlink_rx_bytes_per_s"]), 1000 * 2**20)
    out = os.path.join(work, "bench")
    run("bench --rounds 3", ["bench", "--rounds", "3", *FAST, "--output", out, "--", "/bin/sh", "-c", STEADY], two)
    bench = json.load(open(os.path.join(out, "bench.json")))
    for g in bench["gpus"]:
        stat = next(f for f in g["statistics"] if f["key"] == "die_util_pct")
        add("bench --rounds 3", g["index"], "kept rounds", " ".join(map(str, g["kept_rounds"])), "1 2 3")
        add("bench --rounds 3", g["index"], "DIE-Util % mean", stat["mean"], {0: 60.0, 1: 20.0}[g["index"]])
        add("bench --rounds 3", g["index"], "DIE-Util % sd", stat["sd"], 0.0)

    # The agent: /metrics scraped as text once both GPUs have a record.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    levels = ["--sampler-arg=--fake-level", "--sampler-arg=0:60", "--sampler-arg=--fake-level", "--sampler-arg=1:20"]
    t = time.time()
    agent = subprocess.Popen([diescope, "agent", "--no-db", "--listen", f"127.0.0.1:{port}", "--duty-on-ms", "500",
                              "--duty-period-ms", "1000", "--drain-ms", "100", "--sampler", fake, *levels],
                             cwd=work, env=two, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    body = ""
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            except OSError:
                body = ""
            if all(re.search(r'diescope_die_util_percent\{[^}]*gpu="%d"' % i, body) for i in (0, 1)):
                break
            time.sleep(0.2)
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
    times["agent /metrics"] = time.time() - t
    series = [line for line in body.splitlines() if line.startswith("diescope_") and not line.startswith(
        ("diescope_agent_info", "diescope_duty_"))]
    for i, uuid in ((0, UUID0), (1, UUID1)):
        mine = [line for line in series if f'gpu="{i}"' in line]
        add("agent /metrics", i, "series with this gpu and its uuid",
            sum(1 for line in mine if f'UUID="{uuid}"' in line), len(mine))
        die = re.search(r'diescope_die_util_percent\{[^}]*gpu="%d"[^}]*\} (\S+)' % i, body)
        add("agent /metrics", i, "diescope_die_util_percent", float(die.group(1)) if die else "none",
            {0: 60.0, 1: 20.0}[i])
    add("agent /metrics", "all", "per-GPU series without a gpu label", sum(1 for line in series if 'gpu="' not in line), 0)

    # top --once, live: one frame as plain text.
    t = time.time()
    r = subprocess.run([diescope, "top", "--once", "--drain-ms", "500", "--sampler", fake, *levels], cwd=work, env=two,
                       capture_output=True, text=True, timeout=60)
    times["top --once"] = time.time() - t
    frame = r.stdout
    for i in (0, 1):
        block = frame.split(f"GPU {i} ·", 1)[1] if f"GPU {i} ·" in frame else ""
        die = re.search(r"DIE-Util\s+([\d.]+)%", block)
        add("top --once", i, "DIE-Util %", float(die.group(1)) if die else "none", {0: 60.0, 1: 20.0}[i])

    if csv_path:
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["case", "gpu", "figure", "measured", "expected"])
            w.writeheader()
            w.writerows(rows)
    print("| case | GPU | figure | measured | expected |\n| --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['case']} | {r['gpu']} | {r['figure']} | {r['measured']} | {r['expected']} |")
    print("\n| case | seconds |\n| --- | --- |")
    for case, t in times.items():
        print(f"| {case} | {t:.1f} |")
    print("\ntop --once:\n```\n" + frame.rstrip() + "\n```")
    mismatches = [r for r in rows if str(r["measured"]) != str(r["expected"])]
    print(f"\n{len(rows) - len(mismatches)} of {len(rows)} figures as worked out by hand")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
