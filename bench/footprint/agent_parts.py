#!/usr/bin/env python3
"""The agent's CPU and wake-ups with parts turned off, 25 s each (PARTS_SECONDS) after 2 s: what each part costs.

    agent_parts.py DIESCOPE OUT_FILE [SET ...]   (appends one line per run; a SET is the arguments of one
                                                  run, e.g. "--host-interval-ms 0 --source pm"; default
                                                  --host-interval-ms 0, and with --no-attribution)
"""
import os, subprocess, sys, time
binary, out = sys.argv[1], sys.argv[2]
tck = os.sysconf("SC_CLK_TCK")
def cpu(p):
    rest = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / tck
def wakes(p):
    n = 0
    for t in os.listdir(f"/proc/{p}/task"):
        for line in open(f"/proc/{p}/task/{t}/status"):
            if "ctxt_switches" in line:
                n += int(line.split()[1])
    return n
with open(out, "a") as f:
    sets = [a.split() for a in sys.argv[3:]] or [["--host-interval-ms", "0"], ["--host-interval-ms", "0", "--no-attribution"]]
    for args in sets:
        a = subprocess.Popen([binary, "agent", "--no-db", "--no-listen"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
        t0, c0, w0 = time.monotonic(), cpu(a.pid), wakes(a.pid)
        time.sleep(float(os.environ.get("PARTS_SECONDS", "25")))
        t1, c1, w1 = time.monotonic(), cpu(a.pid), wakes(a.pid)
        a.terminate(); a.wait(20)
        f.write(f"agent {' '.join(args)}: cpu_pct={100*(c1-c0)/(t1-t0):.3f} wakeups_per_s={(w1-w0)/(t1-t0):.2f}\n")
