#!/usr/bin/env python3
"""End to end: `diescope report` on the bundled recording, the report it writes, and bad input.

usage: cli_report_test.py DIESCOPE SOURCE_DIR REPORTS_DIR SCRATCH_DIR
Reports go under REPORTS_DIR (the report_schema test validates them); junk files under SCRATCH_DIR.
"""
import csv
import json
import os
import pathlib
import re
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cli_run import CliTest  # noqa: E402  (tests/ is on the path only from here on)

test = None


def check(cond, what):
    test.check(what, cond)


def run(diescope, *args, cwd=None):
    """`diescope report ARGS` in `cwd` (default: this process's folder)."""
    return test.run(["report", *args], cwd=cwd or os.getcwd())


def main():
    global test
    diescope, source, reports, scratch = map(pathlib.Path, sys.argv[1:5])
    test = CliTest("cli_report_test", str(diescope), str(scratch))  # makes SCRATCH_DIR afresh
    recording = source / "data/recordings/h200-probe-shape.dsrec"
    out = reports / "cli" / "probe"
    shutil.rmtree(reports / "cli", ignore_errors=True)

    # The bundled recording: headline, report.json, samples.csv.
    r = run(diescope, recording, "--output", out)
    check(r.returncode == 0, f"exit code {r.returncode} on the bundled recording: {r.stderr}")
    lines = r.stdout.splitlines()
    first = lines[0] if lines else ""
    m = re.match(r"^diescope: (partial \(counters covered (\d+)% of the run\): )?NVIDIA H200 \(GH100, driver 580\.159\), "
                 r"single run, [0-9.]+ s, method 4$", first)
    check(m is not None, f"first line: {first!r}")
    report = json.loads((out / "report.json").read_text())
    res = report["results"]
    gate = res["chip_coverage_gate"]
    check(report["schema"] == 3 and report["method"] == 4, "schema and method versions")
    if m:
        # The first line says partial exactly when the report does, with the same share.
        check(bool(m.group(1)) == gate["partial"], f"first line partial={bool(m.group(1))}, report partial={gate['partial']}")
        if gate["partial"]:
            check(gate["wording"] in first, f"first line lacks the report's wording {gate['wording']!r}")
            shown = int(m.group(2))
            check(shown == min(round(res["chip_coverage_pct"]), 89), f"coverage {shown}% vs {res['chip_coverage_pct']}")
    die_row = next((l for l in lines if l.startswith("  DIE-Util")), "")
    check(f"{res['headline']['die_util_pct']:.1f}%" in die_row, f"DIE-Util row {die_row!r} vs report")
    check(r.stdout.rstrip().endswith(f"wrote {out / 'report.json'}, {out / 'samples.csv'}"), "the written files are named")

    # samples.csv agrees with the report: verdict counts and the time-weighted DIE-Util.
    with open(out / "samples.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    in_run = [row for row in rows if row["use"] != "outside_run"]
    used = [row for row in rows if row["use"] == "used"]
    check(len(in_run) == res["samples"]["read"], f"{len(in_run)} rows in the run vs samples.read {res['samples']['read']}")
    check(len(used) == res["samples"]["used"], f"{len(used)} used rows vs samples.used {res['samples']['used']}")
    check(sum(r_["use"] == "dropped_first" for r_ in rows) == res["samples"]["dropped_first"], "dropped_first rows")
    weighted = sum(float(r_["die_util_pct"]) * (int(r_["end_ns"]) - int(r_["start_ns"])) for r_ in used)
    covered = sum(int(r_["end_ns"]) - int(r_["start_ns"]) for r_ in used)
    if covered:
        mean = min(max(weighted / covered, 0.0), 100.0)
        check(abs(mean - res["die_util_pct"]) < 1e-9 * max(1.0, mean), f"CSV DIE-Util {mean} vs report {res['die_util_pct']}")

    # Re-rendering report.json prints the same headline.
    again = run(diescope, out / "report.json")
    check(again.returncode == 0, f"re-render exit code {again.returncode}: {again.stderr}")
    headline = r.stdout[: r.stdout.rfind("\nwrote ")]
    check(again.stdout.rstrip("\n") == headline.rstrip("\n"), "re-rendered headline differs from the original")

    # --no-window, and the default output folder <file name>.report/ in the current folder.
    copy = scratch / "copy.dsrec"
    shutil.copy(recording, copy)
    (scratch / "cwd").mkdir()
    nw = run(diescope, copy, "--no-window", "--format", "json", cwd=scratch / "cwd")
    check(nw.returncode == 0, f"--no-window exit code {nw.returncode}: {nw.stderr}")
    default_out = scratch / "cwd" / "copy.dsrec.report" / "report.json"
    check(default_out.is_file(), "default output folder <file name>.report/ in the current folder")
    check(not (scratch / "copy.dsrec.report").exists(), "nothing written beside the recording")
    if default_out.is_file():
        check(json.loads(default_out.read_text())["window"]["how"] == "not asked for", "--no-window reaches the analysis")
        (reports / "cli" / "no-window").mkdir(parents=True, exist_ok=True)
        shutil.copy(default_out, reports / "cli" / "no-window" / "report.json")
    check(not (scratch / "cwd" / "copy.dsrec.report" / "samples.csv").exists(), "--format json writes no samples.csv")
    check(nw.stdout.startswith("wrote "), "--format json prints no headline")

    # --format terminal writes nothing.
    t = run(diescope, copy, "--format", "terminal", "--output", scratch / "terminal-only")
    check(t.returncode == 0 and not (scratch / "terminal-only").exists(), "--format terminal creates no folder")

    # report.html and trace.json on request.
    ht = run(diescope, copy, "--format", "html,trace", "--output", scratch / "html-trace")
    check(ht.returncode == 0, f"--format html,trace exit code {ht.returncode}: {ht.stderr}")
    page = (scratch / "html-trace" / "report.html").read_text() if (scratch / "html-trace" / "report.html").exists() else ""
    check(page.startswith("<!DOCTYPE html>") and "<svg " in page, "report.html with an SVG timeline")
    check(not any(x in page for x in ("http:", "https:", "src=", "href=", "<link", "url(", "@import")), "report.html is self-contained")
    check(page.count("<script") == 2 and "<script src" not in page, "report.html's scripts are inline")
    # --smooth: a positive kernel is taken; a negative one is refused with the fix.
    sm = run(diescope, copy, "--format", "html,csv", "--smooth", "50", "--output", scratch / "smoothed")
    check(sm.returncode == 0 and (scratch / "smoothed" / "report.html").exists(), f"--smooth 50: {sm.stderr}")
    bad = run(diescope, copy, "--format", "html", "--smooth", "-5", "--output", scratch / "bad-smooth")
    check(bad.returncode == 2 and "--smooth" in bad.stderr, f"--smooth -5 is refused: {bad.returncode} {bad.stderr}")
    try:
        trace = json.loads((scratch / "html-trace" / "trace.json").read_text())
        names = {e.get("name") for e in trace["traceEvents"] if e.get("ph") == "C"}
        check({"DIE-Util %", "GPU-Util %", "unit FP32 %"} <= names, f"trace counter tracks: {sorted(names)}")
    except (OSError, ValueError, KeyError) as e:
        check(False, f"trace.json: {e}")
    check(run(diescope, out / "report.json", "--format", "html").returncode == 2, "html from a report.json is refused")

    # Bad input: one message naming the file (and line), a fix, a non-zero exit, no crash.
    (scratch / "garbage.dsrec").write_text("hello\n")
    (scratch / "empty.dsrec").write_text("")
    (scratch / "bad.json").write_text('{\n  "schema": 3,\n  "method" 3\n}\n')
    (scratch / "incomplete.json").write_text('{"schema": 3, "results": {}}\n')
    (scratch / "folder").mkdir()
    text = recording.read_text().splitlines(keepends=True)
    (scratch / "reordered.dsrec").write_text("".join(text[:2] + text[40:60] + text[20:40] + text[60:]))
    cases = [
        (scratch / "missing.dsrec", "missing.dsrec"),
        (scratch / "folder", "folder"),
        (scratch / "garbage.dsrec", "garbage.dsrec:1:"),
        (scratch / "empty.dsrec", "empty.dsrec"),
        (scratch / "bad.json", "bad.json:3:"),
        (scratch / "incomplete.json", "incomplete.json: not a complete report"),
        (scratch / "reordered.dsrec", "reordered.dsrec"),
    ]
    for path, names in cases:
        e = run(diescope, path, "--output", scratch / "never")
        err = e.stderr.splitlines()
        check(e.returncode not in (0, 70) and e.returncode > 0, f"{path.name}: exit code {e.returncode}")
        check(len(err) == 2 and err[0].startswith("diescope: error: ") and names in err[0],
              f"{path.name}: message {e.stderr!r} should name {names!r}")
        check(len(err) == 2 and err[1].startswith("  fix: "), f"{path.name}: no fix in {e.stderr!r}")
    check(not (scratch / "never").exists(), "a failed report leaves no output folder")

    return test.finish()


if __name__ == "__main__":
    sys.exit(main())
