"""The diescope Python module's reading half against the command line and against values worked out
by hand (docs/python.md#reading).

usage: read_test.py DIESCOPE_BINARY PYTHON_PACKAGE_PARENT SOURCE_DIR
Run under a Python with pandas, with DIESCOPE_FRAMES=table, and under one without numpy: every check
reads columns through column(), which works for all three.
"""
import csv
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

DIESCOPE, PACKAGE_PARENT, SOURCE_DIR = sys.argv[1:4]
del sys.argv[1:4]
sys.path.insert(0, PACKAGE_PARENT)
import diescope  # noqa: E402

BUNDLED = sorted(glob.glob(os.path.join(SOURCE_DIR, "data", "recordings", "h200", "*.dsrec")))
S = 1796000000000000000  # the synthetic recording's start, ns
MS = 1000000


def column(table, name):
    """A column as a list, from a DataFrame or a diescope.Table."""
    return list(table[name])


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def cli_report(path, out, *flags):
    """report.json and samples.csv as `diescope report` writes them for PATH."""
    subprocess.run([DIESCOPE, "report", path, "--output", out, "--format", "json,csv", *flags],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(out, "samples.csv")) as f:
        rows = list(csv.DictReader(f))
    return report, rows


def synthetic(folder, version=2):
    """A recording written by hand; the expected table values are worked out in the tests below.
    Version 4 adds the power draw and NVML's energy counter to its power lines."""
    meta = {
        "format_version": version, "tool_version": "0.1.0", "method": 3,
        "gpu": {"index": 0, "uuid": "GPU-synthetic", "model": "NVIDIA H200", "chip": "GH100",
                "driver": "580.159", "compute_capability": 90, "l2_bytes": 52428800, "sm_count": 132},
        "unit_table": "example",
        "units": [
            {"key": "fp32", "label": "FP32", "metric": "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed",
             "recipe": {"combine": "counter", "counters": ["sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed"]},
             "source": "chip", "flags": [], "note": "", "counted_by_gpu_util": True, "unit": "pct"},
            {"key": "dram", "label": "DRAM", "metric": "dram__bytes.sum.pct_of_peak_sustained_elapsed",
             "recipe": {"combine": "counter", "counters": ["dram__bytes.sum.pct_of_peak_sustained_elapsed"]},
             "source": "chip", "flags": [], "note": "", "counted_by_gpu_util": True, "unit": "pct"}],
        "diagnostics": [], "counts": [], "engines": [],
        "interval_ms": 100, "drain_ms": 1000, "gpu_util_resolution_pct": 1, "start_ns": S,
        "run_type": "single", "command": ["./train"], "host": "cpu", "duty_on_ms": 0, "duty_period_ms": 0,
        "host_interval_ms": 100}
    power = ["power %d 700" % S] if version < 4 else [
        "power %d 700 200 1000000" % S, "power %d 700 300 1050000" % (S + 200 * MS),
        "power %d 700 300 1110000" % (S + 400 * MS)]
    lines = [
        "diescope-recording %d" % version,
        "meta " + json.dumps(meta),
        "counters %d on" % S,
        *power,
        "clock %d 1980 2619" % S,
        "hstream %d 0 cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed throughput pct system 100" % S,
        "hstream %d 1 proc__cycles_active.sum.per_second counter pct process:4242 400" % S,
        "chip %d %d 10 20" % (S, S + 100 * MS),
        "chip %d %d 50 30" % (S + 100 * MS, S + 200 * MS),
        "chip %d %d 40 70" % (S + 200 * MS, S + 300 * MS),
        "chip %d %d nan 70" % (S + 300 * MS, S + 400 * MS),
        "util %d 40 samples" % (S + 150 * MS),
        "util %d 80 samples" % (S + 250 * MS),
        "util %d 100 samples" % (S + 400 * MS),
        "clock %d 1755 2619" % (S + 150 * MS),
        "clock %d 1500 nan" % (S + 350 * MS),
        "host %d 0 25" % (S + 100 * MS),
        "host %d 0 75 1 150" % (S + 250 * MS),
        "counters %d off" % (S + 400 * MS),
        "end %d 0 exited" % (S + 400 * MS),
    ]
    path = os.path.join(folder, "synthetic.dsrec")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class BundledRecordings(unittest.TestCase):
    def test_report_equals_report_json(self):
        self.assertGreaterEqual(len(BUNDLED), 10)
        for path in BUNDLED:
            with self.subTest(recording=os.path.basename(path)), tempfile.TemporaryDirectory() as out:
                os.environ["XDG_DATA_HOME"] = out  # the same (empty) calibration lookup as the CLI's
                expected, _ = cli_report(path, out)
                got = diescope.read_recording(path)
                self.assertEqual(got.report, expected)

    def test_no_window_equals_cli_no_window(self):
        path = os.path.join(SOURCE_DIR, "data", "recordings", "h200", "resnet50.dsrec")
        with tempfile.TemporaryDirectory() as out:
            os.environ["XDG_DATA_HOME"] = out
            expected, _ = cli_report(path, out, "--no-window")
            self.assertEqual(diescope.read_recording(path, window=False).report, expected)

    def test_samples_equal_samples_csv(self):
        for name in ("resnet50.dsrec", "ffma66.dsrec", "input-bound-2w.dsrec"):
            path = os.path.join(SOURCE_DIR, "data", "recordings", "h200", name)
            with self.subTest(recording=name), tempfile.TemporaryDirectory() as out:
                os.environ["XDG_DATA_HOME"] = out
                _, rows = cli_report(path, out)
                samples = diescope.read_recording(path).samples
                self.assertEqual(len(column(samples, "start_ns")), len(rows))
                self.assertEqual(column(samples, "start_ns"), [int(r["start_ns"]) for r in rows])
                self.assertEqual(column(samples, "use"), [r["use"] for r in rows])
                # samples.csv prints values with %.6g-style precision: compare to its own printing.
                for key in [k for k in rows[0] if k.startswith("unit.") or k == "die_util_pct"]:
                    ours = column(samples, key)
                    for i, r in enumerate(rows):
                        want = float(r[key])
                        if math.isnan(want):
                            self.assertTrue(math.isnan(ours[i]), (key, i))
                        else:
                            self.assertAlmostEqual(ours[i], want, delta=abs(want) * 1e-5 + 1e-9, msg=(key, i))

    def test_read_report_equals_file(self):
        path = os.path.join(SOURCE_DIR, "data", "recordings", "h200", "ffma66.dsrec")
        with tempfile.TemporaryDirectory() as out:
            os.environ["XDG_DATA_HOME"] = out
            expected, _ = cli_report(path, out)
            got = diescope.read_report(os.path.join(out, "report.json"))
            self.assertEqual(got.report, expected)
            # The unit table: one row per span and unit; the FP32 run mean as the report has it.
            units = got.units
            keys, spans, means = column(units, "key"), column(units, "span"), column(units, "mean_pct")
            fp32 = [u for u in expected["results"]["units"] if u["key"] == "fp32"][0]
            i = [j for j in range(len(keys)) if keys[j] == "fp32" and spans[j] == "run"][0]
            self.assertEqual(means[i], fp32["mean_pct"])
            n_units = len(expected["results"]["units"]) + len(expected["results"]["diagnostics"])
            self.assertEqual(spans.count("run"), n_units)


