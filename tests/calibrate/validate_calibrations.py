#!/usr/bin/env python3
"""Validates every calibration file the calibrate tests wrote against docs/calibration.schema.json,
and the rule a schema cannot say: a null figure has '<name>_reason' (or 'reason') beside it.
Fails when the folder holds no file. With --self-test it also breaks a valid file in several ways
and fails unless each broken copy is rejected, so the checks themselves are tested."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from schema_check import (accepted_breakages, check_files, load_validator, null_reason_problems,  # noqa: E402
                          parse_args, self_test_status, sorted_schema_problems)


def problems_of(doc, validator):
    return sorted_schema_problems(doc, validator) + null_reason_problems(doc)


def self_test(good, validator):
    breakages = {
        "old schema": lambda d: d.update(schema=2),
        "no driver": lambda d: d["gpu"].pop("driver"),
        "bad verdict": lambda d: d["units"][0].update(verdict="passed"),
        "null figure without reason": lambda d: d["units"][0]["check"]["steps"][0].update(reading_pct=None),
        "bad date": lambda d: d.update(date="2026-11-30 12:34"),
    }
    return accepted_breakages(good, breakages, lambda broken: problems_of(broken, validator))


def main():
    args = parse_args()
    validator = load_validator(args.schema)
    files = sorted(pathlib.Path(args.folder).glob("*.json"))
    if not files:
        print(f"validate_calibrations: no calibration files in {args.folder}")
        return 1
    bad, sample = check_files("validate_calibrations", "calibration files", files,
                              lambda d: problems_of(d, validator))
    failed = self_test_status("validate_calibrations", sample, lambda d: self_test(d, validator)) if args.self_test else 0
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
