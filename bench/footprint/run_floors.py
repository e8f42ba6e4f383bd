#!/usr/bin/env python3
"""The floors under `diescope run`'s sampler child, GPU idle (run through bench/footprint/run_cpu_floors.sh):

    run_floors.py OUT_DIR WORK_DIR       (BIN: pm_minimal, bare_cuda and diescope there)

- CUPTI alone (bench/footprint/pm_minimal) with the child's settings at 10 ms and at 1 ms: the decode
  period (docs/footprint.md#the-decode-period: 1000 and 100 ms), the image's slack (30 ms, so a
  quarter period at 10 ms), a 20 MiB hardware buffer (the child's rule at both), decoding only and
  with evaluation; CPU of the whole process over its steady part from /proc/PID/stat (from a third
  of the run, at most 6 s, to 2 s before its end, as footprint.py's idle section reads the child),
  peak RSS and where it goes (smaps, mid-run);
- a bare CUDA program's RSS (bare_cuda).
Writes floors.tsv and floors_smaps.tsv; pm_minimal's own summary lines in floors.txt.
"""
import os
import subprocess
import sys
import time

import footprint as fp  # the same /proc readers as footprint.sh (its argv: OUT WORK)

SECONDS = float(os.environ.get("FLOORS_SECONDS", "20"))


def watched(label, argv, smaps, lines):
    """Runs argv for about SECONDS; returns its steady CPU % and peak RSS (MB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = fp.Watch(p.pid, t0)
    a, b = min(6, SECONDS / 3), SECONDS - 2
    took_smaps = False
    while p.poll() is None:
        w.poll()
        el = time.monotonic() - t0
        if el >= a and "a" not in w.marks:
            w.mark("a")
        if el >= b and "b" not in w.marks:
            w.mark("b")
        if not took_smaps and el >= (a + b) / 2:
            smaps.extend(fp.smaps_rows(label, p.pid))
            took_smaps = True
        time.sleep(0.2)
    out, err = p.communicate()
    lines.append(label + " | " + (out.strip() or err.strip()))
    cpu = w.pct("a", "b") if "a" in w.marks and "b" in w.marks else float("nan")
    return cpu, w.peak


def main():
    metrics = fp.hopper_metrics()
    rows, smaps, lines = [], [], ["metrics=" + metrics]
    pm = fp.exe("pm_minimal")
    for interval, period in (("10", "1000"), ("1", "100")):
        for evaluate in (False, True):
            label = f"pm_minimal {interval} ms" + (", evaluating" if evaluate else ", decoding only")
            argv = [pm, "--metrics", metrics, "--interval-ms", interval, "--drain-ms", period, "--slack-ms", "30",
                    "--hw-buffer-mb", "20", "--seconds", str(SECONDS)] + (["--evaluate"] if evaluate else [])
            cpu, rss = watched(label, argv, smaps, lines)
            rows.append([label, fp.fmt(cpu, 3), fp.fmt(rss, 1)])
    cpu, rss = watched("bare_cuda", [fp.exe("bare_cuda"), "--seconds", str(SECONDS)], smaps, lines)
    rows.append(["bare_cuda", fp.fmt(cpu, 3), fp.fmt(rss, 1)])
    fp.tsv("floors.tsv", ["program", "cpu_pct_steady", "peak_rss_mb"], rows)
    fp.tsv("floors_smaps.tsv", ["program", "mapped", "rss_mb"], smaps)
    fp.write("floors.txt", "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
