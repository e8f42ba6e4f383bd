#!/usr/bin/env python3
"""Two GPUs through the command line, on a stand-in host (docs/method.md#several-gpus).

The real diescope binary runs with a stand-in libnvidia-ml.so.1 of two GPUs on LD_LIBRARY_PATH
(tests/rounds/fake_libnvidia_ml.cpp: DIESCOPE_FAKE_NVML_GPUS=2, GPU-Util per GPU from
DIESCOPE_FAKE_NVML_GPU_UTIL) and the fake sampler child, each GPU's unit values held at a known
level (--fake-level DEVICE:PCT). Every chip unit of GPU N then reads PCT in every sample, so its
DIE-Util (the busiest unit, time-weighted) is PCT where PCT is above the stand-in's video decoder
(12%, an NVML engine; 0 on a GPU given GPU-Util 0), and NVML's polled GPU-Util is the whole percent given.

  run, two GPUs at 60 and 20 (GPU-Util 97 and 88): a recording and a report per GPU, a headline
      per GPU, the summary: least used GPU 1 (20.0), 60.0 - 20.0 = 40.0 points below GPU 0; gpus.json.
  run --gpus 1: only gpu1.dsrec, its report is GPU 1's (DIE-Util 20.0, its own UUID); no summary.
  run, GPU 1 idle (GPU-Util 0, level 0): "only GPU 0 was busy".
  run --source gpm with NVLink at 1000 MiB/s each way: 1000 x 2^20 = 1,048,576,000 B/s per GPU.
  bench --rounds 3: per-GPU rows, both GPUs keep rounds 1 to 3, means 60.00 and 20.00.
  agent: /metrics scraped as text; every series carries gpu="0" or gpu="1" and that GPU's uuid.
  top --once, live: both GPUs; top --replay of the two recordings in tmux, read with capture-pane.

Usage: multi_gpu_cli_test.py DIESCOPE SCRATCH FAKE_NVML_DIR FAKE_SAMPLER
"""
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cli_run import CliTest, fake_nvml_env, outcome  # noqa: E402  (tests/cli_run.py)

STEADY = "echo 'diescope: measure start'; sleep 0.6; echo 'diescope: measure stop'"
FAST = ["--interval-ms", "10", "--drain-ms", "50"]
UUID0 = "GPU-00000000-1111-2222-3333-444444444444"
UUID1 = "GPU-00000000-1111-2222-3333-444444444441"


