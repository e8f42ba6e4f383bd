"""Measuring from inside a program (docs/python.md#measure).

    with diescope.measure(gpus=[0], interval_ms=10) as m:
        for batch in loader:
            train_step(batch)
            m.step()
    m.steps           # one row per step and GPU
    m.report          # GPU 0's analysis, as report.json
    m.save("out")     # the files `diescope run --output out` writes, plus steps.csv and regions.csv

The block runs `diescope run`'s own collector (the same library: the counter sampler child per GPU,
NVML, the host probes) with this process as the measured command. m.step() only takes the time; each
step's figures are computed at the end by the same analysis, over the step's span.
"""
import bisect
import csv
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time

from . import _lib, errors, tables
from .reading import span_figures

_time_ns = time.time_ns  # CLOCK_REALTIME, the recordings' timeline
_NAN = float("nan")

START_LINE = "diescope: measure start"
STOP_LINE = "diescope: measure stop"


def _find_sampler(given):
    """diescope-cupti: as given, $DIESCOPE_CUPTI, beside the package, or in the build tree's bin/."""
    if given:
        return os.fspath(given)
    if os.environ.get("DIESCOPE_CUPTI"):
        return os.environ["DIESCOPE_CUPTI"]
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "diescope-cupti"),
                      os.path.join(here, os.pardir, os.pardir, "bin", "diescope-cupti")):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    return ""


class _NvtxHook:
    """Times the NVTX ranges the program pushes through torch.cuda.nvtx while measuring
    (docs/python.md#steps-and-regions): the original calls still run, so other tools see them too."""

    def __init__(self):
        self.closed = []  # (name, start_ns, end_ns, depth, thread)
        self._stacks = {}
        self._module = None
        self._saved = {}

    def install(self):
        module = sys.modules.get("torch.cuda.nvtx")
        if module is None:
            return
        self._module = module
        push, pop = module.range_push, module.range_pop
        self._saved = {"range_push": push, "range_pop": pop}
        stacks, closed = self._stacks, self.closed

        def range_push(msg, *args, **kwargs):
            stack = stacks.setdefault(threading.get_ident(), [])
            stack.append((str(msg), _time_ns()))
            return push(msg, *args, **kwargs)

        def range_pop(*args, **kwargs):
            result = pop(*args, **kwargs)
            stack = stacks.get(threading.get_ident())
            if stack:
                name, start = stack.pop()
                closed.append((name, start, _time_ns(), len(stack), threading.get_ident()))
            return result

        module.range_push, module.range_pop = range_push, range_pop

    def remove(self):
        if self._module is not None:
            for name, fn in self._saved.items():
                setattr(self._module, name, fn)
            self._module = None


def _interpolate(ts, values, at):
    """The energy counter at time `at`, linear between the readings around it; NaN outside them."""
    i = bisect.bisect_left(ts, at)
    if i < len(ts) and ts[i] == at:
        return values[i]
    if i == 0 or i == len(ts):
        return _NAN
    t0, t1 = ts[i - 1], ts[i]
    return values[i - 1] + (values[i] - values[i - 1]) * (at - t0) / (t1 - t0)


