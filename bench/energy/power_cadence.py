#!/usr/bin/env python3
"""The energy figures of recordings whose power line was read every 100 ms (diescope run before its
power line went to once a second: docs/energy.md#what-is-recorded), beside the same recordings with
the power lines thinned to run's cadence now: the first, one at least 0.95 s after the last kept,
the two around each window mark (standing for the read run now makes at the mark itself) and the
last (run reads one at the command's end). Everything else in each recording is kept as it is, so what differs is
the power line's cadence alone, with no run-to-run spread. Any machine; no GPU.

    PYTHONPATH=build/cpu-ci/python bench/energy/power_cadence.py OUT RECORDING...

Compares, per recording: the run's and the steady window's energy, mean power, coverage and stranded
energy (report.json's `energy`), and the energy of back-to-back spans of 0.5 s and 1.7 s (the
length of bench/energy/resnet50_steps.sh's steps) tiled over the steady window, where a program's
steps lie, and over the run (diescope.span_figures).
Writes OUT/spans.csv (every span), OUT/table.md (the figures) and OUT/thinned/*.dsrec.
"""
import csv
import math
import os
import statistics
import sys

import diescope

KEEP_AFTER_NS = 950_000_000  # NvmlCadence::run: 1 s, the tick nearest to it (half a 100 ms tick early counts)
SPAN_LENGTHS_S = (0.5, 1.7)


def thin(src, dst):
    """Copies src to dst with the power lines thinned; returns (lines before, lines after)."""
    with open(src) as f:
        lines = f.readlines()
    power = [i for i, line in enumerate(lines) if line.startswith("power ")]
    marks = [int(line.split()[1]) for line in lines if line.startswith("mark ")]
    times = {i: int(lines[i].split()[1]) for i in power}
    keep = set()
    last = None
    for i in power:
        if last is None or times[i] - last >= KEEP_AFTER_NS:
            keep.add(i)
            last = times[i]
    for m in marks:
        after = [i for i in power if times[i] >= m]
        before = [i for i in power if times[i] < m]
        if after:
            keep.add(after[0])
        if before:
            keep.add(before[-1])
    if power:
        keep.add(power[-1])
    with open(dst, "w") as f:
        for i, line in enumerate(lines):
            if i in power and i not in keep:
                continue
            f.write(line)
    return len(power), len(keep)


def energy(report, span):
    results = report["results"] if span == "run" else (report.get("window") or {}).get("results")
    return (results or {}).get("energy") or {}


def pct(a, b):
    return (b - a) / a * 100 if a and math.isfinite(a) and math.isfinite(b) else float("nan")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out, recordings = sys.argv[1], sys.argv[2:]
    os.makedirs(os.path.join(out, "thinned"), exist_ok=True)
    rows, span_rows = [], []
    for path in recordings:
        name = os.path.splitext(os.path.basename(path))[0]
        thinned = os.path.join(out, "thinned", name + ".dsrec")
        before_n, after_n = thin(path, thinned)
        full, fewer = diescope.read_recording(path).report, diescope.read_recording(thinned).report
        for span in ("run", "window"):
            a, b = energy(full, span), energy(fewer, span)
            if a.get("energy_j") is None:
                continue
            rows.append([name, span, before_n, after_n, a["energy_j"], b["energy_j"], pct(a["energy_j"], b["energy_j"]),
                         a["mean_power_w"], b["mean_power_w"], a["coverage_pct"], b["coverage_pct"],
                         a.get("stranded_j"), b.get("stranded_j")])
        with open(path) as f:
            lines = f.readlines()
        powers = [int(line.split()[1]) for line in lines if line.startswith("power ")]
        marks = [int(line.split()[1]) for line in lines if line.startswith("mark ")]
        over = [("run", powers[0], powers[-1])]
        if len(marks) >= 2:
            over.insert(0, ("window", marks[0], marks[1]))
        for where, first, last in over:
            for length in SPAN_LENGTHS_S:
                step = int(length * 1e9)
                starts = list(range(first, last - step + 1, step))
                ends = [s + step for s in starts]
                if not starts:
                    continue
                fa = diescope.span_figures(path, starts, ends)
                fb = diescope.span_figures(thinned, starts, ends)
                for k, s in enumerate(starts):
                    ja, jb = float(fa["energy_j"][k]), float(fb["energy_j"][k])
                    span_rows.append([name, where, length, k, s, ends[k], ja, jb, jb - ja, pct(ja, jb)])
    with open(os.path.join(out, "spans.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["recording", "tiled_over", "span_s", "span", "start_ns", "end_ns", "every_100ms_j", "thinned_j", "diff_j",
                    "diff_pct"])
        w.writerows(span_rows)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("| recording | span | power lines: 100 ms | thinned | energy J: 100 ms | thinned | difference % "
                "| mean W: 100 ms | thinned | coverage %: 100 ms | thinned | stranded J: 100 ms | thinned |\n")
        f.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for r in rows:
            f.write("| " + " | ".join(
                x if isinstance(x, str) else f"{x:.3f}" if isinstance(x, float) else str(x) for x in r) + " |\n")
        f.write("\n| recording | spans tiled over | span length, s | spans | median difference % "
                "| largest difference % | sum of spans: difference % |\n"
                "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
        groups = {}
        for r in span_rows:
            groups.setdefault((r[0], r[1], r[2]), []).append(r)
        for (name, where, length), g in groups.items():
            d = [abs(r[9]) for r in g if math.isfinite(r[9])]
            total = pct(sum(r[6] for r in g), sum(r[7] for r in g))
            f.write(f"| {name} | {where} | {length} | {len(g)} | {statistics.median(d) if d else float('nan'):.3f} "
                    f"| {max(d) if d else float('nan'):.3f} | {total:.4f} |\n")
    with open(os.path.join(out, "table.md")) as f:
        sys.stdout.write(f.read())


if __name__ == "__main__":
    main()
