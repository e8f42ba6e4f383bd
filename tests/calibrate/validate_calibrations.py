#!/usr/bin/env python3
"""Validates every calibration file the calibrate tests wrote against docs/calibration.schema.json,
and the rule a schema cannot say: a null figure has '<name>_reason' (or 'reason') beside it.
Fails when the folder holds no file. With --self-test it also breaks a valid file in several ways
and fails unless each broken copy is rejected, so the checks themselves are tested."""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from schema_check import accepted_breakages, load_validator, null_reason_problems, parse_args  # noqa: E402


def problems_of(doc, validator):
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    return problems + null_reason_problems(doc)


def main():
    args = parse_args()
    validator = load_validator(args.schema)
    files = sorted(pathlib.Path(args.folder).glob("*.json"))
    if not files:
        print(f"no calibration files in {args.folder}", file=sys.stderr)
        return 1
    failed = 0
    for f in files:
        problems = problems_of(json.loads(f.read_text()), validator)
        for p in problems:
            print(f"{f.name}: {p}", file=sys.stderr)
        failed += bool(problems)
    if args.self_test:
        good = json.loads(files[0].read_text())
        breakages = {
            "old schema": lambda d: d.update(schema=2),
            "no driver": lambda d: d["gpu"].pop("driver"),
            "bad verdict": lambda d: d["units"][0].update(verdict="passed"),
            "null figure without reason": lambda d: d["units"][0]["check"]["steps"][0].update(reading_pct=None),
            "bad date": lambda d: d.update(date="2026-11-30 12:34"),
        }
        for name in accepted_breakages(good, breakages, lambda broken: problems_of(broken, validator)):
            print(f"self-test: a file with '{name}' was accepted", file=sys.stderr)
            failed += 1
    print(f"{len(files)} calibration file(s) checked, {failed} problem(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
