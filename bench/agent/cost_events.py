#!/usr/bin/env python3
"""The cost of always-on chip counters on workloads with stable throughput, timed by CUDA events.

One PyTorch process runs FFMA (jiterator, bench/run/jit_fma.py), a STREAM copy (1 GiB float vectors,
Tensor.copy_) and a cuBLAS bf16 GEMM (torch.mm, --gemm-n cubed, 8192 by default: on the H200 that size
runs into the power limit and its clocks wander, so a smaller one can be asked for; the GEMM replays
a CUDA graph of several launches, gemm_power_probe.gemm_graph, so that a small size times the GPU and
not Python's launches). For each workload and each setting, it
runs interleaved rounds: in each round one stretch of the workload with the counters off and one with
them on, in alternating order (off first in even rounds, on first in odd ones). "On" is the counter
child running for the whole stretch, started before it and stopped after it. Before every timed
stretch, on or off, the workload runs untimed for --lead-s: starting and stopping the child leaves
the GPU idle for a moment, and a power-limited GEMM runs faster for a while after an idle moment, so
without the same lead-in the stretch after the longer pause would look faster. The settings:

    pm10  diescope-cupti sample at 10 ms (the hopper-gh100 table, 1 s drains), as run and the agent use it
    pm1   the same at 1 ms
    gpm   gpm_probe serve at 100 ms (NVML GPM through diescope's GpmSampler)

Each stretch is timed by CUDA events around a fixed number of launches (about --stretch-s seconds).
A round's slowdown is 100 x (1 - rate_on / rate_off); the table gives each setting's mean over the
rounds and its 95% interval (Student's t). Rounds go on until the interval is narrower than
--target-width points (at least --min-rounds, at most --max-rounds) or the time share runs out.

    python3 bench/agent/cost_events.py --cupti BIN/diescope-cupti --gpm-probe BIN/gpm_probe \
        --metrics-file METRICS --out DIR [--budget-s 150]

Writes DIR/rounds.csv and DIR/cost.csv (setting rows) and prints the table.
"""
import argparse
import math
import os
import signal
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import jit_fma  # noqa: E402
from gemm_power_probe import gemm_graph  # noqa: E402  (this folder is on sys.path as the script's own)

# Student's t, two-sided 95%, by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
       18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}


def t95(df):
    if df in T95:
        return T95[df]
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else float("nan")


class Counters:
    """A child that holds the counters (or reads GPM) from its 'on' line until stop()."""

    def __init__(self, argv, stop_by_signal):
        self.stop_by_signal = stop_by_signal
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.on = threading.Event()
        self.tail = []
        self.threads = [threading.Thread(target=self._drain, args=(self.p.stdout, True), daemon=True),
                        threading.Thread(target=self._drain, args=(self.p.stderr, False), daemon=True)]
        for t in self.threads:
            t.start()
        if not self.on.wait(30):
            self.stop()
            raise RuntimeError("counter child did not come on: " + " | ".join(self.tail[-5:]))

    def _drain(self, stream, is_stdout):
        for line in stream:
            if is_stdout and (line == "on\n" or line.startswith("on ")):
                self.on.set()
            if not line.startswith("s "):
                self.tail = (self.tail + [line.strip()])[-20:]

    def stop(self):
        if self.p.poll() is None:
            if self.stop_by_signal:
                self.p.send_signal(signal.SIGTERM)
            else:
                self.p.stdin.close()
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for t in self.threads:
            t.join(5)
        return self.p.returncode


def workloads(gemm_n):
    props = torch.cuda.get_device_properties(0)
    ffma, _ = jit_fma.make(torch.float32, props.multi_processor_count)
    a = torch.empty(1 << 28, device="cuda", dtype=torch.float32).uniform_()
    b = torch.empty_like(a)
    gemm, _ = gemm_graph(gemm_n)
    return {
        "ffma": ffma,
        "stream_copy": lambda: b.copy_(a),
        "gemm_bf16": gemm,
    }


def timed(launch, count):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    e0.record()
    for _ in range(count):
        launch()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / 1000


