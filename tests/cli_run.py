"""What the command-line tests under tests/ share: a fresh scratch folder, the diescope binary run in it
with its output captured, the checks counted and the failures listed at the end, and the environment
that puts the stand-in libnvidia-ml.so.1 (tests/rounds/fake_libnvidia_ml.cpp) first on the library path.

The tests import it by adding tests/ to sys.path, as the JSON validators do with schema_check.py, so
CTest runs them as plain scripts.
"""
import os
import shutil
import subprocess


class CliTest:
    """One test script's checks: `check` counts each and keeps the failures, `finish` prints them."""

    def __init__(self, name, diescope, scratch):
        self.name = name
        self.diescope = diescope
        self.scratch = scratch
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
        self.failures = []
        self.cases = 0

    def check(self, name, condition, detail=""):
        self.cases += 1
        if not condition:
            self.failures.append(f"{name}\n{detail}")

    def run(self, args, env=None, timeout=120, cwd=None):
        """diescope ARGS in the scratch folder (or `cwd`), stdout and stderr captured as text."""
        return subprocess.run([self.diescope, *map(str, args)], cwd=cwd or self.scratch, capture_output=True,
                              text=True, timeout=timeout, env=env)

    def finish(self, note=""):
        """Prints each failure and the count; the script's exit status."""
        for f in self.failures:
            print("FAIL", f)
        print(f"{self.name}: {self.cases - len(self.failures)} of {self.cases} checks passed{note}")
        return 1 if self.failures else 0


def outcome(r):
    """A finished command's exit status and both streams, for a failed check's detail."""
    return f"exit {r.returncode}\n--- stdout:\n{r.stdout}\n--- stderr:\n{r.stderr}"


def fake_nvml_env(nvml_dir, **extra):
    """This process's environment with the stand-in NVML folder first on LD_LIBRARY_PATH, plus `extra`."""
    return dict(os.environ, LD_LIBRARY_PATH=nvml_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""), **extra)
