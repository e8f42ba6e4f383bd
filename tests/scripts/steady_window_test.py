#!/usr/bin/env python3
"""workloads/pytorch/steady_window.py on the CPU: the order of warm-up, markers, profiler calls and
synchronises; the seconds mode with progress lines; an early end on SIGTERM. A fake clock that only
steps advance (0.4 s a step), so every expected value is worked out below by hand.

    steady_window_test.py REPO_ROOT
"""
import ast
import json
import os
import signal
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "workloads", "pytorch"))
import steady_window  # noqa: E402

fails = 0


def check(what, expected, actual):
    global fails
    if expected != actual:
        print(f"FAIL {what}: expected {expected!r}, got {actual!r}")
        fails += 1
    else:
        print(f"ok   {what}")


class Fake:
    def __init__(self, on_step=None):
        self.t = 100.0
        self.events = []
        self.on_step = on_step

    def step(self):
        self.t += 0.4
        self.events.append("step")
        if self.on_step:
            self.on_step(self)

    def out(self, text, flush=False):
        check(f"{text[:30]} is flushed", True, flush)
        self.events.append(text if not text.startswith("{") else json.loads(text)["progress"]["steps"])

    def kw(self):
        return dict(sync=lambda: self.events.append("sync"), profiler_start=lambda: self.events.append("pstart"),
                    profiler_stop=lambda: self.events.append("pstop"), out=self.out, clock=lambda: self.t,
                    wall=lambda: 0.0)


# 2 warm-up steps, 3 timed, the first profiled: warm-up and a synchronise before START; the profiler
# around the first timed step only; a synchronise before STOP; 3 steps in 3 x 0.4 = 1.2 s.
f = Fake()
done, elapsed = steady_window.run_window(f.step, steps=3, warmup=2, profile_steps=1, **f.kw())
check("steps mode: events", ["step", "step", "sync", steady_window.START, "pstart", "step", "pstop", "step", "step",
                             "sync", steady_window.STOP], f.events)
check("steps mode: steps and seconds", (3, 1.2), (done, round(elapsed, 6)))

# Two profiled steps of three: the profiler stops after the second.
f = Fake()
steady_window.run_window(f.step, steps=3, warmup=0, profile_steps=2, **f.kw())
check("two profiled steps", ["sync", steady_window.START, "pstart", "step", "step", "pstop", "step", "sync",
                             steady_window.STOP], f.events)

# Seconds mode, 1.0 s with a progress line every 0.5 s: steps end at 0.4, 0.8, 1.2 s (the loop tests
# the time before each step, so the third runs at 0.8 < 1.0); a line at the start (0 steps), one
# after the second step (0.8 - 0 >= 0.5, after a synchronise), none after the third (1.2 - 0.8 < 0.5).
f = Fake()
done, elapsed = steady_window.run_window(f.step, steps=0, warmup=0, seconds=1.0, log_every_s=0.5, **f.kw())
check("seconds mode: events", ["sync", steady_window.START, 0, "step", "step", "sync", 2, "step", "sync",
                               steady_window.STOP], f.events)
check("seconds mode: steps and seconds", (3, 1.2), (done, round(elapsed, 6)))


# SIGTERM during the second of five timed steps ends the window after it, and STOP still comes.
def term_on_second(fake):
    if fake.events.count("step") == 2:
        os.kill(os.getpid(), signal.SIGTERM)


f = Fake(term_on_second)
done, _ = steady_window.run_window(f.step, steps=5, warmup=0, **f.kw())
check("SIGTERM: steps done", 2, done)
check("SIGTERM: STOP printed", steady_window.STOP, f.events[-1])
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, signal.SIG_DFL)

# The workloads use it (their own loop is gone). Each defines the main() it calls: these scripts need a
# GPU to run, so CPU CI checks their shape from the source.
for name in ("resnet50_amp.py", "gpt_bf16.py", "augment_train.py"):
    text = open(os.path.join(sys.argv[1], "workloads", "pytorch", name)).read()
    top = [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    check(f"{name} defines main()", True, "main" in top)
    check(f"{name} imports run_window", True, "from steady_window import run_window" in text)
    check(f"{name} has no marker of its own", False, "measure start" in text.split('"""', 2)[2])
# The two training workloads share one mixed-precision step (amp_step.py), not a copy each.
for name in ("resnet50_amp.py", "augment_train.py"):
    text = open(os.path.join(sys.argv[1], "workloads", "pytorch", name)).read()
    check(f"{name} imports amp_train_step", True, "from amp_step import amp_train_step" in text)
    check(f"{name} has no GradScaler step of its own", False, "scaler.step(" in text)

if fails:
    print(f"{fails} check(s) failed")
    sys.exit(1)
print("all checks passed")