class Measurement:
    """One measured block. Use it through diescope.measure(); its figures are there after the block."""

    def __init__(self, gpus=None, interval_ms=10, drain_ms=1000, host_interval_ms=100, source="auto",
                 output=None, window=True, calibration=None, sampler=None, quiet=False, nvtx=True):
        if gpus is not None and not isinstance(gpus, (list, tuple)):
            gpus = [gpus]
        self._options = {"gpus": None if gpus is None else [int(g) for g in gpus],
                         "interval_ms": float(interval_ms), "drain_ms": float(drain_ms),
                         "host_interval_ms": float(host_interval_ms), "source": source,
                         "sampler": _find_sampler(sampler)}
        self._output = None if output is None else os.fspath(output)
        self._window = bool(window)
        self._calibration = calibration
        self._quiet = quiet
        self._nvtx = _NvtxHook() if nvtx else None
        self._handle = None
        self._ts = []
        self.outcome = None
        self.reports = {}
        self.headlines = {}
        self.warnings = []
        self._steps = None
        self._regions = None

    # -- during the block -------------------------------------------------------------------------

    def step(self):
        """Marks the end of one step, once per iteration (as torch.profiler's step()). While measuring,
        this is replaced by a closure that only appends time.time_ns() to a list
        (docs/python.md#the-cost-of-step)."""
        raise errors.UsageError("the measurement is not running", "call m.step() inside the `with` block")

    def start(self):
        if self._handle is not None:
            raise errors.UsageError("this measurement has already started",
                                    "use one diescope.measure() per `with` block")
        folder = self._output or tempfile.mkdtemp(prefix="diescope-measure-")
        self._folder = folder
        options = dict(self._options, output_dir=folder)
        lib = _lib.lib()
        handle = lib.ds_measure_start(json.dumps(options).encode())
        if not handle:
            _lib.raise_last()
        self._handle = handle
        append, clock = self._ts.append, _time_ns

        def step():
            """Marks the end of one step (as torch.profiler's step()): takes the time, nothing else."""
            append(clock())

        self.step = step
        if self._nvtx is not None:
            self._nvtx.install()
        return self

    def marker(self, line):
        """Passes a line the program would print for `diescope run --window markers`
        ("diescope: measure start", "... stop", "diescope: measure window START STOP", "... last S")."""
        if self._handle is None:
            raise errors.UsageError("the measurement is not running", "mark inside the `with` block")
        if _lib.lib().ds_measure_marker(self._handle, str(line).encode()) != 0:
            _lib.raise_last()

    def window_start(self):
        """The steady window starts now (as the line 'diescope: measure start')."""
        self.marker(START_LINE)

    def window_stop(self):
        """The steady window ends now (as the line 'diescope: measure stop')."""
        self.marker(STOP_LINE)

    def stop(self):
        """Ends the run, writes each GPU's report beside its recording and computes the steps."""
        if self._handle is None:
            return
        if self._nvtx is not None:
            self._nvtx.remove()
        self.__dict__.pop("step", None)  # step() outside the block is refused again
        lib = _lib.lib()
        handle, self._handle = self._handle, None
        try:
            self.outcome = _lib.take_json(lib.ds_measure_stop(handle))
        finally:
            lib.ds_measure_free(handle)
        self.warnings = list(self.outcome.get("warnings", []))
        paths = [{"path": r["path"], "index": r["index"]} for r in self.outcome["recordings"]]
        gpus_json = os.path.join(self._folder, "gpus.json") if len(paths) > 1 else None
        done = _lib.take_json(lib.ds_report_run(json.dumps(paths).encode(), _lib.encode(self._calibration),
                                                int(self._window), _lib.encode(gpus_json)))
        for rec, rep in zip(self.outcome["recordings"], done["reports"]):
            self.reports[rec["index"]] = rep["report"]
            self.headlines[rec["index"]] = rep["headline"]
        self._compute_steps()
        self._write_tables(self._folder)
        if not self._quiet:
            for w in self.warnings:
                print("diescope: warning: " + w, file=sys.stderr)
            for index, text in self.headlines.items():
                if len(self.headlines) > 1:
                    print("\nGPU %d" % index, file=sys.stderr)
                sys.stderr.write(text)
            if done.get("gpus_text"):
                sys.stderr.write(done["gpus_text"])
            print("diescope: recordings and reports in " + self._folder, file=sys.stderr)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- after the block --------------------------------------------------------------------------

    @property
    def report(self):
        """The analysis of the first measured GPU, as its report.json (a dict)."""
        if not self.reports:
            raise errors.UsageError("no report yet", "read m.report after the `with` block")
        return self.reports[min(self.reports)]

    @property
    def steps(self):
        """One row per step and GPU: time, DIE-Util, GPU-Util, gap, limiting unit, energy
        (docs/python.md#steps-and-regions)."""
        if self._steps is None:
            raise errors.UsageError("no steps yet", "read m.steps after the `with` block")
        return tables.make(self._steps[0], self._steps[1])

    @property
    def regions(self):
        """One row per NVTX range the program pushed through torch.cuda.nvtx, per GPU, with the same
        figures as steps."""
        if self._regions is None:
            raise errors.UsageError("no regions yet", "read m.regions after the `with` block")
        return tables.make(self._regions[0], self._regions[1])

    @property
    def folder(self):
        """Where the recordings and reports were written."""
        return self._folder

    def save(self, folder):
        """Writes the files `diescope run --output FOLDER` writes (gpu<N>.dsrec, gpu<N>.dsrec.report/
        with report.json and samples.csv, gpus.json with several GPUs), and steps.csv and regions.csv."""
        if self.outcome is None:
            raise errors.UsageError("nothing to save yet", "call m.save(folder) after the `with` block")
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        if os.path.abspath(folder) == os.path.abspath(self._folder):
            return folder
        for name in os.listdir(self._folder):
            source = os.path.join(self._folder, name)
            target = os.path.join(folder, name)
            if os.path.isdir(source):
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)
        return folder

    def _span_rows(self, spans, extra_names):
        """Rows of figures per GPU over the spans [(start, end, extras...)]; columns and units."""
        names = ["gpu"] + extra_names + ["start_ns", "end_ns", "time_s", "duration_ms", "die_util_pct",
                                         "gpu_util_pct", "gap_points", "limiting_unit", "energy_j",
                                         "chip_coverage_pct", "partial", "in_window"]
        units = {"time_s": "s", "duration_ms": "ms", "die_util_pct": "pct", "gpu_util_pct": "pct",
                 "gap_points": "points", "energy_j": "J", "chip_coverage_pct": "pct", "start_ns": "ns",
                 "end_ns": "ns"}
        cols = {n: [] for n in names}
        energy = {e["index"]: e for e in self.outcome.get("energy", [])}
        t0 = self.outcome["start_ns"]
        for rec in self.outcome["recordings"]:
            index = rec["index"]
            valid = [s for s in spans if s[1] > s[0]]
            if not valid:
                continue
            figures = span_figures(rec["path"], [s[0] for s in valid], [s[1] for s in valid], raw=True)
            report = self.reports.get(index, {})
            win = (report.get("window") or {})
            wres = win.get("results") if win.get("found") else None
            e = energy.get(index, {"ts_ns": [], "mj": []})
            for i, span in enumerate(valid):
                start, end = span[0], span[1]
                cols["gpu"].append(index)
                for name, value in zip(extra_names, span[2:]):
                    cols[name].append(value)
                cols["start_ns"].append(start)
                cols["end_ns"].append(end)
                cols["time_s"].append((start - t0) / 1e9)
                cols["duration_ms"].append((end - start) / 1e6)
                for name in ("die_util_pct", "gpu_util_pct", "gap_points", "chip_coverage_pct"):
                    cols[name].append(float(figures[name][i]))
                cols["limiting_unit"].append(figures["limiting_unit"][i])
                cols["partial"].append(int(figures["partial"][i]))
                e0 = _interpolate(e["ts_ns"], e["mj"], start)
                e1 = _interpolate(e["ts_ns"], e["mj"], end)
                cols["energy_j"].append((e1 - e0) / 1000.0)
                inside = wres is not None and start >= wres["start_ns"] and end <= wres["end_ns"]
                cols["in_window"].append(1 if inside else 0)
        columns = {}
        for n in names:
            if n in ("limiting_unit", "name") or (n in extra_names and cols[n] and isinstance(cols[n][0], str)):
                columns[n] = cols[n]
            elif n in ("gpu", "start_ns", "end_ns", "partial", "in_window", "step", "depth"):
                columns[n] = tables.numeric(cols[n], "q")
            else:
                columns[n] = tables.numeric(cols[n], "d")
        return columns, units

    def _compute_steps(self):
        start = self.outcome["start_ns"]
        ends = list(self._ts)
        starts = [start] + ends[:-1]
        spans = [(s, e, i) for i, (s, e) in enumerate(zip(starts, ends))]
        self._steps = self._span_rows(spans, ["step"])
        closed = self._nvtx.closed if self._nvtx is not None else []
        regions = [(s, e, name, depth) for (name, s, e, depth, _thread) in closed]
        self._regions = self._span_rows(regions, ["name", "depth"])

    def _write_tables(self, folder):
        for name, (columns, _units) in (("steps.csv", self._steps), ("regions.csv", self._regions)):
            path = os.path.join(folder, name)
            tmp = path + ".tmp"
            with open(tmp, "w", newline="") as f:  # written whole, then renamed into place
                w = csv.writer(f)
                w.writerow(list(columns))
                rows = len(next(iter(columns.values()))) if columns else 0
                for i in range(rows):
                    w.writerow([_csv_value(c[i]) for c in columns.values()])
            os.replace(tmp, path)


