#!/usr/bin/env python3
"""`diescope run`'s loop part by part, from the `run-timing` notes that run_cpu_floors.sh gathers in
timing.txt (docs/footprint.md#runs-own-parts): for each timed run and part, the calls, CPU in all,
CPU a call and the share of one core; NVML's reads by the set they made (u GPU-Util samples, c clocks
and reasons, p the power line, e engines, r process lists, h holders).

    run_parts.py TIMING_TXT > parts.tsv
"""
import sys


def main():
    rows = [["interval_ms", "part", "calls", "cpu_ms", "us_per_call", "pct_of_core"]]
    interval = None
    for line in open(sys.argv[1]):
        words = line.split()
        if words[:1] == ["interval_ms"]:
            interval = words[1]
            continue
        if len(words) < 4 or words[2] != "run-timing":
            continue
        kv = words[3:]
        head = dict(zip(kv[0:16:2], kv[1:16:2]))
        seconds = float(head["seconds"])
        parts = kv[16:]
        rows.append([interval, "process (getrusage)", "", f"{int(head['process_cpu_us']) / 1000:.1f}", "",
                     f"{int(head['process_cpu_us']) / 1e4 / seconds:.3f}"])
        rows.append([interval, "loop thread, all parts", head["wakes"], f"{int(head['loop_cpu_us']) / 1000:.1f}", "",
                     f"{int(head['loop_cpu_us']) / 1e4 / seconds:.3f}"])
        for i in range(0, len(parts) - 2, 3):
            name, calls, cpu_us = parts[i], int(parts[i + 1]), int(parts[i + 2])
            rows.append([interval, name, calls, f"{cpu_us / 1000:.1f}", f"{cpu_us / calls:.1f}" if calls else "",
                         f"{cpu_us / 1e4 / seconds:.3f}"])
        rows.append([interval, "clock reads (the timing's own cost)", head["clock_reads"],
                     f"{int(head['clock_reads']) * int(head['clock_read_ns']) / 1e6:.1f}", "",
                     f"{int(head['clock_reads']) * int(head['clock_read_ns']) / 1e7 / seconds:.3f}"])
    print("\n".join("\t".join(str(x) for x in r) for r in rows))


if __name__ == "__main__":
    main()
