"""Reading recordings and reports (docs/python.md#reading)."""
import collections
import ctypes
import json
import os

from . import _lib, tables

Recording = collections.namedtuple("Recording", ["samples", "report", "units"])
Recording.__doc__ = """What read_recording() returns.

samples: one row per chip sample (docs/python.md#the-samples-table); report: the analysis as a dict,
equal to the report.json `diescope report` writes; units: one row per span and unit (unit_table())."""
Report = collections.namedtuple("Report", ["units", "report"])
Report.__doc__ = """What read_report() returns: the per-unit table of a report.json and the report as a dict."""


def _fspath(path):
    return os.fspath(path)


def table_from_handle(handle, raw=False):
    """Copies a ds_table out column by column and frees it: a DataFrame or Table, or with raw=True
    the Table itself."""
    lib = _lib.lib()
    if not handle:
        _lib.raise_last()
    try:
        rows = lib.ds_table_rows(handle)
        described = _lib.take_json(lib.ds_table_columns_json(handle))
        columns, units = {}, {}
        for i, c in enumerate(described):
            units[c["name"]] = c["unit"]
            if c["type"] == "text":
                columns[c["name"]] = _lib.take_json(lib.ds_table_text_json(handle, i))
                continue
            typecode = "d" if c["type"] == "f8" else "q"
            column = tables.empty_numeric(rows, typecode)
            copy = lib.ds_table_copy_f64 if typecode == "d" else lib.ds_table_copy_i64
            if rows and copy(handle, i, ctypes.c_void_p(tables.buffer_address(column))) != 0:
                _lib.raise_last()
            columns[c["name"]] = column
        return tables.Table(columns, units, rows) if raw else tables.make(columns, units, rows)
    finally:
        lib.ds_table_free(handle)


_UNIT_FIELDS = ["mean_pct", "available_s", "availability_pct", "max_sample_pct"]


def unit_table(report):
    """One row per span (run, window) and column (unit or diagnostic) of a report dict, with the unit
    summary fields of docs/report.md#unit-summaries-units-diagnostics."""
    records = []
    spans = [("run", report.get("results"))]
    window = report.get("window") or {}
    if window.get("results"):
        spans.append(("window", window["results"]))
    for span_name, span in spans:
        if not span:
            continue
        limiting = span.get("limiting_unit")
        for kind in ("units", "diagnostics"):
            for u in span.get(kind) or []:
                row = {"span": span_name, "kind": kind[:-1] if kind == "units" else "diagnostic",
                       "key": u.get("key"), "label": u.get("label"), "source": u.get("source"),
                       "limiting": 1.0 if u.get("key") == limiting and kind == "units" else 0.0}
                for f in _UNIT_FIELDS:
                    row[f] = u.get(f)
                records.append(row)
    names = ["span", "kind", "key", "label", "source"] + _UNIT_FIELDS + ["limiting"]
    units = {"mean_pct": "pct", "available_s": "s", "availability_pct": "pct", "max_sample_pct": "pct"}
    return tables.from_records(records, names, units)


def read_recording(path, window=True, calibration=None):
    """Reads a recording (.dsrec): its samples as a DataFrame and its analysis as a dict.

    The analysis is the one `diescope report PATH` makes (the same library): `report` equals the
    report.json it writes for the same PATH. window=False summarises the whole run only (--no-window);
    calibration names a calibration file or folder (--calibration).
    Raises diescope.InputError for a missing or malformed file, with the line and the fix.
    """
    lib = _lib.lib()
    name = _fspath(path)
    report = _lib.take_json(lib.ds_report_of_recording(_lib.encode(name), _lib.encode(calibration), int(bool(window))))
    samples = table_from_handle(lib.ds_samples_of_recording(_lib.encode(name), int(bool(window))))
    return Recording(samples, report, unit_table(report))


def read_report(path):
    """Reads a report.json as `diescope report report.json` reads it: its per-unit table and the dict."""
    report = _lib.take_json(_lib.lib().ds_load_report(_lib.encode(_fspath(path))))
    return Report(unit_table(report), report)


def span_figures(path, starts_ns, ends_ns, whole_recording=False, raw=False):
    """The figures of a recording over spans you name: span i is [starts_ns[i], ends_ns[i]) in ns since
    the Unix epoch (CLOCK_REALTIME, time.time_ns()). Each is analysed as the steady window is, by the
    same analysis (docs/python.md#steps-and-regions). One row per span: start_ns, end_ns,
    die_util_pct, gpu_util_pct, gap_points, chip_coverage_pct, samples_used, partial, limiting_unit,
    energy_j, energy_source (counter, power_draw or none) and stranded_energy_j (docs/energy.md).
    whole_recording=True analyses the whole recording for each span (slow; equal by test)."""
    starts, ends = [int(s) for s in starts_ns], [int(e) for e in ends_ns]
    if len(starts) != len(ends):
        from .errors import UsageError
        raise UsageError("%d starts and %d ends" % (len(starts), len(ends)), "give one end per start")
    n = len(starts)
    s = (ctypes.c_int64 * max(n, 1))(*starts)
    e = (ctypes.c_int64 * max(n, 1))(*ends)
    handle = _lib.lib().ds_spans_of_recording(_lib.encode(_fspath(path)), s, e, n, int(bool(whole_recording)))
    return table_from_handle(handle, raw=raw)