def main():
    diescope, scratch, nvml_dir, fake_sampler = (os.path.abspath(a) for a in sys.argv[1:5])
    t = CliTest("multi_gpu_cli_test", diescope, scratch)
    check, run = t.check, t.run

    def wrapper(name, levels):
        """A DIESCOPE_CUPTI stand-in: the fake sampler child with the given --fake-level per GPU."""
        path = os.path.join(scratch, name + ".sh")
        extra = " ".join(f"--fake-level {d}:{p}" for d, p in levels.items())
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\n[ "$1" = sample ] && shift\nexec "{fake_sampler}" "$@" {extra}\n')
        os.chmod(path, 0o755)
        return path

    def env_of(utils, levels, nvlink_mibs=0, gpus=2):
        return fake_nvml_env(nvml_dir, DIESCOPE_FAKE_NVML_GPUS=str(gpus),
                             DIESCOPE_FAKE_NVML_GPU_UTIL=",".join(map(str, utils)),
                             DIESCOPE_FAKE_NVML_NVLINK_MIBS=str(nvlink_mibs),
                             DIESCOPE_CUPTI=wrapper("sampler-" + "-".join(f"{d}_{p}" for d, p in levels.items()),
                                                    levels))

    def load(path):
        with open(path) as f:
            return json.load(f)

    def headline(report):
        return report["window"]["results"]["headline"] if report["window"]["found"] else report["results"]["headline"]

    # --- run over two GPUs -------------------------------------------------------------------------
    two = env_of([97, 88], {0: 60, 1: 20})
    out = os.path.join(scratch, "run-two")
    r = run(["run", *FAST, "--window", "markers", "--output", out, "--", "/bin/sh", "-c", STEADY], two)
    detail = outcome(r)
    check("two GPUs: exit 0", r.returncode == 0, detail)
    check("two GPUs: a recording per GPU", all(os.path.exists(os.path.join(out, f"gpu{i}.dsrec")) for i in (0, 1)),
          str(os.listdir(out) if os.path.isdir(out) else "no folder"))
    check("two GPUs: a headline per GPU", "\nGPU 0\n" in r.stdout and "\nGPU 1\n" in r.stdout, detail)
    try:
        rep = [load(os.path.join(out, f"gpu{i}.dsrec.report", "report.json")) for i in (0, 1)]
        check("two GPUs: each report is its GPU's", [x["gpu"]["index"] for x in rep] == [0, 1]
              and [x["gpu"]["uuid"] for x in rep] == [UUID0, UUID1], json.dumps([x["gpu"] for x in rep]))
        check("two GPUs: DIE-Util 60.0 and 20.0", [headline(x)["die_util_pct"] for x in rep] == [60.0, 20.0],
              json.dumps([headline(x) for x in rep]))
        check("two GPUs: GPU-Util 97.0 and 88.0", [headline(x)["gpu_util_pct"] for x in rep] == [97.0, 88.0],
              json.dumps([headline(x) for x in rep]))
        summary = load(os.path.join(out, "gpus.json"))
        check("two GPUs: gpus.json", summary["least_used_gpu"] == 1 and summary["most_used_gpu"] == 0
              and summary["gap_points"] == 40.0 and summary["busy_gpus"] == [0, 1]
              and [g["uuid"] for g in summary["gpus"]] == [UUID0, UUID1]
              and all(g["span"] == "window" for g in summary["gpus"]), json.dumps(summary))
    except (OSError, ValueError, KeyError) as e:
        check("two GPUs: files", False, repr(e))
    check("two GPUs: the summary names the least-used GPU and the gap",
          "least used: GPU 1 (DIE-Util 20.0%), 40.0 points below GPU 0 (60.0%)" in r.stdout
          and "busy: every GPU was busy (GPU-Util at least 5%)" in r.stdout
          and "All 2 GPUs, over each GPU's steady window:" in r.stdout, detail)
    check("two GPUs: NVLink named as not counted by PM sampling's table",
          "NVLink: n/a (the recording's unit table counts no NVLink bytes" in r.stdout, detail)
    two_gpu_run = out

    # --- --gpus 1 -----------------------------------------------------------------------------------
    out = os.path.join(scratch, "run-gpu1")
    r = run(["run", *FAST, "--window", "markers", "--gpus", "1", "--output", out, "--", "/bin/sh", "-c", STEADY], two)
    detail = outcome(r)
    check("--gpus 1: exit 0", r.returncode == 0, detail)
    made = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check("--gpus 1: only GPU 1 recorded, no summary", made == ["gpu1.dsrec", "gpu1.dsrec.report"], str(made))
    try:
        rep = load(os.path.join(out, "gpu1.dsrec.report", "report.json"))
        check("--gpus 1: GPU 1's figures", rep["gpu"]["index"] == 1 and rep["gpu"]["uuid"] == UUID1
              and headline(rep)["die_util_pct"] == 20.0 and headline(rep)["gpu_util_pct"] == 88.0,
              json.dumps(rep["gpu"]) + json.dumps(headline(rep)))
    except (OSError, ValueError, KeyError) as e:
        check("--gpus 1: report", False, repr(e))
    check("--gpus 1: no combined summary", "least used" not in r.stdout, detail)
    r = run(["run", "--gpus", "2", "--", "/bin/true"], two)
    check("--gpus 2 on a two-GPU host: refused with the fix", r.returncode != 0 and "GPU" in r.stderr
          and "fix:" in r.stderr, r.stderr)

    # --- one busy GPU -------------------------------------------------------------------------------
    out = os.path.join(scratch, "run-one-busy")
    r = run(["run", *FAST, "--window", "markers", "--output", out, "--", "/bin/sh", "-c", STEADY],
            env_of([97, 0], {0: 60, 1: 0}))
    detail = outcome(r)
    check("one busy: exit 0", r.returncode == 0, detail)
    check("one busy: says so", "busy: only GPU 0 was busy (GPU-Util at least 5%); GPU 1 was idle" in r.stdout
          and "least used: GPU 1 (DIE-Util 0.0%), 60.0 points below GPU 0 (60.0%)" in r.stdout, detail)
    try:
        summary = load(os.path.join(out, "gpus.json"))
        check("one busy: gpus.json", summary["busy_gpus"] == [0] and summary["idle_gpus"] == [1]
              and summary["gpus"][1]["busy"] is False, json.dumps(summary))
    except (OSError, ValueError, KeyError) as e:
        check("one busy: gpus.json", False, repr(e))

    # --- NVLink from GPM ----------------------------------------------------------------------------
    out = os.path.join(scratch, "run-gpm")
    r = run(["run", "--source", "gpm", "--interval-ms", "100", "--drain-ms", "100", "--output", out, "--",
             "/bin/sh", "-c", "sleep 1.5"], env_of([97, 88], {0: 60, 1: 20}, nvlink_mibs=1000))
    detail = outcome(r)
    check("gpm: exit 0", r.returncode == 0, detail)
    try:
        summary = load(os.path.join(out, "gpus.json"))
        rates = [(g["nvlink_tx_bytes_per_s"], g["nvlink_rx_bytes_per_s"]) for g in summary["gpus"]]
        check("gpm: NVLink 1000 MiB/s each way is 1,048,576,000 B/s on each GPU",
              len(rates) == 2 and all(x is not None and abs(x / 1048576000.0 - 1) < 1e-6 for pair in rates for x in pair),
              json.dumps(summary))
    except (OSError, ValueError, KeyError) as e:
        check("gpm: gpus.json", False, repr(e) + detail)
    check("gpm: NVLink printed per GPU", "NVLink GPU 0: sent 1.05 GB/s, received 1.05 GB/s" in r.stdout
          and "NVLink GPU 1: sent 1.05 GB/s, received 1.05 GB/s" in r.stdout, detail)

    # --- bench --rounds 3 ---------------------------------------------------------------------------
    out = os.path.join(scratch, "bench-two")
    r = run(["bench", "--rounds", "3", *FAST, "--output", out, "--", "/bin/sh", "-c", STEADY], two, timeout=300)
    detail = outcome(r)
    check("bench: exit 0", r.returncode == 0, detail)
    check("bench: per-GPU rows", re.search(r"\nGPU 0[^\n]*: 3 of 3 rounds kept", r.stdout) is not None
          and re.search(r"\nGPU 1[^\n]*: 3 of 3 rounds kept", r.stdout) is not None,
          detail)
    try:
        bench = load(os.path.join(out, "bench.json"))
        gpus = {g["index"]: g for g in bench["gpus"]}
        check("bench: both GPUs keep rounds 1-3", sorted(gpus) == [0, 1]
              and all(g["kept_rounds"] == [1, 2, 3] for g in gpus.values()), json.dumps(bench)[:3000])
        means = {i: next(f["mean"] for f in g["statistics"] if f["key"] == "die_util_pct") for i, g in gpus.items()}
        check("bench: DIE-Util means 60 and 20", means == {0: 60.0, 1: 20.0}, json.dumps(means))
    except (OSError, ValueError, KeyError, TypeError) as e:
        check("bench: bench.json", False, repr(e) + "\n" + detail)

    # --- agent /metrics -----------------------------------------------------------------------------
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent_env = env_of([97, 88], {})
    p = subprocess.Popen([diescope, "agent", "--no-db", "--listen", f"127.0.0.1:{port}", "--duty-on-ms", "500",
                          "--duty-period-ms", "1000", "--drain-ms", "100", "--sampler", fake_sampler,
                          "--sampler-arg=--fake-level", "--sampler-arg=0:60", "--sampler-arg=--fake-level",
                          "--sampler-arg=1:20"], cwd=scratch, env=agent_env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    body = ""
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            if re.search(r'diescope_die_util_percent\{[^}]*gpu="1"', body) and re.search(
                    r'diescope_die_util_percent\{[^}]*gpu="0"', body) and "diescope_host_metric{" in body:
                break
        except OSError:
            pass
        time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    try:
        a_out, a_err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        a_out, a_err = p.communicate()
    series = [line for line in body.splitlines() if line and not line.startswith("#")]
    gpu_series = [line for line in series if line.startswith("diescope_") and "{" in line]
    unlabelled = [line for line in series if line.startswith("diescope_gpu") or line.startswith("diescope_die")
                  if 'gpu="' not in line]
    check("agent: series for both GPUs", any('gpu="0"' in l for l in series) and any('gpu="1"' in l for l in series),
          body[:4000] + a_err[-2000:])
    labels_ok = all((f'gpu="0"' in l and f'UUID="{UUID0}"' in l) or (f'gpu="1"' in l and f'UUID="{UUID1}"' in l)
                    for l in gpu_series if 'gpu="' in l)
    check("agent: every per-GPU series has its GPU's index and UUID", labels_ok and not unlabelled,
          "\n".join(l for l in gpu_series if 'UUID="' not in l)[:3000] + "\n" + "\n".join(unlabelled)[:1000])
    die = {m.group(1): float(m.group(2)) for m in re.finditer(r'diescope_die_util_percent\{[^}]*gpu="(\d)"[^}]*\} (\S+)', body)}
    check("agent: DIE-Util 60 and 20", die == {"0": 60.0, "1": 20.0}, json.dumps(die) + "\n" + body[:3000])
    # The host probes read this machine's own /proc (docs/agent.md): host CPU busy as a share of
    # every logical CPU (0 to 100) and memory available (more than 0 bytes), one series each.
    host = {m.group(1): float(m.group(2)) for m in re.finditer(
        r'diescope_host_metric\{metric="([^"]+)",scope="system",unit="[^"]*",stat="mean"\} (\S+)', body)}
    cpu = host.get("cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", float("nan"))
    mem = host.get("mem__available_bytes", float("nan"))
    check("agent: host probes on /metrics from this machine's /proc", 0 <= cpu <= 100 and mem > 0,
          json.dumps(host) + "\n" + body[-3000:])

    # --- top ----------------------------------------------------------------------------------------
    r = run(["top", "--once", "--drain-ms", "500", "--sampler", fake_sampler, "--sampler-arg=--fake-level",
             "--sampler-arg=0:60", "--sampler-arg=--fake-level", "--sampler-arg=1:20"], agent_env, timeout=60)
    detail = outcome(r)
    check("top --once: both GPUs", r.returncode == 0 and re.search(r"GPU 0\b", r.stdout) is not None
          and re.search(r"GPU 1\b", r.stdout) is not None, detail)
    if shutil.which("tmux"):
        sock = f"diescope-multi-{os.getpid()}"
        rec0, rec1 = (os.path.join(two_gpu_run, f"gpu{i}.dsrec") for i in (0, 1))
        cmd = f"'{diescope}' top --replay '{rec0}' --replay '{rec1}' --replay-loop; sleep 60"
        subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", "top", "-x", "120", "-y", "40", "sh", "-c", cmd],
                       env=agent_env, check=False)
        screen = ""
        deadline = time.time() + 20
        while time.time() < deadline:
            time.sleep(0.5)
            screen = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-t", "top"], capture_output=True,
                                    text=True).stdout
            if re.search(r"GPU 0\b", screen) and re.search(r"GPU 1\b", screen) and "60.0" in screen and "20.0" in screen:
                break
        subprocess.run(["tmux", "-L", sock, "send-keys", "-t", "top", "q"], check=False)
        time.sleep(0.3)
        subprocess.run(["tmux", "-L", sock, "kill-server"], check=False)
        with open(os.path.join(scratch, "top-two-gpus.txt"), "w") as f:
            f.write(screen)
        check("top in tmux: both GPUs on screen, DIE-Util 60.0 and 20.0",
              re.search(r"GPU 0\b", screen) is not None and re.search(r"GPU 1\b", screen) is not None
              and "60.0" in screen and "20.0" in screen, screen)
    else:
        print("top in tmux: skipped, tmux is not installed (scripts/setup.sh installs it)")

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
