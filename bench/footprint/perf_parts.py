#!/usr/bin/env python3
"""Where the agent's CPU goes, from `perf record -g` samples of its process (docs/footprint.md#the-agents-own-cost).

    perf record -F 15000 --call-graph dwarf,16384 -p AGENT_PID -o perf.data -- sleep 62
    perf script -i perf.data -F tid,ip,sym | bench/footprint/perf_parts.py > parts.txt

Each sample goes to the first part (in the order below) whose function is anywhere in its stack; the
loop's wait in poll() and the power source's read are counted apart from the rest of its step. Prints
one line a part: its share of the samples, and the samples.
"""
import collections
import re
import sys

PARTS = [
    ("profiler scan", r"ProfilerWatch::scan"),
    ("host probes: read", r"HostMetrics::read|HostProbes|KeptFile::read"),
    ("host probes: publish", r"HostMetrics"),
    ("sampler child", r"Sampler|sampler|posix_spawn|execve|fork"),
    ("attribution", r"attribution::"),
    ("store", r"sqlite|Store"),
    ("http", r"http|Http"),
    ("power source", r"read_power_source|PowerSourceReader"),
    ("the loop's wait (poll)", r"LiveDriver::wait"),
    ("nvml", r"nvml|Nvml"),
    ("record and analysis", r"analysis::|AgentRecord|record"),
    ("the rest of the agent's step", r"diescope::"),
]


def samples(lines):
    frames = None
    for line in lines:
        if line.strip() and not line.startswith("\t"):
            if frames is not None:
                yield frames
            frames = []
        elif line.strip() and frames is not None:
            parts = line.strip().split(None, 1)
            frames.append(parts[1] if len(parts) > 1 else parts[0])
    if frames is not None:
        yield frames


def main():
    counts = collections.Counter()
    total = 0
    for frames in samples(sys.stdin):
        stack = " | ".join(frames)
        part = next((name for name, pattern in PARTS if re.search(pattern, stack)), "other (outside diescope)")
        counts[part] += 1
        total += 1
    print(f"samples {total}")
    for name, _ in PARTS + [("other (outside diescope)", "")]:
        print(f"{name:32s} {100 * counts[name] / max(total, 1):6.1f}% {counts[name]:7d}")


if __name__ == "__main__":
    main()