def _csv_value(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if hasattr(v, "item"):
        v = v.item()
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
    return v


def measure(gpus=None, interval_ms=10, drain_ms=1000, host_interval_ms=100, source="auto", output=None,
            window=True, calibration=None, sampler=None, quiet=False, nvtx=True):
    """Measures the GPUs while the `with` block runs, as `diescope run` measures a command.

    gpus: NVML indexes (default: every GPU); interval_ms, drain_ms, host_interval_ms, source: as
    `run`'s options; output: the folder for the recordings and reports (default: a new temporary
    folder, named at the end); window: summarise the steady window between window_start() and
    window_stop() (or marker lines); calibration: as `run --calibration`; sampler: the diescope-cupti
    to run (default: $DIESCOPE_CUPTI, beside the package, or the build tree's bin/); quiet: print no
    headline at the end; nvtx: time torch.cuda.nvtx ranges as regions.

    Raises diescope.DeviceError without a driver or GPU, or when the counters may not be read, with
    the cause and fix `run` gives; with the counters held by another profiler, source "auto" reads
    NVML GPM instead and says so in m.warnings, as `run` does.
    """
    return Measurement(gpus=gpus, interval_ms=interval_ms, drain_ms=drain_ms, host_interval_ms=host_interval_ms,
                       source=source, output=output, window=window, calibration=calibration, sampler=sampler,
                       quiet=quiet, nvtx=nvtx)
