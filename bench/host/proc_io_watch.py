#!/usr/bin/env python3
"""What /proc shows of a process tree's own I/O, read the way diescope's process probe reads it
(docs/method.md#host-probes), to see what a machine provides: every --interval-ms until the root exits,
each process's /proc/PID/io (read_bytes, rchar), its threads' states (how many in D) and each thread's
delayacct_blkio_ticks (field 42 of /proc/PID/task/TID/stat). Prints a header line with what the
kernel offers (kernel.task_delayacct, whether schedstat exists), then one summary line per process.

  proc_io_watch.py --pid PID [--interval-ms 100]
"""
import argparse
import json
import os
import time


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def tree(root):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        s = read(f"/proc/{d}/stat")
        if not s:
            continue
        ppid = int(s[s.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--interval-ms", type=float, default=100)
    a = ap.parse_args()
    hz = os.sysconf("SC_CLK_TCK")
    print(json.dumps({"task_delayacct": (read("/proc/sys/kernel/task_delayacct") or "absent").strip(),
                      "schedstat": os.path.exists(f"/proc/{a.pid}/schedstat"),
                      "io": read(f"/proc/{a.pid}/io") is not None, "clk_tck": hz}), flush=True)
    procs = {}
    samples = 0
    while os.path.exists(f"/proc/{a.pid}"):
        samples += 1
        for pid in tree(a.pid):
            p = procs.setdefault(pid, {"name": "", "read_bytes": [], "rchar": [], "d_samples": 0,
                                       "samples": 0, "blkio_ticks": {}, "states": {}})
            io = read(f"/proc/{pid}/io")
            if io:
                f = dict(line.split(": ") for line in io.strip().splitlines())
                p["read_bytes"].append(int(f.get("read_bytes", 0)))
                p["rchar"].append(int(f.get("rchar", 0)))
            p["samples"] += 1
            any_d = False
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                s = read(f"/proc/{pid}/task/{tid}/stat")
                if not s:
                    continue
                close = s.rindex(")")
                p["name"] = s[s.index("(") + 1:close]
                rest = s[close + 2:].split()
                state = rest[0]
                p["states"][state] = p["states"].get(state, 0) + 1
                any_d = any_d or state == "D"
                if len(rest) > 39:  # field 42 overall = rest[39]
                    p["blkio_ticks"][tid] = int(rest[39])
            p["d_samples"] += any_d
        time.sleep(a.interval_ms / 1e3)
    for pid, p in procs.items():
        rb, rc = p["read_bytes"], p["rchar"]
        print(json.dumps({"pid": pid, "name": p["name"], "samples": p["samples"],
                          "read_bytes": rb[-1] - rb[0] if rb else None,
                          "rchar": rc[-1] - rc[0] if rc else None,
                          "share_of_samples_with_a_thread_in_D": round(p["d_samples"] / max(1, p["samples"]), 3),
                          "thread_states_seen": p["states"],
                          "blkio_seconds_total": sum(p["blkio_ticks"].values()) / hz}), flush=True)


if __name__ == "__main__":
    main()
