#!/usr/bin/env python3
"""diescope's energy per step beside the program's own reading of NVML's counter
(bench/energy/resnet50_steps.sh wrote OUT). diescope's figure is the span figure of the recording over
each step (docs/energy.md#steps-and-regions): the counter as `diescope run` recorded it every 100 ms,
linear between readings. The program's is the counter read at the step's two ends.

    PYTHONPATH=build/ci/python bench/energy/compare_steps.py OUT [RESULTS_DIR]

Writes RESULTS_DIR (default OUT)/steps.csv (one row per step, both figures and their difference),
table.md (the figures table) and counter.md (the counter's update period and step size while the
program polled it).
"""
import csv
import glob
import math
import os
import statistics
import sys

import diescope


def main():
    out = sys.argv[1]
    results = sys.argv[2] if len(sys.argv) > 2 else out
    os.makedirs(results, exist_ok=True)
    recordings = sorted(glob.glob(os.path.join(out, "run", "*.dsrec")))
    if not recordings:
        raise SystemExit("compare_steps: no recording under %s/run" % out)
    with open(os.path.join(out, "program", "steps.csv")) as f:
        steps = list(csv.DictReader(f))
    starts = [int(s["start_ns"]) for s in steps]
    ends = [int(s["end_ns"]) for s in steps]
    spans = diescope.span_figures(recordings[0], starts, ends)
    ds_j = list(spans["energy_j"])
    source = list(spans["energy_source"])
    stranded = list(spans["stranded_energy_j"])
    die = list(spans["die_util_pct"])
    gpu = list(spans["gpu_util_pct"])

    rows = []
    for i, s in enumerate(steps):
        ref = (int(s["nvml_end_mj"]) - int(s["nvml_start_mj"])) / 1000.0
        secs = (ends[i] - starts[i]) / 1e9
        flops = float(s["flops"])
        rows.append({"step": i, "seconds": secs, "reference_j": ref, "diescope_j": ds_j[i],
                     "energy_source": source[i], "diff_j": ds_j[i] - ref,
                     "diff_pct": 100.0 * (ds_j[i] - ref) / ref if ref else float("nan"),
                     "mean_power_w": ds_j[i] / secs, "die_util_pct": die[i], "gpu_util_pct": gpu[i],
                     "stranded_j": stranded[i],
                     "tflop": flops / 1e12, "joules_per_tflop": ds_j[i] / (flops / 1e12) if flops > 0 else float("nan")})
    with open(os.path.join(results, "steps.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()})

    diffs = [abs(r["diff_pct"]) for r in rows]
    total_ref = sum(r["reference_j"] for r in rows)
    total_ds = sum(r["diescope_j"] for r in rows)
    lines = ["| step | s | NVML read by the program, J | diescope, J | source | difference, J | difference, % | W | DIE-Util % | J/TFLOP |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| %d | %.3f | %.1f | %.1f | %s | %+.1f | %+.2f | %.0f | %.1f | %.1f |" % (
            r["step"], r["seconds"], r["reference_j"], r["diescope_j"], r["energy_source"], r["diff_j"],
            r["diff_pct"], r["mean_power_w"], r["die_util_pct"], r["joules_per_tflop"]))
    lines += ["", "| figure | value |", "| --- | --- |",
              "| steps | %d |" % len(rows),
              "| steps within 1%% | %d |" % sum(1 for d in diffs if d <= 1.0),
              "| largest difference, %% | %.2f |" % max(diffs),
              "| median difference, %% | %.2f |" % statistics.median(diffs),
              "| all steps: program, J | %.1f |" % total_ref,
              "| all steps: diescope, J | %.1f |" % total_ds,
              "| all steps: difference, %% | %+.3f |" % (100.0 * (total_ds - total_ref) / total_ref)]
    with open(os.path.join(results, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")

    # The counter's own cadence while the program polled it every 2 ms.
    with open(os.path.join(out, "program", "counter.csv")) as f:
        ch = [(int(r["ts_ns"]), int(r["energy_mj"])) for r in csv.DictReader(f)]
    gaps = [(b[0] - a[0]) / 1e6 for a, b in zip(ch, ch[1:])]
    jumps = [(b[1] - a[1]) / 1e3 for a, b in zip(ch, ch[1:])]
    cl = ["| figure | value |", "| --- | --- |",
          "| changes seen | %d |" % len(ch),
          "| time between changes, median ms | %.1f |" % (statistics.median(gaps) if gaps else math.nan),
          "| time between changes, 10th-90th percentile ms | %.1f-%.1f |" % (
              (statistics.quantiles(gaps, n=10)[0], statistics.quantiles(gaps, n=10)[-1]) if len(gaps) > 10
              else (math.nan, math.nan)),
          "| step of the counter, median J | %.1f |" % (statistics.median(jumps) if jumps else math.nan),
          "| step of the counter, largest J | %.1f |" % (max(jumps) if jumps else math.nan)]
    with open(os.path.join(results, "counter.md"), "w") as f:
        f.write("\n".join(cl) + "\n")
    print("\n".join(lines + [""] + cl))


if __name__ == "__main__":
    main()
