#!/usr/bin/env python3
"""Whether a change of the method version moved anything but the method's number.

Renders each recording with two diescope binaries in every format (terminal, report.json,
samples.csv, report.html, trace.json, and what the command printed), takes out what names the
method (the method number, and the note "recorded by a method N collector, analysed with method M"
that a recording of another method gets) and the tool's own version, and compares the rest.

    bench/report/method_only.py BEFORE_DIESCOPE AFTER_DIESCOPE [RECORDING...]

RECORDING defaults to every data/recordings/**/*.dsrec. Prints one row per recording (the files
compared and, where any differs, which) and exits 1 when any output differs beyond the method.
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

METHOD_NOTE = re.compile(r"recorded by a method \d+ collector, analysed with method \d+")
METHOD_WORD = re.compile(r"method \d+")
TOOL_VERSION = re.compile(r"diescope \d+\.\d+\.\d+")


def render(binary, recording, out):
    done = subprocess.run([binary, "report", str(recording), "--format", "terminal,json,csv,html,trace",
                           "--output", str(out)], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout.replace(str(out), "OUT")


def text_without_method(text):
    lines = [line for line in text.splitlines() if not METHOD_NOTE.search(line)]
    return [TOOL_VERSION.sub("diescope X", METHOD_WORD.sub("method N", line)) for line in lines]


def report_without_method(path):
    r = json.loads(path.read_text())
    r.pop("method", None)
    r.pop("tool", None)
    r["notes"] = [n for n in r.get("notes", []) if n.get("topic") != "method"]
    return r


def trace_without_method(path):
    t = json.loads(path.read_text())
    t.get("otherData", {}).pop("method", None)
    t["traceEvents"] = [e for e in t.get("traceEvents", []) if e.get("name") != "method"]
    return t


def compare(before, after, recording, work):
    outs = []
    for name, binary in (("before", before), ("after", after)):
        out = work / name / recording.name
        rc, printed = render(binary, recording, out)
        outs.append((rc, printed, out))
    (rc_b, printed_b, b), (rc_a, printed_a, a) = outs
    differ = []
    if rc_b != rc_a:
        differ.append(f"exit code {rc_b} vs {rc_a}")
    if text_without_method(printed_b) != text_without_method(printed_a):
        differ.append("printed")
    files = sorted(p.name for p in a.iterdir())
    if sorted(p.name for p in b.iterdir()) != files:
        differ.append("file list")
    for f in files:
        fb, fa = b / f, a / f
        if not fb.exists():
            continue
        if f == "report.json":
            same = report_without_method(fb) == report_without_method(fa)
        elif f == "trace.json":
            same = trace_without_method(fb) == trace_without_method(fa)
        elif f == "samples.csv":
            same = fb.read_bytes() == fa.read_bytes()
        else:
            same = text_without_method(fb.read_text()) == text_without_method(fa.read_text())
        if not same:
            differ.append(f)
    return files, differ


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    before, after = argv[1], argv[2]
    recordings = [Path(p) for p in argv[3:]] or sorted(Path("data/recordings").rglob("*.dsrec"))
    status = 0
    print("recording,files,beyond the method")
    with tempfile.TemporaryDirectory() as tmp:
        for recording in recordings:
            files, differ = compare(before, after, recording, Path(tmp))
            status |= bool(differ)
            print(f"{recording},{' '.join(files)},{'; '.join(differ) if differ else 'nothing'}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
