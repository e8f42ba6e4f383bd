#!/usr/bin/env python3
"""One row per screen that bench/top/live_minute.sh read: time, chip source, GPU-Util, DIE-Util, gap,
limiting unit, SM clock, power, throttle reasons and processes, as the screen showed them (GPU 0).

    frames_table.py FRAMES.txt [--select T1,T2,...]   # a Markdown table; --select: also print those screens
"""
import re
import sys


def frames(path):
    current, t = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = re.match(r"=== t=\s*([0-9.]+)", line)
        if m:
            if t is not None:
                yield t, current
            t, current = float(m.group(1)), []
        else:
            current.append(line)
    if t is not None:
        yield t, current


def field(pattern, lines, default="n/a"):
    for line in lines:
        m = re.search(pattern, line)
        if m:
            return m.group(1).strip()
    return default


def main():
    path = sys.argv[1]
    select = []
    if len(sys.argv) > 3 and sys.argv[2] == "--select":
        select = [float(x) for x in sys.argv[3].split(",")]
    print("| t (s) | chip figures | GPU-Util | DIE-Util | gap (points) | limiting unit | SM clock | power | throttle | processes |")
    print("| ---: | --- | ---: | ---: | ---: | --- | --- | --- | --- | --- |")
    chosen = []
    for t, lines in frames(path):
        row = [
            f"{t:.1f}",
            field(r"chip figures: (.*)$", lines),
            field(r"^  GPU-Util\s+(\S+%|n/a)", lines),
            field(r"^  DIE-Util\s+(\S+%|n/a)", lines),
            field(r"^  gap\s+(\S+) points", lines),
            field(r"limiting unit: (.*)$", lines, "-"),
            field(r"^  SM (\S+ MHz)", lines),
            field(r"· (power [^·]*)·", lines),
            field(r"throttle: (.*)$", lines),
            field(r"^  processes: (.*)$", lines),
        ]
        print("| " + " | ".join(row) + " |")
        if any(abs(t - s) < 0.05 for s in select):
            chosen.append((t, lines))
    for t, lines in chosen:
        while lines and not lines[-1].strip():
            lines.pop()
        print(f"\n=== t={t:.1f}")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
