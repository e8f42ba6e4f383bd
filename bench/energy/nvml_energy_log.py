#!/usr/bin/env python3
"""NVML's total energy counter read by a program of its own, beside diescope: every POLL_MS it calls
nvmlDeviceGetTotalEnergyConsumption (through ctypes, libnvidia-ml.so.1) and writes each change of the
counter as "TIME_NS MILLIJOULES" (CLOCK_REALTIME, the middle of the call), plus the first and the last
read, to OUTPUT, until SIGTERM or SIGINT. bench/energy/compare_jtflop.py reads the counter at any time
from it (the last value read at or before that time).

    nvml_energy_log.py OUTPUT [--index N] [--poll-ms MS]
"""
import argparse
import ctypes
import signal
import sys
import time


def open_nvml(index):
    lib = None
    for name in ("libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        sys.exit("nvml_energy_log: libnvidia-ml.so.1 not found; run on a machine with the NVIDIA driver")
    if lib.nvmlInit_v2() != 0:
        sys.exit("nvml_energy_log: nvmlInit_v2 failed")
    handle = ctypes.c_void_p()
    if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle)) != 0:
        sys.exit("nvml_energy_log: no NVML device %d" % index)
    return lib, handle


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("output")
    p.add_argument("--index", type=int, default=0)
    p.add_argument("--poll-ms", type=float, default=1.0)
    args = p.parse_args()
    lib, handle = open_nvml(args.index)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    value = ctypes.c_ulonglong()
    last = None
    with open(args.output, "w") as out:
        out.write("# time_ns energy_mj (NVML's total energy counter, each change)\n")
        t = mj = None
        while not stop:
            t0 = time.time_ns()
            rc = lib.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(value))
            t1 = time.time_ns()
            if rc != 0:
                sys.exit("nvml_energy_log: nvmlDeviceGetTotalEnergyConsumption returned %d" % rc)
            t, mj = (t0 + t1) // 2, value.value
            if mj != last:
                out.write("%d %d\n" % (t, mj))
                last = mj
            time.sleep(args.poll_ms / 1000.0)
        if t is not None:
            out.write("%d %d\n" % (t, mj))


if __name__ == "__main__":
    main()
