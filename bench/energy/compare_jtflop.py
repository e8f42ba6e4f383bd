#!/usr/bin/env python3
"""Joules per TFLOP from diescope beside a hand count (bench/energy/joules_per_tflop.sh's output).

    compare_jtflop.py hand-flops PROGRAM_LOG    the FLOPs of every kernel a bundled workload ran
                                                (its window's and its set-up launches'), from the
                                                parameters in its JSON line, then @PRECISION
    compare_jtflop.py table OUT_DIR             writes OUT_DIR/table.md and OUT_DIR/jtflop.csv

The hand count: the workload's FLOPs from its parameters (ffma: 2 x FMAs per thread per trip x
trips x threads x launches; gemm: 2 m n k per call), and the energy from NVML's counter as
nvml_energy_log.py read it in a program of its own (every 1 ms, each change timed), linear between
the changes it saw, over the same span: the steady window's marks for `diescope run`, the kernel
windows of the sampled backend (window_start_ns, window_end_ns in *.sampled-windows.tsv) for the
roofline.
"""
import bisect
import csv
import glob
import json
import os
import sys

# src/workloads/gpu/ffma.cpp and gemm.cpp: the launches outside the window.
FFMA_CHECK_TRIPS, FFMA_CALIBRATION_TRIPS = 64, 1024
GEMM_SETUP_CALLS = 2 + 5  # two warm-up calls, five timed ones that size the window


def result_line(path):
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith("{") and '"workload"' in line:
            return json.loads(line)
    sys.exit("compare_jtflop: no workload result line in %s" % path)


def hand_flops(r):
    """(window FLOPs, every kernel's FLOPs, precision) from the workload's own parameters."""
    if r["workload"] == "ffma":
        c, w = r["config"], r["work"]
        per_trip = w["ffma_per_thread_per_launch"] // c["iterations_per_launch"]
        window = 2 * per_trip * c["iterations_per_launch"] * w["threads"] * c["launches"]
        setup = 2 * per_trip * (FFMA_CHECK_TRIPS + FFMA_CALIBRATION_TRIPS) * w["threads"]
        return window, window + setup, "fp32"
    if r["workload"] == "gemm":
        c = r["config"]
        per_call = 2 * c["m"] * c["n"] * c["k"]
        return per_call * c["calls"], per_call * (c["calls"] + GEMM_SETUP_CALLS), "tensor-bf16"
    sys.exit("compare_jtflop: no hand count for workload %s" % r["workload"])


class Counter:
    """NVML's counter as the separate program saw it: linear between the changes it timed."""

    def __init__(self, path):
        self.t, self.mj = [], []
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            t, mj = line.split()
            self.t.append(int(t))
            self.mj.append(int(mj))

    def at(self, t):
        i = bisect.bisect_right(self.t, t)
        if i == 0 or i == len(self.t):
            raise ValueError("time %d outside the counter's log" % t)
        t0, t1, e0, e1 = self.t[i - 1], self.t[i], self.mj[i - 1], self.mj[i]
        return (e0 + (e1 - e0) * (t - t0) / (t1 - t0)) / 1000.0

    def over(self, lo, hi):
        return self.at(hi) - self.at(lo)


def pct(a, b):
    return 100.0 * (a - b) / b


def table(out):
    rows = []
    for w in ("ffma", "gemm"):
        run_dir = os.path.join(out, w + "-report")
        rep = json.load(open(os.path.join(run_dir, "report.json")))
        res = result_line(os.path.join(out, w + "-run.stdout"))
        window_flops, _, _ = hand_flops(res)
        win = rep["window"]
        e = win["results"]["energy"]
        ref_j = Counter(os.path.join(out, w + "-run.nvml.txt")).over(win["start_ns"], win["end_ns"])
        rows.append({"workload": w, "path": "diescope run --window markers, report's steady window",
                     "span_s": win["results"]["span_s"],
                     "diescope_flops": e["flops"], "diescope_j": e["energy_j"], "energy_source": e["energy_source"],
                     "diescope_j_per_tflop": e["joules_per_tflop"],
                     "hand_flops": window_flops, "hand_j": ref_j, "hand_j_per_tflop": ref_j / (window_flops / 1e12)})
        roof = list(csv.DictReader(open(os.path.join(out, w + "-roofline.csv"))))
        if len(roof) != 1:
            sys.exit("compare_jtflop: %s-roofline.csv holds %d rows, not one" % (w, len(roof)))
        r = roof[0]
        log = glob.glob(os.path.join(out, w + "-roofline", "*.sampled.log"))[0]
        _, all_flops, prec = hand_flops(result_line(log))
        counter = Counter(os.path.join(out, w + "-roofline.nvml.txt"))
        ref_j, span = 0.0, 0.0
        for line in open(glob.glob(os.path.join(out, w + "-roofline", "*.sampled-windows.tsv"))[0]):
            f = line.rstrip("\n").split("\t")
            if len(f) > 11 and f[7] == "kernel":
                ref_j += counter.over(int(f[10]), int(f[11]))
                span += (int(f[11]) - int(f[10])) * 1e-9
        flops = float(r["work " + prec.replace("-", " ") + " [" + ("OP" if "int8" in prec else "FLOP") + "]"])
        rows.append({"workload": w, "path": "roofline profile --profiler sampled, kernel windows",
                     "span_s": span, "diescope_flops": flops, "diescope_j": float(r["energy [J]"]),
                     "energy_source": r["energy source"], "diescope_j_per_tflop": float(r["joules per tflop [J/TFLOP]"]),
                     "hand_flops": all_flops, "hand_j": ref_j, "hand_j_per_tflop": ref_j / (all_flops / 1e12)})
    with open(os.path.join(out, "jtflop.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader()
        wr.writerows(rows)
    lines = ["| workload | path | span, s | TFLOP (diescope / hand) | J diescope | J hand | J/TFLOP diescope | "
             "J/TFLOP hand | difference, % |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for x in rows:
        lines.append("| %s | %s | %.3f | %.4f / %.4f | %.1f (%s) | %.1f | %.4f | %.4f | %+.3f |" % (
            x["workload"], x["path"], x["span_s"], x["diescope_flops"] / 1e12, x["hand_flops"] / 1e12,
            x["diescope_j"], x["energy_source"], x["hand_j"], x["diescope_j_per_tflop"], x["hand_j_per_tflop"],
            pct(x["diescope_j_per_tflop"], x["hand_j_per_tflop"])))
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "table.md"), "w").write(text)
    print(text, end="")
    worst = max(abs(pct(x["diescope_j_per_tflop"], x["hand_j_per_tflop"])) for x in rows)
    print("largest difference %.3f%%: %s" % (worst, "within 1%" if worst <= 1.0 else "NOT within 1%"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "hand-flops":
        _, all_flops, prec = hand_flops(result_line(sys.argv[2]))
        print("%d@%s" % (all_flops, prec))
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
