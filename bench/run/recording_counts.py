#!/usr/bin/env python3
"""What a diescope recording holds, one CSV row per recording.

    recording_counts.py NAME=RECORDING[.gz] ...

Columns: chip samples, those without values (nan: split by a drain or otherwise unread), util
(GPU-Util readings), engine readings, notes of chip samples lost (gaps) and of overflow, the run's length (meta's start to the `end`
record), and how long after the `end` record the counters went off (`counters ... off`).
"""
import gzip
import json
import sys


def lines(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def main():
    print("name,chip_samples,chip_without_values,util,engine,gap_notes,overflow_notes,run_s,counters_off_ms_after_end")
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        n = {"chip": 0, "nan": 0, "util": 0, "engine": 0, "gap": 0, "overflow": 0}
        start = end = off = None
        for line in lines(path):
            f = line.split()
            kind = f[0] if f else ""
            if kind == "chip":
                n["chip"] += 1
                n["nan"] += any(x == "nan" for x in f[3:])
            elif kind in ("util", "engine"):
                n[kind] += 1
            elif kind == "note":
                text = " ".join(f[3:]).lower()
                n["gap"] += "samples lost" in text
                n["overflow"] += "overflow" in text
            elif kind == "meta":
                start = json.loads(line.split(" ", 1)[1])["start_ns"]
            elif kind == "end":
                end = int(f[1])
            elif kind == "counters" and f[2] == "off":
                off = int(f[1])
        run_s = f"{(end - start) / 1e9:.1f}" if start is not None and end is not None else ""
        off_ms = f"{(off - end) / 1e6:.0f}" if off is not None and end is not None else ""
        print(f"{name},{n['chip']},{n['nan']},{n['util']},{n['engine']},{n['gap']},{n['overflow']},{run_s},{off_ms}")


if __name__ == "__main__":
    main()
