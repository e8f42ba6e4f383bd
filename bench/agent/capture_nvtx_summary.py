#!/usr/bin/env python3
"""Summarises a run of bench/agent/capture_nvtx_interval.sh: OUT WORK.

Writes OUT/records.txt (each record's interval, window and figures), OUT/capture.json,
OUT/report-capture.json (the report's capture block and the results' coverage), OUT/nvtx-by-name.txt
(from the capture's nvtx.csv) and OUT/checks.txt: the chip samples expected at the capture's interval
against those received, the NVTX ranges, which of their names report.html shows, and the trace's NVTX
slices.
"""
import csv
import glob
import json
import os
import sys


def main():
    out, work = sys.argv[1], sys.argv[2]
    lines = []
    with open(f"{out}/records.txt", "w") as f:
        f.write("period_s window_s interval_ms counters_on_s gpu_util die_util coverage samples_used\n")
        for l in open(f"{work}/agent.ndjson"):
            try:
                r = json.loads(l)
            except ValueError:
                continue
            if "period" not in r or "chip" not in r:
                continue
            p, w, c = r["period"], r["window"], r["chip"]
            ws = (w["end_ns"] - w["start_ns"]) / 1e9 if w.get("start_ns") else float("nan")
            f.write(f'{(p["end_ns"] - p["start_ns"]) / 1e9:.1f} {ws:.2f} {r["settings"]["interval_ms"]} '
                    f'{r["counters_on_s"]:.2f} {r["gpu_util"]["pct"]} {c["die_util_pct"]} {c["coverage_pct"]} '
                    f'{c["samples_used"]}\n')
    folders = sorted(glob.glob(f"{work}/captures/*/"))
    if not folders:
        lines.append("no capture folder")
    else:
        cap = folders[-1]
        summary = json.load(open(f"{cap}/capture.json"))
        json.dump(summary, open(f"{out}/capture.json", "w"), indent=2)
        rep = json.load(open(f"{cap}/report.json"))
        res = rep["results"]
        json.dump({"capture": rep["capture"], "results": {k: res.get(k) for k in (
            "die_util_pct", "gpu_util_pct", "chip_coverage_pct", "chip_coverage_gate", "chip_covered_s",
            "chip_scheduled_s")}},
            open(f"{out}/report-capture.json", "w"), indent=2)
        cs = summary.get("chip_samples") or {}
        lines.append(f"capture {os.path.basename(cap.rstrip('/'))}: state {summary['state']}, interval "
                     f"{summary['interval_ms']} ms (the live session's interval: {summary['session_interval_ms']} ms)")
        if cs:
            lines.append(f"chip samples from +{cs['from_s']:.2f} s to the end: expected {cs['expected']:.0f}, "
                         f"received {cs['received']} ({100 * cs['received'] / max(cs['expected'], 1):.2f}%)")
        lines.append(f"nvtx: {summary['nvtx']}")
        for n in summary.get("notes", []):
            lines.append(f"note: {n}")
        by = {}
        if os.path.exists(f"{cap}/nvtx.csv"):
            for row in csv.DictReader(open(f"{cap}/nvtx.csv")):
                b = by.setdefault(row["name"], [0, 0.0])
                b[0] += 1
                b[1] += float(row["duration_ms"])
        with open(f"{out}/nvtx-by-name.txt", "w") as f:
            f.write("name count total_ms mean_ms\n")
            for name, (n, tot) in sorted(by.items(), key=lambda kv: -kv[1][1]):
                f.write(f"{name} {n} {tot:.1f} {tot / n:.3f}\n")
        page = open(f"{cap}/report.html").read()
        named = sorted(n for n in by if f"<td>{n}</td>" in page)
        lines.append(f"report.html names {len(named)} of {len(by)} range names: {' '.join(named)}")
        trace = json.load(open(f"{cap}/trace.json"))
        slices = sum(1 for e in trace["traceEvents"] if e.get("pid") == 3 and e.get("ph") == "X")
        lines.append(f"trace.json: {slices} NVTX slices")
        lines.append(f"report: DIE-Util {res.get('die_util_pct')}, GPU-Util {res.get('gpu_util_pct')}, "
                     f"chip coverage {res.get('chip_coverage_pct')} ({res.get('chip_coverage_gate')})")
    open(f"{out}/checks.txt", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
