#!/usr/bin/env python3
"""bench/roofline/resnet50_bytes.py and gemm_power_clock.py on canned outputs: the region each ncu
launch belongs to, ncu's units, the profiled step's rows, and the ratios and two-point cycles, each
expected value worked out by hand below. No GPU, no ncu.

    roofline_comparisons_test.py REPO
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

REPO = sys.argv[1]
PUSH = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum", "gpu__time_duration.sum"]
failures = []


def check(what, got, want, tol=1e-9):
    ok = abs(float(got) - want) <= tol * max(1.0, abs(want)) if isinstance(want, float) else got == want
    if not ok:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def write_ncu(path, launches):
    """An ncu raw page as `ncu --import --csv --page raw` writes it: a note, the header, units, rows."""
    with open(path, "w") as f:
        f.write("==PROF== a note ncu prints before the table\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(["ID", PUSH, START, "Kernel Name"] + METRICS)
        w.writerow(["", "", "", "", "Mbyte", "Kbyte", "Mbyte", "us"])
        for i, (push, start, vals) in enumerate(launches):
            w.writerow([str(i), push, start, f"k{i}"] + vals)


def push(name):
    return f'855  "<default domain>:{name}:none:none:none:none:none:none" '


def start(name):
    return f' "2:<default domain>:{name}:none:none:none:none:none:none" '


def write_table(path, rows):
    cols = ["profiler", "region", "launches", "duration [s]", "sm clock [Hz]", "bytes dram [B]"]
    with open(path, "w") as f:
        w = csv.DictWriter(f, cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(dict(zip(cols, r)))


def run(script, d):
    p = subprocess.run([sys.executable, os.path.join(REPO, "bench/roofline", script), d], capture_output=True,
                       text=True)
    if p.returncode:
        failures.append(f"{script} exited {p.returncode}: {p.stderr}")
        return []
    return list(csv.DictReader(io.StringIO(p.stdout)))


def resnet50_bytes():
    with tempfile.TemporaryDirectory() as d:
        # Flushed: forward is two push/pop launches, backward one start/end launch (a start/end range
        # around a launch that also has a push/pop range would go to the push/pop one).
        write_ncu(os.path.join(d, "ncu-all.csv"), [
            (push("forward"), "", ["1,000", "500", "1.5", "100"]),
            (push("forward"), "", ["2", "250", "2.25", "50"]),
            ("", start("backward"), ["4", "1000", "5", "200"]),
        ])
        write_ncu(os.path.join(d, "ncu-none.csv"), [
            (push("forward"), "", ["0.5", "1000", "1.5", "100"]),
            (push("forward"), "", ["1", "1500", "2.5", "50"]),
            ("", start("backward"), ["3", "3000", "6", "200"]),
        ])
        # Three steps; the third rows are the profiled step's. The sampled table lacks a backward row
        # in one step, so its backward has none.
        rows = []
        for step in (1, 2, 3):
            rows.append(["range", "forward", "2", "0.001", "1.9e9", str(4e6 + step * 1e5)])
            rows.append(["range", "backward", "1", "0.002", "1.9e9", str(6e6 * step)])
        write_table(os.path.join(d, "range.csv"), rows)
        write_table(os.path.join(d, "sampled.csv"), [
            ["sampled", "forward", "2", "0.0011", "", "4.4e6"], ["sampled", "backward", "1", "0.002", "", "1"],
            ["sampled", "forward", "2", "0.0012", "", "4.2e6"], ["sampled", "forward", "2", "0.0013", "", "4.0e6"]])
        with open(os.path.join(d, "split-range.txt"), "w") as f:
            f.write("diescope-range\t1\nmetrics\t" + "\t".join(METRICS) + "\n")
            for occ in (2, 3):
                f.write(f"row\tforward\t{occ}\t1\t2\tk\t0\t1\t{1.6e6 * occ}\t{1.2e6}\t{1.2e6 + 1.6e6 * occ}\t{1e6}\n")
        out = {(r["region"], r["measure"]): r for r in run("resnet50_bytes.py", d)}
    fwd = out[("forward", "dram bytes [B]")]
    # ncu flushed: 1.5 + 2.25 Mbyte = 3.75e6 B; unflushed 1.5 + 2.5 = 4.0e6 B.
    check("forward ncu (all) bytes", float(fwd["ncu (all)"]), 3.75e6)
    check("forward ncu (none) bytes", float(fwd["ncu (none)"]), 4.0e6)
    check("forward none/all", fwd["ncu (none)/ncu (all)"], f"{4.0 / 3.75:.4f}")
    # Step 3's rows: range 4.3e6, sampled 4.0e6, the split run's occurrence 3: 1.2e6 + 4.8e6 = 6.0e6.
    check("forward range (step 3)", float(fwd["range"]), 4.3e6)
    check("forward sampled (step 3)", float(fwd["sampled"]), 4.0e6)
    check("forward range split (occurrence 3)", float(fwd["range split"]), 6.0e6)
    check("forward sampled/ncu (none)", fwd["sampled/ncu (none)"], "1.0000")
    check("forward sampled/range", fwd["sampled/range"], f"{4.0 / 4.3:.4f}")
    rd = out[("forward", "dram read [B]")]
    # Reads: "1,000" Mbyte (a thousands separator) + 2 Mbyte = 1.002e9 B.
    check("forward ncu (all) read", float(rd["ncu (all)"]), 1.002e9)
    check("forward range split read", float(rd["range split"]), 4.8e6)
    wr = out[("forward", "dram write [B]")]
    check("forward ncu (all) write, Kbyte", float(wr["ncu (all)"]), 750e3)
    dur = out[("forward", "duration [s]")]
    check("forward ncu time, us", float(dur["ncu (all)"]), 150e-6)
    check("forward range split time, ns", float(dur["range split"]), 1e6 * 1e-9)
    bwd = out[("backward", "dram bytes [B]")]
    check("backward, a start/end launch", float(bwd["ncu (all)"]), 5e6)
    check("backward range (step 3)", float(bwd["range"]), 18e6)
    check("backward sampled: fewer rows than steps", bwd["sampled"], "")
    check("backward range/ncu (none)", bwd["range/ncu (none)"], "3.0000")
    check("launches", out[("forward", "launches")]["ncu (all)"], "2")


def gemm_power_clock():
    with tempfile.TemporaryDirectory() as d:
        # ncu: 2 launches of 25 ms at 1800 MHz: 45e6 cycles each. Range: one launch of 25 ms at
        # 1800 MHz (45e6 cycles); five launches in 130 ms at 1700 MHz (221e6 cycles).
        write_table(os.path.join(d, "ncu.csv"), [["ncu", "gemm", "2", "0.050", "1.8e9", "1"]])
        write_table(os.path.join(d, "range-1.csv"), [["range", "gemm", "1", "0.025", "1.8e9", "1"]])
        write_table(os.path.join(d, "range-5.csv"), [["range", "gemm", "5", "0.130", "1.7e9", "1"]])
        write_table(os.path.join(d, "sampled.csv"), [["sampled", "gemm", "1", "0.0275", "", "1"]])
        with open(os.path.join(d, "regions.ref.sampled-windows.tsv"), "w") as f:
            f.write("# constants\nregion\toccurrence\twindow_start_ms\twindow_ms\tactive_ms\tmean\tbytes\tkind\n")
            f.write("gemm\t1\t0\t25.5\t25.0\t98\t1\tkernel\n")
            f.write("gemm\t1\t30\t1.0\t0.7\t40\t1\tdata movement\n")
        out = {r["measurement"]: r for r in run("gemm_power_clock.py", d)}
    tp = out["range, two-point (launches 2 to 5)"]
    # (130 - 25) / 4 = 26.25 ms; cycles (221e6 - 45e6) / 4 = 44e6; clock 44e6 / 26.25e-3 = 1676.2 MHz.
    check("two-point duration", tp["duration [ms]"], "26.250")
    check("two-point cycles", tp["cycles [M]"], "44.000")
    check("two-point clock", tp["sm clock [MHz]"], "1676.2")
    check("two-point cycles/ncu", tp["cycles/ncu"], f"{44 / 45:.4f}")
    five = out["range, 5 launches, per launch"]
    check("five per launch", five["duration [ms]"], "26.000")
    ref = out["sampled, 1 launch (.ref window)"]
    # Only the kernel window counts: 25.0 ms; the clock ncu's cycles need in 27.5 ms: 45e6 / 27.5e-3.
    check("sampled one launch", ref["duration [ms]"], "25.000")
    check("sampled two-point clock needed", out["sampled, two-point (launches 2 to 5)"]["clock for ncu's cycles [MHz]"],
          f"{45e6 / 27.5e-3 / 1e6:.1f}")


resnet50_bytes()
gemm_power_clock()
for f in failures:
    print("FAIL", f)
print(f"{'FAILED' if failures else 'passed'}: roofline comparison scripts")
sys.exit(1 if failures else 0)