def summary(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
    half = t95(n - 1) * sd / math.sqrt(n) if n > 1 else float("nan")
    return mean, sd, half


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cupti", required=True)
    p.add_argument("--gpm-probe", required=True)
    p.add_argument("--metrics-file", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=150)
    p.add_argument("--stretch-s", type=float, default=0.3)
    p.add_argument("--settle-s", type=float, default=0.2, help="wait after the counter child comes on")
    p.add_argument("--lead-s", type=float, default=0.3, help="untimed run of the workload before each stretch")
    p.add_argument("--min-rounds", type=int, default=6)
    p.add_argument("--max-rounds", type=int, default=16)
    p.add_argument("--target-width", type=float, default=0.5)
    p.add_argument("--settings", default="pm10,pm1,gpm")
    p.add_argument("--workloads", default="ffma,stream_copy,gemm_bf16")
    p.add_argument("--gemm-n", type=int, default=8192, help="the GEMM's size (n x n times n x n)")
    a = p.parse_args()
    metrics = ",".join(line.strip() for line in open(a.metrics_file) if line.strip())
    children = {
        "pm10": ([a.cupti, "sample", "--device", "0", "--interval-ms", "10", "--drain-ms", "1000",
                  "--metrics", metrics], False),
        "pm1": ([a.cupti, "sample", "--device", "0", "--interval-ms", "1", "--drain-ms", "1000",
                 "--metrics", metrics], False),
        "gpm": ([a.gpm_probe, "serve", "--interval-ms", "100"], True),
    }
    os.makedirs(a.out, exist_ok=True)
    work = workloads(a.gemm_n)
    chosen_w = a.workloads.split(",")
    chosen_s = a.settings.split(",")
    counts, leads = {}, {}
    for name in chosen_w:
        launch = work[name]
        for _ in range(3):
            launch()
        one = timed(launch, 3) / 3
        counts[name] = max(1, int(a.stretch_s / one))
        leads[name] = max(1, int(a.lead_s / one))
        print(f"{name}: {one * 1000:.3f} ms per launch, {counts[name]} launches per stretch", flush=True)
    share = a.budget_s / (len(chosen_w) * len(chosen_s))
    rounds_out = open(os.path.join(a.out, "rounds.csv"), "w")
    rounds_out.write("workload,setting,round,order,rate_off,rate_on,slowdown_pct\n")
    rows = []
    for name in chosen_w:
        launch, count = work[name], counts[name]
        for setting in chosen_s:
            argv, by_signal = children[setting]
            slow = []
            started = time.monotonic()
            r = 0
            while r < a.max_rounds:
                if r >= a.min_rounds:
                    _, _, half = summary(slow)
                    if 2 * half < a.target_width * 0.8:
                        break
                if time.monotonic() - started > share and r >= 3:
                    break
                order = ("off", "on") if r % 2 == 0 else ("on", "off")
                rate = {}
                for state in order:
                    child = None
                    if state == "on":
                        child = Counters(argv, by_signal)
                        time.sleep(a.settle_s)
                    timed(launch, leads[name])  # the same lead-in for both states
                    rate[state] = count / timed(launch, count)
                    if child:
                        child.stop()
                s = 100 * (1 - rate["on"] / rate["off"])
                slow.append(s)
                rounds_out.write(f"{name},{setting},{r},{'-'.join(order)},{rate['off']:.6g},{rate['on']:.6g},{s:.4f}\n")
                rounds_out.flush()
                r += 1
            mean, sd, half = summary(slow)
            rows.append((name, setting, len(slow), mean, sd, mean - half, mean + half))
            print(f"{name} {setting}: {len(slow)} rounds, slowdown {mean:.3f}% (sd {sd:.3f}), "
                  f"95% interval {mean - half:.3f}% to {mean + half:.3f}% (width {2 * half:.3f})", flush=True)
    with open(os.path.join(a.out, "cost.csv"), "w") as f:
        f.write("workload,setting,rounds,mean_slowdown_pct,sd_pct,ci95_low_pct,ci95_high_pct\n")
        for row in rows:
            f.write("{},{},{},{:.4f},{:.4f},{:.4f},{:.4f}\n".format(*row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
