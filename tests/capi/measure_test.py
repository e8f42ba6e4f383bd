"""diescope.measure() on a CPU machine: `run`'s collector attached to this process, with the stand-in
libnvidia-ml.so.1 (tests/rounds/fake_libnvidia_ml.cpp) and the fake sampler child, whose every unit
reads a set level (docs/python.md#measure). Every expected value is worked out by hand below.

usage: measure_test.py DIESCOPE PYTHON_PACKAGE_PARENT FAKE_NVML_DIR FAKE_SAMPLER SCRATCH
It starts itself again as a child with the stand-in NVML first on LD_LIBRARY_PATH (the loader reads
LD_LIBRARY_PATH when the process starts).
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
import unittest

DIESCOPE, PACKAGE_PARENT, NVML_DIR, FAKE_SAMPLER, SCRATCH = sys.argv[1:6]
del sys.argv[1:6]
sys.path.insert(0, PACKAGE_PARENT)
import diescope  # noqa: E402

LEVEL = 40.0   # every unit of the fake sampler, percent of peak
WATTS = 250    # the stand-in's power draw: energy = WATTS x seconds
UTIL = 97.0    # the stand-in's GPU-Util, polled


def column(table, name):
    return list(table[name])


def sampler_wrapper():
    path = os.path.join(SCRATCH, "fake-sampler.sh")
    with open(path, "w") as f:
        f.write('#!/bin/sh\n[ "$1" = sample ] && shift\nexec "%s" "$@" --fake-level 0:%g\n' % (FAKE_SAMPLER, LEVEL))
    os.chmod(path, 0o755)
    return path


def fake_env(**extra):
    env = dict(os.environ, LD_LIBRARY_PATH=NVML_DIR + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
               DIESCOPE_FAKE_NVML_POWER_W=str(WATTS), DIESCOPE_CUPTI=sampler_wrapper(), MEASURE_TEST_CHILD="1")
    env.update(extra)
    return env


class MeasureWithStandIn(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # torch.cuda.nvtx as a stand-in module: measure() times the ranges pushed through it.
        pushed = []
        nvtx = types.ModuleType("torch.cuda.nvtx")
        nvtx.range_push = lambda msg: pushed.append(msg) or len(pushed) - 1
        nvtx.range_pop = lambda: len(pushed)
        sys.modules["torch.cuda.nvtx"] = nvtx
        cls.out = tempfile.mkdtemp(dir=SCRATCH)
        os.environ["XDG_DATA_HOME"] = cls.out
        with diescope.measure(gpus=[0], interval_ms=10, drain_ms=100, output=os.path.join(cls.out, "run"),
                              quiet=True) as m:
            time.sleep(0.3)  # the first chip sample spans the counters' set-up: outside the window
            m.window_start()
            for i in range(8):
                if i == 2:
                    sys.modules["torch.cuda.nvtx"].range_push("forward")
                time.sleep(0.1)
                if i == 2:
                    sys.modules["torch.cuda.nvtx"].range_pop()
                m.step()
            m.window_stop()
            time.sleep(0.2)
        cls.m = m
        cls.pushed = pushed

    def test_steps_table(self):
        steps = self.m.steps
        self.assertEqual(column(steps, "step"), list(range(8)))
        self.assertEqual(column(steps, "gpu"), [0] * 8)
        durations = column(steps, "duration_ms")
        # Step 0 runs from the start of the block (0.3 s of sleep before it); the rest take 100 ms.
        self.assertGreater(durations[0], 390)
        for d in durations[1:]:
            self.assertGreater(d, 99)

    def test_die_util_is_the_level(self):
        # Every unit reads LEVEL in every sample, so DIE-Util (the busiest) is LEVEL over any span.
        die = column(self.m.steps, "die_util_pct")
        for d in die[1:]:
            self.assertAlmostEqual(d, LEVEL, places=6)
        self.assertEqual(column(self.m.steps, "limiting_unit")[1], self.m.report["results"]["limiting_unit"])

    def test_gpu_util_and_gap(self):
        # The stand-in is polled at UTIL every 100 ms tick: every step after the first is covered.
        steps = self.m.steps
        for g, gap in list(zip(column(steps, "gpu_util_pct"), column(steps, "gap_points")))[2:]:
            self.assertAlmostEqual(g, UTIL, places=6)
            self.assertAlmostEqual(gap, UTIL - LEVEL, places=6)

    def test_energy_is_power_times_duration(self):
        # The stand-in's counter is WATTS x the wall time: a step of d ms used WATTS x d / 1000 J.
        steps = self.m.steps
        # The counter is read from before the measurement starts, so step 0 has its energy too. Each
        # reading is timed just after the call, so a busy machine delays a timestamp by up to a few ms:
        # 10% per step of 100 ms, 2% over all steps (the sum's error is only at its two ends).
        energy, durations = column(steps, "energy_j"), column(steps, "duration_ms")
        for e, d in zip(energy, durations):
            self.assertAlmostEqual(e, WATTS * d / 1000.0, delta=WATTS * d / 1000.0 * 0.10)
        self.assertAlmostEqual(sum(energy), WATTS * sum(durations) / 1000.0, delta=WATTS * sum(durations) / 1000.0 * 0.02)

    def test_steady_window(self):
        # The steps between window_start() and window_stop() are inside the window; DIE-Util over it is LEVEL.
        self.assertTrue(self.m.report["window"]["found"])
        self.assertEqual(column(self.m.steps, "in_window")[1:], [1] * 7)
        self.assertAlmostEqual(self.m.report["window"]["results"]["die_util_pct"], LEVEL, places=6)

    def test_report_equals_report_of_recording(self):
        path = os.path.join(self.out, "run", "gpu0.dsrec")
        self.assertEqual(self.m.report, diescope.read_recording(path).report)
        with open(path + ".report/report.json") as f:
            self.assertEqual(self.m.report, json.load(f))

    def test_host_probes_name_the_collector_thread(self):
        # Attached, this process is the measured program's: the note gives the collector thread's CPU.
        notes = [n["text"] for n in self.m.report["notes"] if n["topic"] == "host_probes"]
        self.assertEqual(len(notes), 1)
        self.assertIn("diescope's own collector thread used", notes[0])

    def test_regions(self):
        regions = self.m.regions
        self.assertEqual(self.pushed, ["forward"])
        self.assertEqual(column(regions, "name"), ["forward"])
        self.assertEqual(column(regions, "depth"), [0])
        self.assertAlmostEqual(column(regions, "die_util_pct")[0], LEVEL, places=6)
        self.assertGreater(column(regions, "duration_ms")[0], 99)

    def test_save_writes_what_run_writes(self):
        target = os.path.join(self.out, "saved")
        self.m.save(target)
        for name in ("gpu0.dsrec", "gpu0.dsrec.report/report.json", "gpu0.dsrec.report/samples.csv",
                     "steps.csv", "regions.csv"):
            self.assertTrue(os.path.isfile(os.path.join(target, name)), name)
        with open(os.path.join(target, "steps.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 1 + 8)

    def test_step_outside_the_block_is_refused(self):
        with self.assertRaises(diescope.UsageError):
            self.m.step()


class TwoGpus(unittest.TestCase):
    """Every GPU by default, as run: one recording and report per GPU, gpus.json, steps per GPU."""

    def test_two_gpus(self):
        os.environ["DIESCOPE_FAKE_NVML_GPUS"] = "2"  # the stand-in reads it at each nvmlInit
        try:
            out = os.path.join(tempfile.mkdtemp(dir=SCRATCH), "run")
            with diescope.measure(drain_ms=100, output=out, quiet=True) as m:
                for _ in range(3):
                    time.sleep(0.1)
                    m.step()
        finally:
            del os.environ["DIESCOPE_FAKE_NVML_GPUS"]
        self.assertEqual(sorted(m.reports), [0, 1])
        for name in ("gpu0.dsrec.report/report.json", "gpu1.dsrec.report/report.json", "gpus.json"):
            self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
        self.assertEqual(column(m.steps, "gpu"), [0, 0, 0, 1, 1, 1])
        self.assertEqual(column(m.steps, "step"), [0, 1, 2, 0, 1, 2])


class MeasureErrors(unittest.TestCase):
    def cli_error(self, args, env):
        r = subprocess.run([DIESCOPE, "run", *args, "--", "true"], capture_output=True, text=True, env=env)
        lines = [l for l in r.stderr.splitlines() if l.startswith("diescope: error: ") or l.startswith("  fix: ")]
        return r.returncode, lines[0].split("diescope: error: ", 1)[1], lines[1].split("fix: ", 1)[1]

    def test_gpu_that_does_not_exist(self):
        code, cause, fix = self.cli_error(["--gpus", "5"], dict(os.environ))
        with self.assertRaises(diescope.UsageError) as ctx:
            with diescope.measure(gpus=[5], output=tempfile.mkdtemp(dir=SCRATCH), quiet=True):
                pass
        e = ctx.exception
        self.assertEqual((e.exit_code, e.cause, e.fix), (code, cause, fix))


def failing_sampler(kind):
    """The fake sampler that fails at its start with the error kind given (busy: counters held)."""
    path = os.path.join(SCRATCH, "fail-%s.sh" % kind)
    with open(path, "w") as f:
        f.write('#!/bin/sh\n[ "$1" = sample ] && shift\nexec "%s" "$@" --fail-with %s\n' % (FAKE_SAMPLER, kind))
    os.chmod(path, 0o755)
    return path


def cli_run(args, sampler):
    """`diescope run ARGS -- sleep 0.5` with the given sampler: its exit code, warnings and error lines."""
    env = dict(os.environ, DIESCOPE_CUPTI=sampler)
    out = tempfile.mkdtemp(dir=SCRATCH)
    r = subprocess.run([DIESCOPE, "run", "--output", out, *args, "--", "sleep", "0.5"], capture_output=True,
                       text=True, env=env)
    warnings = [l.split("diescope: warning: ", 1)[1] for l in r.stderr.splitlines()
                if l.startswith("diescope: warning: ")]
    errors_ = [l for l in r.stderr.splitlines() if l.startswith("diescope: error: ") or l.startswith("  fix: ")]
    return r.returncode, warnings, errors_


class CountersUnavailable(unittest.TestCase):
    """Counters held by another profiler, or forbidden: measure() does what `run` does."""

    def test_held_counters_read_gpm_as_run_does(self):
        sampler = failing_sampler("busy")
        _, run_warnings, _ = cli_run(["--source", "auto", "--gpus", "0"], sampler)
        with diescope.measure(gpus=[0], source="auto", sampler=sampler, quiet=True,
                              output=tempfile.mkdtemp(dir=SCRATCH)) as m:
            time.sleep(0.5)
        self.assertEqual(m.warnings, run_warnings)
        self.assertTrue(any("NVML GPM" in w for w in m.warnings), m.warnings)
        self.assertEqual(m.outcome["recordings"][0]["chip_source"], "gpm")

    def test_forbidden_counters_raise_as_run_fails(self):
        sampler = failing_sampler("permission")
        code, _, lines = cli_run(["--source", "pm", "--gpus", "0"], sampler)
        with self.assertRaises(diescope.DeviceError) as ctx:
            with diescope.measure(gpus=[0], source="pm", sampler=sampler, quiet=True,
                                  output=tempfile.mkdtemp(dir=SCRATCH)):
                pass
        e = ctx.exception
        self.assertEqual((e.exit_code, e.cause, e.fix),
                         (code, lines[0].split("diescope: error: ", 1)[1], lines[1].split("fix: ", 1)[1]))


class NoDriver(unittest.TestCase):
    """Without the stand-in (this CPU machine has no libnvidia-ml.so.1): the error `run` gives."""

    def test_no_driver(self):
        if os.environ.get("MEASURE_TEST_CHILD"):
            self.skipTest("checked by the parent process, which has no stand-in NVML")


def no_driver_check():
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run([DIESCOPE, "run", "--", "true"], capture_output=True, text=True, env=env)
    lines = [l for l in r.stderr.splitlines() if l.startswith("diescope: error: ") or l.startswith("  fix: ")]
    try:
        with diescope.measure(output=tempfile.mkdtemp(dir=SCRATCH), quiet=True):
            pass
    except diescope.DeviceError as e:
        want = (r.returncode, lines[0].split("diescope: error: ", 1)[1], lines[1].split("fix: ", 1)[1])
        got = (e.exit_code, e.cause, e.fix)
        print("no driver: measure() raised DeviceError", got == want and "as run says it" or got, want)
        return got == want
    print("no driver: measure() did not raise DeviceError")
    return False


if __name__ == "__main__":
    if not os.environ.get("MEASURE_TEST_CHILD"):
        shutil.rmtree(SCRATCH, ignore_errors=True)  # each run starts from an empty scratch folder
    os.makedirs(SCRATCH, exist_ok=True)
    if not os.environ.get("MEASURE_TEST_CHILD"):
        # This machine has no driver: measure() must fail as `run` does; then the rest with the stand-in.
        if os.path.exists("/dev/nvidiactl"):
            print("a GPU machine: the no-driver check is for machines without one")
            ok = True
        else:
            ok = no_driver_check()
        child = subprocess.run([sys.executable, os.path.abspath(__file__), DIESCOPE, PACKAGE_PARENT, NVML_DIR,
                                FAKE_SAMPLER, SCRATCH, *sys.argv[1:]], env=fake_env())
        sys.exit(0 if ok and child.returncode == 0 else 1)
    unittest.main(verbosity=1)
