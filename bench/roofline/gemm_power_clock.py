#!/usr/bin/env python3
"""Per-launch time, SM clock and cycles of the power-limited bf16 GEMM, from gemm_power_clock.sh's OUT_DIR.

    gemm_power_clock.py OUT_DIR > gemm-clock.csv

Rows: ncu (each of 2 launches replayed alone; per launch), the range profiler on 1 launch, on 5
back-to-back launches (per launch), and their two-point difference ((5-run - 1-run) / 4, the
launches after the first), and the sampled backend's one-launch (.ref) and two-point figures. Cycles
are duration x the mean SM clock the counters read (sm__cycles_elapsed.avg.per_second); the sampler
reads no clock, so its cycles are empty and the clock it would need for ncu's cycles is given.
"""
import csv
import os
import sys


def one_row(path, region="gemm"):
    rows = [r for r in csv.DictReader(open(path)) if r["region"] == region]
    return rows[0] if rows else None


def window_active_ms(path):
    """The kernel windows' counted length (active_ms) of a sampled run, in ms."""
    total = 0.0
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) > 7 and f[7] == "kernel":
            total += float(f[4])
    return total


def main():
    d = sys.argv[1]
    ncu, r1, r5 = (one_row(os.path.join(d, f)) for f in ("ncu.csv", "range-1.csv", "range-5.csv"))
    sampled = one_row(os.path.join(d, "sampled.csv"))
    ref_ms = window_active_ms(os.path.join(d, "regions.ref.sampled-windows.tsv"))
    n_ms = float(ncu["duration [s]"]) / int(ncu["launches"]) * 1e3
    n_hz = float(ncu["sm clock [Hz]"])
    ncu_cycles = n_ms * 1e-3 * n_hz
    r1_ms, r1_hz = float(r1["duration [s]"]) * 1e3, float(r1["sm clock [Hz]"])
    r5_ms, r5_hz = float(r5["duration [s]"]) * 1e3, float(r5["sm clock [Hz]"])
    r1_cyc, r5_cyc = r1_ms * 1e-3 * r1_hz, r5_ms * 1e-3 * r5_hz
    tp_ms, tp_cyc = (r5_ms - r1_ms) / 4, (r5_cyc - r1_cyc) / 4
    s_ms = float(sampled["duration [s]"]) * 1e3
    rows = [
        ("ncu, per launch (each alone)", n_ms, n_hz, ncu_cycles),
        ("range, 1 launch", r1_ms, r1_hz, r1_cyc),
        ("range, 5 launches, per launch", r5_ms / 5, r5_hz, r5_cyc / 5),
        ("range, two-point (launches 2 to 5)", tp_ms, tp_cyc / (tp_ms * 1e-3), tp_cyc),
        ("sampled, 1 launch (.ref window)", ref_ms, float("nan"), float("nan")),
        ("sampled, two-point (launches 2 to 5)", s_ms, float("nan"), float("nan")),
    ]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["measurement", "duration [ms]", "sm clock [MHz]", "cycles [M]", "duration/ncu", "cycles/ncu",
                "clock for ncu's cycles [MHz]"])
    for name, ms, hz, cyc in rows:
        w.writerow([name, f"{ms:.3f}", f"{hz / 1e6:.1f}" if hz == hz else "",
                    f"{cyc / 1e6:.3f}" if cyc == cyc else "", f"{ms / n_ms:.4f}",
                    f"{cyc / ncu_cycles:.4f}" if cyc == cyc else "", f"{ncu_cycles / (ms * 1e-3) / 1e6:.1f}"])


if __name__ == "__main__":
    main()
