#!/usr/bin/env python3
"""NVML's total energy counter read by a program of its own, beside diescope: every POLL_MS it calls
nvmlDeviceGetTotalEnergyConsumption (nvml_energy.py) and writes each change of the
counter as "TIME_NS MILLIJOULES" (CLOCK_REALTIME, the middle of the call), plus the first and the last
read, to OUTPUT, until SIGTERM or SIGINT. bench/energy/compare_jtflop.py reads the counter at any time
from it (the last value read at or before that time).

    nvml_energy_log.py OUTPUT [--index N] [--poll-ms MS]
"""
import argparse
import signal
import time

from nvml_energy import NvmlEnergy


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("output")
    p.add_argument("--index", type=int, default=0)
    p.add_argument("--poll-ms", type=float, default=1.0)
    args = p.parse_args()
    counter = NvmlEnergy(args.index, "nvml_energy_log")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    last = None
    with open(args.output, "w") as out:
        out.write("# time_ns energy_mj (NVML's total energy counter, each change)\n")
        t = mj = None
        while not stop:
            t0 = time.time_ns()
            read = counter.millijoules()
            t1 = time.time_ns()
            t, mj = (t0 + t1) // 2, read
            if mj != last:
                out.write("%d %d\n" % (t, mj))
                last = mj
            time.sleep(args.poll_ms / 1000.0)
        if t is not None:
            out.write("%d %d\n" % (t, mj))


if __name__ == "__main__":
    main()
