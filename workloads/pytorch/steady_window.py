"""The timed part the PyTorch workloads share: warm-up, the window markers diescope's
`run --window markers` reads, the timed steps (optionally the first K between cudaProfilerStart and
cudaProfilerStop), and an early end on SIGTERM or SIGINT.

Free of PyTorch itself (the caller passes its synchronise and profiler calls), so its order of events
is tested on the CPU (tests/scripts/steady_window_test.py).
"""
import json
import signal
import time

START = "diescope: measure start"
STOP = "diescope: measure stop"


def run_window(step, *, steps, warmup, sync, profiler_start=None, profiler_stop=None, profile_steps=0,
               seconds=0.0, log_every_s=0.0, out=None, clock=time.perf_counter, wall=time.time):
    """Runs `warmup` untimed steps and synchronises, then the window: prints START (flushed), runs
    `steps` steps (or, with seconds > 0, steps for that long), synchronises and prints STOP. With
    profile_steps K, profiler_start runs before the first timed step and profiler_stop after the
    K-th. With log_every_s, inside the window it synchronises about that often and prints a progress
    JSON line with the wall time and the steps done so far (steps count only once the GPU has
    finished them). SIGTERM or SIGINT ends the window after the current step, still printing STOP.
    Returns (timed steps done, seconds between START and STOP). `out` defaults to print, looked up
    when called (a wrapper that replaces builtins.print to watch the markers still sees them)."""
    out = out or print
    for _ in range(warmup):
        step()
    sync()

    # Set explicitly: a shell starts background jobs with SIGINT ignored, and Python keeps an
    # inherited ignore.
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))

    out(START, flush=True)
    t0 = clock()
    done = 0
    last_log = t0
    if log_every_s > 0:
        out(json.dumps({"progress": {"wall_s": wall(), "steps": 0}}), flush=True)
    while not stop and ((done < steps) if seconds <= 0 else (clock() - t0 < seconds)):
        if done == 0 and profile_steps:
            profiler_start()
        step()
        done += 1
        if done == profile_steps:
            profiler_stop()
        if log_every_s > 0 and clock() - last_log >= log_every_s:
            sync()
            last_log = clock()
            out(json.dumps({"progress": {"wall_s": wall(), "steps": done}}), flush=True)
    sync()
    elapsed = clock() - t0
    out(STOP, flush=True)
    return done, elapsed
