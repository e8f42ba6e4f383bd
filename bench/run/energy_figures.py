#!/usr/bin/env python3
"""The energy figures of `diescope run` reports, one row per span, with how many power lines each
recording holds (docs/energy.md#what-is-recorded): to set builds that read NVML's power line at
different cadences side by side (bench/run/nvml_cadence.sh). Any machine.

    bench/run/energy_figures.py LABEL=RECORDING ...     (the report is RECORDING.report/report.json)

Prints CSV: label, span (run, window), energy_j, energy_source, mean_power_w, covered_s, coverage_pct,
stranded_j, joules_per_tflop, power_lines, power_lines_per_s.
"""
import json
import sys


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("label,span,energy_j,energy_source,mean_power_w,covered_s,coverage_pct,stranded_j,joules_per_tflop,"
          "power_lines,power_lines_per_s")
    for arg in sys.argv[1:]:
        label, path = arg.split("=", 1)
        with open(path) as f:
            times = [int(line.split()[1]) for line in f if line.startswith("power ")]
        with open(path + ".report/report.json") as f:
            report = json.load(f)
        per_s = (len(times) - 1) / ((times[-1] - times[0]) / 1e9) if len(times) > 1 else float("nan")
        spans = [("run", report["results"])]
        if (report.get("window") or {}).get("results"):
            spans.append(("window", report["window"]["results"]))
        for span, results in spans:
            e = results.get("energy") or {}
            row = [label, span] + [e.get(k) for k in ("energy_j", "energy_source", "mean_power_w", "covered_s",
                                                      "coverage_pct", "stranded_j", "joules_per_tflop")]
            row += [len(times), round(per_s, 3)]
            print(",".join("" if v is None else str(v) for v in row))


if __name__ == "__main__":
    main()
