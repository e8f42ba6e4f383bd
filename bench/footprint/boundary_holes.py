#!/usr/bin/env python3
"""Holes in a 0.1 ms sample stream set beside the GPU programs' starts and ends and the decode
passes around them (docs/footprint.md#the-decode-image). Run by bench/footprint/pm_boundary_check.sh.

  boundary_holes.py recording GPU0.DSREC          (a `diescope run` recording made with
                                                   DIESCOPE_SAMPLER_TIMING=1: its chip lines, its
                                                   marks and the child's timing-pass notes)
  boundary_holes.py minimal PM_MINIMAL.ERR BOUNDS  (pm_minimal --pass-log's hole and pass lines, and
                                                   the workloads' `start|stop NAME NS` lines)

Prints two tables, each line tab-separated and tagged in its first field:
  hole   from_ns to_ns ms  nearest_event  event_to_hole_ms  passes
         (nearest_event: the workload start or stop closest to the hole's start; passes: every noted
         decode pass whose call began within 300 ms of the hole, as
         drain/pass@call_began_ms_from_hole+call_ms:stop:completed[first_ms..last_ms], times from the
         hole's start)
  pass   drain pass call_began_ns call_ms stop completed populated first_start_ns last_end_ns
         nearest_event event_to_call_ms read_after_call_ms image since_ms
         (read_after_call_ms: the last sample read ended this long after the call began, how long the
         driver held the call before reading the buffer; image and since_ms, the child's only: the
         samples its image held and the time since the decode call before)
and a `summary` line: holes, hole_ms, noted passes, full passes, the longest call and its event.
"""
import sys


def kv(words):
    return dict(zip(words[0::2], words[1::2]))


def read_recording(path):
    chips, events, passes = [], [], []
    with open(path) as f:
        for line in f:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "chip":
                v = rest.split()
                chips.append((int(v[0]), int(v[1])))
            elif kind == "mark":
                w = rest.split()
                events.append((int(w[0]), w[1] + (" " + w[2] if len(w) > 2 else "")))
            elif kind == "note":
                w = rest.split(" ", 2)
                if len(w) == 3 and w[1] == "timing-pass":
                    passes.append(kv(w[2].split()))
    holes = []
    s = chips[1:]  # the first sample spans the setup
    iv = min((b - a for a, b in s[: min(len(s), 1000)] if b > a), default=100_000)
    for (a0, a1), (b0, _b1) in zip(s, s[1:]):
        if b0 - a1 > iv / 2:
            holes.append((a1, b0))
    return holes, events, passes


def read_minimal(err_path, bounds_path):
    holes, passes, events = [], [], []
    with open(err_path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "hole":
                d = kv(w[1:])
                holes.append((int(d["from_ns"]), int(d["to_ns"])))
            elif w and w[0] == "pass":
                passes.append(kv(w[1:]))
    with open(bounds_path) as f:
        for line in f:
            w = line.split()
            if len(w) == 3:
                events.append((int(w[2]), w[0] + " " + w[1]))
    return holes, events, passes


def nearest(events, t):
    if not events:
        return "none", float("nan")
    e = min(events, key=lambda ev: abs(ev[0] - t))
    return e[1], (t - e[0]) / 1e6


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("recording", "minimal"):
        sys.exit("usage: boundary_holes.py recording GPU0.DSREC | minimal PM_MINIMAL.ERR BOUNDS")
    if sys.argv[1] == "recording":
        holes, events, passes = read_recording(sys.argv[2])
    else:
        holes, events, passes = read_minimal(sys.argv[2], sys.argv[3])
    print("\t".join(["table", "from_ns", "to_ns", "ms", "nearest_event", "event_to_hole_ms", "passes"]))
    for a, b in holes:
        near, off = nearest(events, a)
        around = []
        for p in passes:
            began = int(p["call_began_ns"])
            if abs(began - a) <= 300_000_000:
                first, last = int(p["first_start_ns"]), int(p["last_end_ns"])
                around.append("%s/%s@%.1f+%.1f:%s:%s[%.1f..%.1f]" % (
                    p["drain"], p["pass"], (began - a) / 1e6, int(p["call_us"]) / 1e3, p["stop"], p["completed"],
                    (first - a) / 1e6 if first else float("nan"), (last - a) / 1e6 if last else float("nan")))
        print("\t".join(["hole", str(a), str(b), "%.3f" % ((b - a) / 1e6), near, "%.1f" % off, " ".join(around)]))
    print("\t".join(["table", "drain", "pass", "call_began_ns", "call_ms", "stop", "completed", "populated",
                     "first_start_ns", "last_end_ns", "nearest_event", "event_to_call_ms", "read_after_call_ms",
                     "image", "since_ms"]))
    longest = None
    for p in passes:
        began = int(p["call_began_ns"])
        near, off = nearest(events, began)
        call_ms = int(p["call_us"]) / 1e3
        if longest is None or call_ms > longest[0]:
            longest = (call_ms, near, off)
        # The last sample read ended this long after the call began: how long the driver held the call
        # before it read the hardware buffer.
        read_after = (int(p["last_end_ns"]) - began) / 1e6 if int(p["last_end_ns"]) else float("nan")
        since = "%.1f" % (int(p["since_us"]) / 1e3) if "since_us" in p else ""
        print("\t".join(["pass", p["drain"], p["pass"], p["call_began_ns"], "%.3f" % call_ms, p["stop"],
                         p["completed"], p["populated"], p["first_start_ns"], p["last_end_ns"], near,
                         "%.1f" % off, "%.1f" % read_after, p.get("image", ""), since]))
    full = sum(1 for p in passes if p["stop"] == "full")
    print("\t".join(["summary", "holes %d" % len(holes), "hole_ms %.3f" % (sum(b - a for a, b in holes) / 1e6),
                     "noted_passes %d" % len(passes), "full_passes %d" % full,
                     "longest_call_ms %.3f near %s (%.1f ms)" % longest if longest else "longest_call_ms none"]))


if __name__ == "__main__":
    main()