class SyntheticRecording(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        os.environ["XDG_DATA_HOME"] = self.dir.name
        self.path = synthetic(self.dir.name)
        self.rec = diescope.read_recording(self.path)
        self.s = self.rec.samples

    def tearDown(self):
        self.dir.cleanup()

    def test_report_equals_cli(self):
        expected, _ = cli_report(self.path, os.path.join(self.dir.name, "out"))
        self.assertEqual(self.rec.report, expected)

    def test_times_and_verdicts(self):
        self.assertEqual(column(self.s, "start_ns"), [S, S + 100 * MS, S + 200 * MS, S + 300 * MS])
        for got, want in zip(column(self.s, "time_s"), [0.0, 0.1, 0.2, 0.3]):
            self.assertAlmostEqual(got, want, places=12)
        self.assertEqual(column(self.s, "duration_ms"), [100.0] * 4)
        # The first sample after the counters come on is dropped; a NaN unit breaks the fourth.
        self.assertEqual(column(self.s, "use"), ["dropped_first", "used", "used", "dropped_broken"])

    def test_die_util_is_busiest_unit(self):
        # max(fp32, dram): 50 vs 30, then 40 vs 70.
        die = column(self.s, "die_util_pct")
        self.assertEqual(die[1:3], [50.0, 70.0])
        self.assertEqual(column(self.s, "unit.dram"), [20.0, 30.0, 70.0, 70.0])

    def test_gpu_util_booked_and_overlap_weighted(self):
        # Booked: 40% on (S-850ms, S+150ms], 80% on (S+150, S+250], 100% on (S+250, S+400].
        # [S, S+100): 40. [S+100, S+200): 50 ms at 40 and 50 ms at 80 = 60.
        # [S+200, S+300): 50 ms at 80 and 50 ms at 100 = 90. [S+300, S+400): 100.
        got = column(self.s, "gpu_util_pct")
        for g, want in zip(got, [40.0, 60.0, 90.0, 100.0]):
            self.assertAlmostEqual(g, want, places=9)

    def test_clocks_power_host_as_of_sample_end(self):
        # Latest reading at or before each end (S+100, S+200, S+300, S+400).
        self.assertEqual(column(self.s, "sm_clock_mhz"), [1980.0, 1755.0, 1755.0, 1500.0])
        mem = column(self.s, "mem_clock_mhz")
        self.assertEqual(mem[:3], [2619.0] * 3)
        self.assertTrue(math.isnan(mem[3]))
        self.assertEqual(column(self.s, "power_limit_w"), [700.0] * 4)
        cpu = column(self.s, "host.cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed")
        self.assertEqual(cpu, [25.0, 25.0, 75.0, 75.0])
        proc = column(self.s, "host.proc__cycles_active.sum.per_second[pid 4242]")
        self.assertTrue(math.isnan(proc[0]) and math.isnan(proc[1]))
        self.assertEqual(proc[2:], [150.0, 150.0])

    def test_frame_kind(self):
        if diescope.pandas_available():
            import pandas
            self.assertIsInstance(self.s, pandas.DataFrame)
            self.assertEqual(self.s.attrs["units"]["sm_clock_mhz"], "MHz")
        else:
            self.assertIsInstance(self.s, diescope.Table)
            self.assertEqual(self.s.rows, 4)
            self.assertEqual(self.s.units["sm_clock_mhz"], "MHz")


def same_rows(test, a, b):
    for name in a.columns if hasattr(a, "columns") else a:
        for i, (x, y) in enumerate(zip(column(a, name), column(b, name))):
            test.assertTrue(same(float(x), float(y)) if not isinstance(x, str) else x == y, (name, i, x, y))


class Spans(unittest.TestCase):
    def test_synthetic_span_by_hand(self):
        with tempfile.TemporaryDirectory() as d:
            os.environ["XDG_DATA_HOME"] = d
            f = diescope.span_figures(synthetic(d), [S + 100 * MS], [S + 300 * MS])
            # Used samples 2 and 3: DIE-Util (50 + 70) / 2 = 60; GPU-Util (60 + 90) / 2 = 75; gap 15;
            # DRAM's mean (30 + 70) / 2 = 50 beats FP32's (50 + 40) / 2 = 45.
            self.assertAlmostEqual(column(f, "die_util_pct")[0], 60.0, places=9)
            self.assertAlmostEqual(column(f, "gpu_util_pct")[0], 75.0, places=9)
            self.assertAlmostEqual(column(f, "gap_points")[0], 15.0, places=9)
            self.assertEqual(column(f, "limiting_unit"), ["dram"])
            self.assertEqual(column(f, "samples_used"), [2])
            self.assertAlmostEqual(column(f, "chip_coverage_pct")[0], 100.0, places=9)

    def test_span_energy_by_hand(self):
        with tempfile.TemporaryDirectory() as d:
            os.environ["XDG_DATA_HOME"] = d
            f = diescope.span_figures(synthetic(d, version=4), [S + 100 * MS], [S + 300 * MS])
            # The counter, linear between readings (docs/energy.md#the-rules): at 100 ms
            # 1000000 + 50000 x 100/200 = 1025000 mJ, at 300 ms 1050000 + 60000 x 100/200 = 1080000 mJ: 55 J.
            self.assertAlmostEqual(column(f, "energy_j")[0], 55.0, places=9)
            self.assertEqual(column(f, "energy_source"), ["counter"])
            # DIE-Util 50 and 70 in the span: nothing under 10%, so 0 J stranded.
            self.assertEqual(column(f, "stranded_energy_j")[0], 0.0)
            # A version-2 recording has no draw and no counter: NaN, not 0.
            old = diescope.span_figures(synthetic(d), [S + 100 * MS], [S + 300 * MS])
            self.assertTrue(math.isnan(column(old, "energy_j")[0]))
            self.assertEqual(column(old, "energy_source"), ["none"])

    def test_recordings_window_as_a_span(self):
        for name in ("resnet50.dsrec", "ffma66.dsrec", "gemm.dsrec"):
            path = os.path.join(SOURCE_DIR, "data", "recordings", "h200", name)
            with self.subTest(recording=name):
                w = diescope.read_recording(path).report["window"]["results"]
                f = diescope.span_figures(path, [w["start_ns"]], [w["end_ns"]])
                self.assertEqual(column(f, "die_util_pct")[0], w["die_util_pct"])
                self.assertEqual(column(f, "gpu_util_pct")[0], w["gpu_util_pct"])
                self.assertEqual(column(f, "gap_points")[0], w["gap_points"])
                self.assertEqual(column(f, "limiting_unit")[0], w["limiting_unit"])
                self.assertEqual(column(f, "chip_coverage_pct")[0], w["chip_coverage_pct"])

    def test_sliced_equals_whole_recording(self):
        # 100 ms steps over the window, and 1 s spans at the run's two ends (the set-up sample, the end).
        for name in ("resnet50.dsrec", "input-bound-2w.dsrec", "duty.dsrec", "ffma66.dsrec"):
            path = os.path.join(SOURCE_DIR, "data", "recordings", "h200", name)
            with self.subTest(recording=name):
                r = diescope.read_recording(path).report
                run, w = r["results"], r["window"]["results"] if r["window"]["found"] else r["results"]
                starts = [w["start_ns"] + i * 100 * MS for i in range(25)]
                ends = [s + 100 * MS for s in starts]
                starts += [run["start_ns"], run["end_ns"] - 1000 * MS]
                ends += [run["start_ns"] + 1000 * MS, run["end_ns"]]
                sliced = diescope.span_figures(path, starts, ends)
                whole = diescope.span_figures(path, starts, ends, whole_recording=True)
                same_rows(self, sliced, whole)


class Errors(unittest.TestCase):
    """The same cause, fix and exit code as `diescope report` for the same bad input."""

    def cli_error(self, path):
        r = subprocess.run([DIESCOPE, "report", path, "--format", "terminal"], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        cause = lines[0].split("diescope: error: ", 1)[1]
        fix = lines[1].split("fix: ", 1)[1]
        return r.returncode, cause, fix

    def check_same(self, path, reader):
        code, cause, fix = self.cli_error(path)
        with self.assertRaises(diescope.InputError) as ctx:
            reader(path)
        self.assertEqual((ctx.exception.exit_code, ctx.exception.cause, ctx.exception.fix), (code, cause, fix))
        self.assertEqual(code, 3)

    def test_missing_file(self):
        self.check_same("/nonexistent/run.dsrec", diescope.read_recording)

    def test_not_a_recording(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.dsrec")
            with open(bad, "w") as f:
                f.write("not a recording\n")
            self.check_same(bad, diescope.read_recording)

    def test_bad_line_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            good = synthetic(d)
            with open(good) as f:
                lines = f.read().splitlines()
            lines[8] = "chip 1 oops"
            bad = os.path.join(d, "badline.dsrec")
            with open(bad, "w") as f:
                f.write("\n".join(lines) + "\n")
            self.check_same(bad, diescope.read_recording)
            with self.assertRaises(diescope.InputError) as ctx:
                diescope.read_recording(bad)
            self.assertIn(":9:", ctx.exception.cause)

    def test_folder(self):
        self.check_same(os.path.join(SOURCE_DIR, "data", "recordings", "h200"), diescope.read_recording)

    def test_bad_report(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "report.json")
            with open(bad, "w") as f:
                f.write('{"schema": 1}\n')
            self.check_same(bad, diescope.read_report)


if __name__ == "__main__":
    unittest.main(verbosity=1)
