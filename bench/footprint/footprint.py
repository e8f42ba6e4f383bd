#!/usr/bin/env python3
"""diescope's own footprint on a GPU machine, each figure beside its peer measured in the same run.

    footprint.py OUT_DIR WORK_DIR [SECTION ...]     (run through bench/footprint/footprint.sh)

Sections (all by default, in this order):
  agent    `diescope agent` at its defaults for 62 s (one duty period): its CPU, wake-ups (context
           switches of all its threads), RSS split by /proc/PID/smaps (anonymous, file-backed, NVML's
           library, heap, anonymous mappings) and its sampler child's; beside it for the whole span
           nvml_poll at the agent's own poll (1 s), whose RSS is NVML's share; then /metrics latency
           with 1 scraper, 100 and 16 in parallel (bench/footprint/metrics_load), and the same rounds
           against bench/footprint/metrics_peer (a minimal server, the floor). With a GPU, also a bare
           CUDA program (RSS), `nvidia-smi dmon`, `nvidia-smi --query-gpu ... -lms 100` and nvml_poll
           at 10 and 1 ms for 20 s (CPU from /proc/PID/stat, start-up included). AGENT_ARGS adds
           arguments to the agent (the CPU machine's fake sampler); BEFORE_BIN names a folder with
           another build's diescope measured the same way after it (memory.tsv, agent.tsv).
  peers    what a user would run instead, GPU idle, 22 s: a bare CUDA program, `nvidia-smi dmon`,
           `nvidia-smi --query-gpu ... -lms 100`, nvml_poll at 10 and 1 ms (CPU from /proc/PID/stat,
           steady and with start-up; peak RSS); where the bare CUDA program's memory goes (smaps);
           nvml_call_cost (each NVML read run makes), when in BIN.
  idle     `diescope run -- sleep` at 10 ms and 1 ms, and at 10 ms without host probes (22 s each;
           FOOTPRINT_IDLE=interval_ms:host_interval_ms:seconds,... for others): CPU of run
           and its sampler child over the steady part (from /proc/PID/stat), their RSS, the probes'
           own CPU (the recording's host_probes note), the child's stage times, and where the
           child's and run's memory goes (/proc/PID/smaps by mapping, mid-run).
  heldout  the held-out checks (FFMA on 132, 66 and 33 SMs, STREAM copy, an L2-resident copy) under
           `diescope run` at 10, 1 and 0.1 ms; at 0.1 ms each lasts 12 s (over 60 s sustained);
           FOOTPRINT_HELDOUT=interval_ms:drain_ms:seconds_each,... for others.
           Per window the unit means; per run the samples lost, overflow, the child's stage times.
  minimal  bench/footprint/pm_minimal (CUPTI alone, with evaluation and a 20 MiB hardware buffer as
           the child's) beside FFMA at 0.1 ms (10 ms decodes, 12 s), 1 ms (100 ms decodes) and 10 ms
           (1 s decodes): its CPU, peak RSS and where its memory goes (smaps); then a 4 MiB buffer
           decoded once after 2.5 s at 10 and 1 ms (does it overflow: a bound on a raw sample's bytes).
  margin   (asked for by name) the agent of BEFORE_BIN's build and of BIN's in turn, before, after,
           before, after (MARGIN_PAIRS pairs), AGENT_SECONDS (62) each at its defaults, one at a time,
           nothing scraping: CPU (/proc/PID/stat, and its live threads' schedstat), the main thread's
           share, wake-ups, the sampler child's CPU (margin.tsv, margin.txt).
  scrape   (asked for by name) /metrics with bench/footprint/metrics_scrape (100 scrapers at once from
           4 or 8 epoll threads, a new connection a scrape) against the agent of each build in
           SCRAPE_AGENTS ("label=folder,..."; default BIN's) and metrics_peer with a body of the agent's
           size; metrics_load's 100 client threads beside them (scrape.tsv, times-*.tsv).

Environment: BIN (the folder with diescope, diescope-cupti, diescope-workload, pm_minimal,
nvml_poll, bare_cuda). Clocks and limits are read, never set. OUT_DIR gets small tables; raw outputs
stay in WORK_DIR.
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

BIN = os.environ.get("BIN", "build/release/bin")
TCK = os.sysconf("SC_CLK_TCK")
OUT, WORK = sys.argv[1], sys.argv[2]
SECTIONS = sys.argv[3:] or ["agent", "peers", "idle", "heldout", "minimal"]
os.makedirs(OUT, exist_ok=True)
os.makedirs(WORK, exist_ok=True)


def exe(name):
    return os.path.join(BIN, name)


def log(*a):
    print("footprint:", *a, file=sys.stderr, flush=True)


def write(name, text):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)


def tsv(name, header, rows):
    write(name, "\t".join(header) + "\n" + "".join("\t".join(str(x) for x in r) + "\n" for r in rows))


def cpu_s(pid):
    """utime + stime of one process, in seconds (the fields after the command's closing paren)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / TCK
    except (OSError, IndexError):
        return float("nan")


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def smaps_groups(pid):
    """Resident kB of one process by what is mapped: CUDA's driver, CUPTI, nvperf, NVML, other
    libraries, the program itself, the heap, anonymous memory, the rest; and the total."""
    groups = {}
    name = "?"
    try:
        exe_path = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split()
                if not head:
                    continue
                if "-" in head[0] and not head[0].endswith(":"):
                    path = head[5] if len(head) > 5 else ""
                    base = os.path.basename(path)
                    if path == exe_path:
                        name = "program"
                    elif base.startswith("libcuda.") or base.startswith("libcudadebugger"):
                        name = "libcuda"
                    elif base.startswith("libcupti"):
                        name = "libcupti"
                    elif base.startswith("libnvperf"):
                        name = "libnvperf"
                    elif base.startswith("libnvidia-ml"):
                        name = "libnvidia-ml"
                    elif ".so" in base:
                        name = "other libraries"
                    elif path == "[heap]":
                        name = "heap"
                    elif path.startswith("/dev/nvidia"):
                        name = "/dev/nvidia*"
                    elif path == "":
                        name = "anonymous"
                    else:
                        name = "other"
                elif head[0] == "Rss:":
                    groups[name] = groups.get(name, 0) + int(head[1])
    except OSError:
        return {}
    groups["total"] = sum(groups.values())
    return groups


def smaps_rows(label, pid):
    g = smaps_groups(pid)
    return [[label, k, f"{v / 1024:.1f}"] for k, v in sorted(g.items(), key=lambda kv: -kv[1])]


def children(pid, name=None):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        comm = s[s.index("(") + 1 : s.rindex(")")]
        ppid = int(s.rsplit(")", 1)[1].split()[1])
        if ppid == pid and (name is None or comm.startswith(name)):
            out.append(int(d))
    return out


class Watch:
    """Start and steady CPU of a process, and its peak RSS, read from /proc while it runs."""

    def __init__(self, pid, started):
        self.pid, self.started = pid, started
        self.peak = 0.0
        self.marks = {}

    def poll(self):
        r = rss_mb(self.pid)
        if r == r:
            self.peak = max(self.peak, r)

    def mark(self, key):
        # A process that has ended keeps its last reading: a run's sampler child ends before the run
        # does, and its CPU up to then is the figure.
        c = cpu_s(self.pid)
        if c == c or key not in self.marks:
            self.marks[key] = (time.monotonic(), c)

    def pct(self, a, b):
        (ta, ca), (tb, cb) = self.marks[a], self.marks[b]
        return 100 * (cb - ca) / (tb - ta)

    def pct_since_start(self, b):
        tb, cb = self.marks[b]
        return 100 * cb / (tb - self.started)


def fmt(x, digits=2):
    return "nan" if x != x else f"{x:.{digits}f}"


# ---------------------------------------------------------------- agent and peers
def wakeups(pid):
    """Context switches of every thread of a process so far (voluntary + involuntary): its wake-ups."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return float("nan")
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def threads_of(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def memory_split(pid):
    """Where a process's resident memory is, in MB, from /proc/PID/smaps: anonymous against file-backed
    (smaps_rollup), and by mapping: NVML's library, the program's own file, other libraries, the heap,
    anonymous mappings (thread stacks, allocator arenas, libraries' own allocations), the main stack."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Rss", "Pss", "Anonymous", "Shared_Clean", "Private_Clean", "Private_Dirty"):
                    out[k.lower()] = int(v.split()[0]) / 1024
    except OSError:
        return out
    out["file_backed"] = out.get("rss", 0) - out.get("anonymous", 0)
    groups = {}
    exe_path = os.path.realpath(f"/proc/{pid}/exe")
    name = None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split()
                if head and re.match(r"^[0-9a-f]+-[0-9a-f]+$", head[0]):
                    path = head[5] if len(head) > 5 else ""
                    if "libnvidia-ml" in path:
                        name = "nvml_library"
                    elif path and os.path.realpath(path) == exe_path:
                        name = "program_file"
                    elif path.startswith("/") and ".so" in path:
                        name = "other_libraries"
                    elif path == "[heap]":
                        name = "heap"
                    elif path == "[stack]":
                        name = "main_stack"
                    elif path == "":
                        name = "anonymous_mappings"
                    else:
                        name = "other"
                elif head and head[0] == "Rss:" and name:
                    groups[name] = groups.get(name, 0) + int(head[1]) / 1024
    except OSError:
        pass
    for k, v in groups.items():
        out["rss_" + k] = v
    return out


def metrics_load(port, scrapers, per):
    """The C++ scrapers (bench/footprint/metrics_load.cpp): n, failed, p50, p99, max in ms."""
    r = subprocess.run([exe("metrics_load"), "--port", str(port), "--scrapers", str(scrapers), "--requests", str(per)],
                       capture_output=True, text=True, timeout=300)
    kv = dict(x.split("=", 1) for x in r.stdout.split() if "=" in x)
    return (int(kv.get("n", 0)), int(kv.get("failed", scrapers * per)), float(kv.get("p50_ms", "nan")),
            float(kv.get("p99_ms", "nan")), float(kv.get("max_ms", "nan")), int(kv.get("bytes", 0)))


def section_agent():
    started = []
    try:
        agent_phase(started)
    finally:
        stop_all(started)


def stop_all(started):
    """Kills and reaps whichever of the started processes still run."""
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()


def start_agent(binary, tag, started):
    db = os.path.join(WORK, f"agent-{tag}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    err = open(os.path.join(WORK, f"agent-{tag}.err"), "w")
    t0 = time.monotonic()
    argv = [binary, "agent", "--db", db, "--listen", "127.0.0.1:0"] + os.environ.get("AGENT_ARGS", "").split()
    agent = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    started.append(agent)
    port = None
    for _ in range(100):
        time.sleep(0.1)
        m = re.search(r"serving /metrics on http://127.0.0.1:(\d+)/metrics", open(err.name).read())
        if m:
            port = int(m.group(1))
            break
    return agent, port, t0


def agent_phase(started):
    """The agent at its defaults for AGENT_SECONDS (one duty period): CPU, wake-ups, RSS and where it
    is, its sampler child; beside it nvml_poll at the agent's own poll (1 s) for the whole span, the
    NVML share of memory; nvidia-smi dmon, --query-gpu -lms 100, nvml_poll at 10 and 1 ms and a bare
    CUDA program for their first 20 s. Then /metrics with 1 scraper and 100 in parallel (metrics_load).
    With BEFORE_BIN, a second agent built from another commit gets the same span and scrapes after."""
    seconds = float(os.environ.get("AGENT_SECONDS", "62"))
    agent, port, t0 = start_agent(exe("diescope"), "after", started)
    peers = {}

    def peer(name, argv):
        try:
            p = subprocess.Popen(argv, stdout=open(os.path.join(WORK, name + ".out"), "w"), stderr=subprocess.STDOUT)
        except OSError as e:
            log(f"peer {name} not started: {e}")
            return
        started.append(p)
        peers[name] = (p, Watch(p.pid, time.monotonic()))

    have_gpu = subprocess.run(["sh", "-c", "command -v nvidia-smi && nvidia-smi -L"], capture_output=True).returncode == 0
    if have_gpu:
        peer("bare_cuda", [exe("bare_cuda"), "--seconds", "24"])
        peer("nvidia-smi_dmon", ["nvidia-smi", "dmon", "-i", "0"])
        peer("nvidia-smi_query_100ms", ["nvidia-smi", "-i", "0", "--query-gpu=timestamp,utilization.gpu,utilization.memory,"
                                        "clocks.sm,power.draw,temperature.gpu", "--format=csv", "-lms", "100"])
        peer("nvml_poll_10ms", [exe("nvml_poll"), "--interval-ms", "10", "--seconds", "22"])
        peer("nvml_poll_1ms", [exe("nvml_poll"), "--interval-ms", "1", "--seconds", "22"])
    peer("nvml_poll_1000ms", [exe("nvml_poll"), "--interval-ms", "1000", "--seconds", str(seconds + 6)])
    aw = Watch(agent.pid, t0)
    child_peak, child_cpu = 0.0, {}
    time.sleep(2)
    aw.mark("a")
    wake_a = wakeups(agent.pid)
    for _, w in peers.values():
        w.mark("a")
    poll_wake_a = wakeups(peers["nvml_poll_1000ms"][0].pid) if "nvml_poll_1000ms" in peers else float("nan")
    end = time.monotonic() + seconds
    short_done = False
    while time.monotonic() < end:
        aw.poll()
        for c in children(agent.pid, os.environ.get("FOOTPRINT_CHILD", "diescope-cupti")):
            child_peak = max(child_peak, rss_mb(c))
            child_cpu[c] = cpu_s(c)
        for name, (_, w) in peers.items():
            if name == "nvml_poll_1000ms" or not short_done:
                w.poll()
        if not short_done and time.monotonic() - t0 > 21:
            for name, (_, w) in peers.items():
                if name != "nvml_poll_1000ms":
                    w.mark("b")
            short_done = True
        time.sleep(0.25)
    aw.mark("b")
    wake_b = wakeups(agent.pid)
    span = aw.marks["b"][0] - aw.marks["a"][0]
    mem_agent = memory_split(agent.pid)
    mem_poll = {}
    poll_wake_rate = float("nan")
    if "nvml_poll_1000ms" in peers:
        pp, pw = peers["nvml_poll_1000ms"]
        pw.mark("b")
        mem_poll = memory_split(pp.pid)
        poll_wake_rate = (wakeups(pp.pid) - poll_wake_a) / span
    if not short_done:
        for name, (_, w) in peers.items():
            if "b" not in w.marks:
                w.mark("b")
    threads = threads_of(agent.pid)
    rows = []
    for name, (p, w) in peers.items():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        p.wait(10)
        rows.append([name, fmt(w.pct("a", "b"), 3), fmt(w.pct_since_start("b"), 3), fmt(w.peak, 1)])
    tsv("peers.tsv", ["program", "cpu_pct_steady", "cpu_pct_with_startup", "rss_mb_peak"], rows)
    for name in ("nvml_poll_10ms", "nvml_poll_1ms", "nvml_poll_1000ms"):
        if name in peers:
            os.system(f"cat {WORK}/{name}.out >> {OUT}/nvml_poll.txt")
    keys = sorted(set(mem_agent) | set(mem_poll))
    tsv("memory.tsv", ["mb", "agent", "nvml_poll_1000ms"],
        [[k, fmt(mem_agent.get(k, float("nan")), 2), fmt(mem_poll.get(k, float("nan")), 2)] for k in keys])

    lat = scrape_rounds(agent, port)
    agent.send_signal(signal.SIGTERM)
    agent.wait(20)
    own = mem_agent.get("rss", float("nan")) - mem_poll.get("rss", float("nan"))
    table = [
        [f"agent_cpu_pct_{seconds:g}s", fmt(aw.pct("a", "b"), 3)],
        ["agent_wakeups_per_s", fmt((wake_b - wake_a) / span, 2)],
        ["agent_threads", threads],
        ["nvml_poll_1000ms_cpu_pct", fmt(peers["nvml_poll_1000ms"][1].pct("a", "b"), 3) if "nvml_poll_1000ms" in peers else "nan"],
        ["nvml_poll_1000ms_wakeups_per_s", fmt(poll_wake_rate, 2)],
        ["agent_rss_mb_peak", fmt(aw.peak, 1)],
        ["agent_rss_mb_end", fmt(mem_agent.get("rss", float("nan")), 1)],
        ["nvml_poll_1000ms_rss_mb_end", fmt(mem_poll.get("rss", float("nan")), 1)],
        ["agent_rss_mb_beyond_nvml_poll", fmt(own, 1)],
        ["sampler_child_rss_mb_peak", fmt(child_peak, 1)],
        ["sampler_child_cpu_s_total", fmt(sum(child_cpu.values()), 2)],
        ["sampler_child_starts", len(child_cpu)],
    ] + lat
    before = os.environ.get("BEFORE_BIN")
    if before:
        b_agent, b_port, b_t0 = start_agent(os.path.join(before, "diescope"), "before", started)
        bw = Watch(b_agent.pid, b_t0)
        time.sleep(2)
        bw.mark("a")
        bwake_a = wakeups(b_agent.pid)
        b_end = time.monotonic() + float(os.environ.get("BEFORE_SECONDS", str(seconds)))
        while time.monotonic() < b_end:
            bw.poll()
            time.sleep(0.25)
        bw.mark("b")
        b_span = bw.marks["b"][0] - bw.marks["a"][0]
        b_mem = memory_split(b_agent.pid)
        table += [
            [f"before_agent_cpu_pct_{b_span:.0f}s", fmt(bw.pct("a", "b"), 3)],
            ["before_agent_wakeups_per_s", fmt((wakeups(b_agent.pid) - bwake_a) / b_span, 2)],
            ["before_agent_threads", threads_of(b_agent.pid)],
            ["before_agent_rss_mb_end", fmt(b_mem.get("rss", float("nan")), 1)],
            ["before_agent_anonymous_mb", fmt(b_mem.get("anonymous", float("nan")), 1)],
        ] + [["before_" + k, v] for k, v in scrape_rounds(b_agent, b_port)]
        b_agent.send_signal(signal.SIGTERM)
        b_agent.wait(20)
    tsv("agent.tsv", ["measure", "value"], table)


# 1 scraper; 100 at once, as a fleet; 16 at once, one a CPU core of the GPU machine, so that the
# clients' own threads are not more than the cores (docs/footprint.md#the-agents-own-cost).
SCRAPE_ROUNDS = (("1 scraper, 300 in turn", 1, 300), ("100 scrapers in parallel, 20 each", 100, 20),
                 ("16 scrapers in parallel, 125 each", 16, 125))


def scrape_rounds(agent, port):
    if not port:
        return []
    rows, size = timed_rounds(agent.pid, port, "metrics_latency", "agent")
    return rows + peer_rounds(size)


def timed_rounds(pid, port, name, server):
    """Every SCRAPE_ROUND against the server on `port`, one row each, with the server's own CPU per
    answered request (its side, without the clients' scheduling); and the body's size."""
    rows, size = [], 0
    for label, scrapers, per in SCRAPE_ROUNDS:
        c0 = cpu_s(pid)
        n, failed, p50, p99, mx, size = metrics_load(port, scrapers, per)
        per_req = 1000 * (cpu_s(pid) - c0) / max(n, 1)
        rows.append([f"{name} {label}",
                     f"n={n} failed={failed} p50_ms={fmt(p50, 3)} p99_ms={fmt(p99, 3)} max_ms={fmt(mx, 3)} "
                     f"body_bytes={size} {server}_cpu_ms_per_request={fmt(per_req, 3)}"])
    return rows, size


def peer_rounds(size):
    """The floor: bench/footprint/metrics_peer (a minimal epoll server, nothing of diescope) answering a
    fixed body of the agent's size, timed by the same metrics_load rounds right after the agent's."""
    peer_exe = os.path.join(BIN, "metrics_peer")
    if not os.access(peer_exe, os.X_OK) or size <= 0:
        return []
    peer = subprocess.Popen([peer_exe, "--bytes", str(size), "--seconds", "120"], stdout=subprocess.PIPE, text=True)
    try:
        m = re.match(r"serving on (\d+)", peer.stdout.readline())
        if not m:
            return []
        return timed_rounds(peer.pid, int(m.group(1)), "peer_metrics_latency", "peer")[0]
    finally:
        peer.kill()
        peer.wait()


# ---------------------------------------------------------------- the agent's margin, builds in turn
def thread_cpu(pid):
    """CPU seconds of each live thread of a process, by thread id: utime + stime (/proc/PID/task/TID/stat)
    and the scheduler's run time in ns (/proc/PID/task/TID/schedstat, its first field)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                run_ns = int(f.read().split()[0])
            out[int(t)] = ((int(rest[11]) + int(rest[12])) / TCK, run_ns / 1e9)
        except (OSError, IndexError, ValueError):
            pass
    return out


def section_margin():
    """The agent at its defaults, BEFORE_BIN's build and BIN's in turn (before, after, before, after:
    MARGIN_PAIRS pairs), each for AGENT_SECONDS (62, one duty period) after 2 s, one at a time, GPU idle,
    nothing scraping: its CPU from /proc/PID/stat (utime + stime, every thread, ended ones too), the
    scheduler's run time of its live threads (/proc/PID/task/*/schedstat, ns), the main thread's share
    (the loop: NVML reads, host probes, the profiler scan), wake-ups, and its sampler child's CPU.
    Writes margin.tsv (one row a run) and margin.txt (each build's mean, and each pair's difference)."""
    before = os.environ.get("BEFORE_BIN")
    if not before:
        raise RuntimeError("the margin section needs BEFORE_BIN, the folder of the other build's diescope")
    pairs = int(os.environ.get("MARGIN_PAIRS", "2"))
    seconds = float(os.environ.get("AGENT_SECONDS", "62"))
    rows, by_tag = [], {"before": [], "after": []}
    for k in range(2 * pairs):
        tag, folder = ("before", before) if k % 2 == 0 else ("after", BIN)
        started = []
        try:
            agent, _, t0 = start_agent(os.path.join(folder, "diescope"), f"margin-{k + 1}-{tag}", started)
            w = Watch(agent.pid, t0)
            time.sleep(2)
            w.mark("a")
            wake_a, threads_a = wakeups(agent.pid), thread_cpu(agent.pid)
            child_cpu = {}
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                w.poll()
                for c in children(agent.pid, os.environ.get("FOOTPRINT_CHILD", "diescope-cupti")):
                    child_cpu[c] = cpu_s(c)
                time.sleep(0.25)
            w.mark("b")
            wake_b, threads_b = wakeups(agent.pid), thread_cpu(agent.pid)
            span = w.marks["b"][0] - w.marks["a"][0]
            # Run time of the threads alive at both ends (a thread born in between counts from 0).
            run_all = sum(v[1] - threads_a.get(t, (0.0, 0.0))[1] for t, v in threads_b.items())
            main_run = threads_b.get(agent.pid, (0, float("nan")))[1] - threads_a.get(agent.pid, (0, float("nan")))[1]
            pct = w.pct("a", "b")
            by_tag[tag].append(pct)
            rows.append([k + 1, tag, fmt(span, 2), fmt(pct, 3), fmt(100 * run_all / span, 3),
                         fmt(100 * main_run / span, 3), fmt((wake_b - wake_a) / span, 2), len(threads_b),
                         fmt(sum(child_cpu.values()), 2), len(child_cpu)])
            agent.send_signal(signal.SIGTERM)
            agent.wait(20)
        finally:
            stop_all(started)
    tsv("margin.tsv", ["run", "build", "span_s", "cpu_pct_stat", "cpu_pct_schedstat_live_threads",
                       "main_thread_cpu_pct_schedstat", "wakeups_per_s", "threads", "sampler_child_cpu_s",
                       "sampler_child_starts"], rows)
    mean = {t: sum(v) / len(v) for t, v in by_tag.items() if v}
    lines = [f"{t}_mean_cpu_pct={fmt(m, 3)} runs={' '.join(fmt(x, 3) for x in by_tag[t])}" for t, m in mean.items()]
    diffs = [b - a for a, b in zip(by_tag["before"], by_tag["after"])]
    lines.append("after_minus_before_each_pair=" + " ".join(fmt(d, 3) for d in diffs))
    if len(mean) == 2:
        lines.append(f"after_minus_before_mean={fmt(mean['after'] - mean['before'], 3)}")
    write("margin.txt", "\n".join(lines) + "\n")


# ---------------------------------------------------------------- /metrics with the epoll scrapers
# metrics_scrape's runs (bench/footprint/metrics_scrape.cpp): 100 scrapers firing together every
# 100 ms, from 4 and from 8 client threads; the same every 2.1 s, so that two publishes of the figures
# come between two bursts and the first scrape of each burst finds the exposition stale (as with
# Prometheus every 15 s: docs/agent.md#metrics-under-load); 100 back to back (a closed loop, as
# metrics_load); 16 together (one a core); 1 alone (docs/footprint.md#the-agents-own-cost).
SCRAPE_RUNS = (
    ("burst100_every100ms_4threads", ["--scrapers", "100", "--threads", "4", "--rounds", "50", "--every-ms", "100"]),
    ("burst100_every100ms_8threads", ["--scrapers", "100", "--threads", "8", "--rounds", "50", "--every-ms", "100"]),
    ("burst100_every2100ms_4threads", ["--scrapers", "100", "--threads", "4", "--rounds", "5", "--every-ms", "2100"]),
    ("loop100_4threads", ["--scrapers", "100", "--threads", "4", "--mode", "loop", "--rounds", "20"]),
    ("burst16_every100ms_4threads", ["--scrapers", "16", "--threads", "4", "--rounds", "30", "--every-ms", "100"]),
    ("burst1_every100ms", ["--scrapers", "1", "--threads", "1", "--rounds", "30", "--every-ms", "100"]),
)
TIMED_RUNS = ("burst100_every100ms_4threads", "burst100_every2100ms_4threads")


def run_s(pid):
    """The scheduler's run time of a process's live threads, in seconds (ns-resolved, unlike utime)."""
    return sum(v[1] for v in thread_cpu(pid).values())


def scrape_runs(pid, port, server, runs):
    """Each run against the server on `port`: metrics_scrape's line, and the server's CPU per scrape
    (its threads' run time, /proc/PID/task/*/schedstat)."""
    rows, size = [], 0
    for name, args in runs:
        c0 = run_s(pid)
        times = os.path.join(OUT, f"times-{server}-{name}.tsv") if name in TIMED_RUNS else ""
        argv = [exe("metrics_scrape"), "--port", str(port)] + args + (["--times", times] if times else [])
        r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        kv = dict(x.split("=", 1) for x in r.stdout.split() if "=" in x)
        n = int(kv.get("n", 0))
        size = max(size, int(kv.get("bytes", 0)))
        per_req = 1000 * (run_s(pid) - c0) / max(n, 1)
        rows.append([server, name] + [kv.get(k, "nan") for k in (
            "n", "failed", "p50_ms", "p99_ms", "max_ms", "start_p99_ms", "round_p50_ms", "round_max_ms")]
            + [fmt(per_req, 4)])
    # metrics_load's 100 client threads, 20 scrapes each, beside them (the figure before this program).
    c0 = run_s(pid)
    n, failed, p50, p99, mx, _ = metrics_load(port, 100, 20)
    rows.append([server, "metrics_load_100threads_20each", n, failed, fmt(p50, 3), fmt(p99, 3), fmt(mx, 3),
                 "nan", "nan", "nan", fmt(1000 * (run_s(pid) - c0) / max(n, 1), 4)])
    return rows, size


def section_scrape():
    """/metrics under 100 scrapers at once with metrics_scrape (epoll threads, a new connection per
    scrape: the agent closes each), against the agent of each build in SCRAPE_AGENTS ("label=folder,...";
    default "agent=BIN"), 3 s after it starts (its counters' first window over), and against
    metrics_peer answering a body of the agent's size (not the 2.1 s run: it has nothing to render).
    Writes scrape.tsv; the per-scrape times of TIMED_RUNS as times-SERVER-RUN.tsv."""
    spec = os.environ.get("SCRAPE_AGENTS", "agent=" + BIN)
    rows, size = [], 0
    for item in spec.split(","):
        label, folder = item.split("=", 1)
        started = []
        try:
            agent, port, _ = start_agent(os.path.join(folder, "diescope"), "scrape-" + label, started)
            if not port:
                raise RuntimeError(f"the agent {label} did not serve /metrics")
            time.sleep(3)
            got, size = scrape_runs(agent.pid, port, label, SCRAPE_RUNS)
            rows += got
            agent.send_signal(signal.SIGTERM)
            agent.wait(20)
        finally:
            stop_all(started)
    # The peer with the agent's four serving threads, and with SCRAPE_PEER_THREADS more ("8" unless
    # set; "" for none): whether more threads would lower the tail.
    for threads in ["4"] + [t for t in os.environ.get("SCRAPE_PEER_THREADS", "8").split(",") if t]:
        if size <= 0:
            break
        peer = subprocess.Popen([exe("metrics_peer"), "--bytes", str(size), "--threads", threads, "--seconds", "120"],
                                stdout=subprocess.PIPE, text=True)
        try:
            m = re.match(r"serving on (\d+)", peer.stdout.readline())
            if m:
                rows += scrape_runs(peer.pid, int(m.group(1)), "metrics_peer" + ("" if threads == "4" else threads),
                                    [r for r in SCRAPE_RUNS if "2100ms" not in r[0]])[0]
        finally:
            peer.kill()
            peer.wait()
    tsv("scrape.tsv", ["server", "run", "n", "failed", "p50_ms", "p99_ms", "max_ms", "start_p99_ms",
                       "round_p50_ms", "round_max_ms", "server_cpu_ms_per_scrape"], rows)


# ---------------------------------------------------------------- peers alone
def section_peers():
    started, peers = [], {}
    try:
        def peer(name, argv):
            p = subprocess.Popen(argv, stdout=open(os.path.join(WORK, name + ".out"), "w"), stderr=subprocess.STDOUT)
            started.append(p)
            peers[name] = (p, Watch(p.pid, time.monotonic()))

        peer("bare_cuda", [exe("bare_cuda"), "--seconds", "24"])
        peer("nvidia-smi_dmon", ["nvidia-smi", "dmon", "-i", "0"])
        peer("nvidia-smi_query_100ms", ["nvidia-smi", "-i", "0", "--query-gpu=timestamp,utilization.gpu,"
                                        "utilization.memory,clocks.sm,power.draw,temperature.gpu", "--format=csv",
                                        "-lms", "100"])
        peer("nvml_poll_10ms", [exe("nvml_poll"), "--interval-ms", "10", "--seconds", "22"])
        peer("nvml_poll_1ms", [exe("nvml_poll"), "--interval-ms", "1", "--seconds", "22"])
        t0 = time.monotonic()
        time.sleep(2)
        for _, w in peers.values():
            w.mark("a")
        smaps = []
        while time.monotonic() - t0 < 21:
            for _, w in peers.values():
                w.poll()
            if not smaps and time.monotonic() - t0 > 10:
                smaps = smaps_rows("bare_cuda", peers["bare_cuda"][0].pid) + \
                    smaps_rows("nvml_poll_10ms", peers["nvml_poll_10ms"][0].pid)
            time.sleep(0.25)
        rows = []
        for name, (p, w) in peers.items():
            w.mark("b")
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            p.wait(10)
            rows.append([name, fmt(w.pct("a", "b"), 3), fmt(w.pct_since_start("b"), 3), fmt(w.peak, 1)])
        tsv("peers.tsv", ["program", "cpu_pct_steady", "cpu_pct_with_startup", "rss_mb_peak"], rows)
        tsv("peers_smaps.tsv", ["program", "mapped", "rss_mb"], smaps)
        for name in ("nvml_poll_10ms", "nvml_poll_1ms"):
            os.system(f"cat {WORK}/{name}.out >> {OUT}/nvml_poll.txt")
    finally:
        stop_all(started)
    if os.access(exe("nvml_call_cost"), os.X_OK):
        r = subprocess.run([exe("nvml_call_cost"), "0", "300"], capture_output=True, text=True)
        write("nvml_calls.txt", r.stdout + r.stderr)


# ---------------------------------------------------------------- diescope run
def run_diescope(name, interval, drain, command, seconds_steady=None, timing=False, extra=(), at_mid=None):
    """Runs `diescope run` around `command`; returns (watch of run, watch of its child, stdout)."""
    out_dir = os.path.join(WORK, name)
    env = dict(os.environ)
    if timing:
        env["DIESCOPE_SAMPLER_TIMING"] = "1"
    argv = [exe("diescope"), "run", "--interval-ms", str(interval), "--drain-ms", str(drain),
            "--window", "markers", "--output", out_dir] + list(extra) + ["--"] + command
    t0 = time.monotonic()
    stdout = open(os.path.join(WORK, name + ".out"), "w")
    p = subprocess.Popen(argv, stdout=stdout, stderr=open(os.path.join(WORK, name + ".err"), "w"), env=env)
    pw, cw = Watch(p.pid, t0), None
    while p.poll() is None:
        if cw is None:
            kids = children(p.pid, os.environ.get("FOOTPRINT_CHILD", "diescope-cupti"))
            if kids:
                cw = Watch(kids[0], time.monotonic())
        pw.poll()
        if cw:
            cw.poll()
        el = time.monotonic() - t0
        if seconds_steady:
            a, b = seconds_steady
            if el >= a and "a" not in pw.marks:
                pw.mark("a")
                cw and cw.mark("a")
            if el >= b and "b" not in pw.marks:
                pw.mark("b")
                cw and cw.mark("b")
            if at_mid and el >= (a + b) / 2 and "mid" not in pw.marks:
                pw.marks["mid"] = None
                at_mid(p.pid, cw.pid if cw else None)
        else:
            pw.mark("last")
            cw and cw.mark("last")
        time.sleep(0.2)
    return pw, cw, out_dir


def section_idle():
    rows, smaps = [], []
    # FOOTPRINT_IDLE: interval_ms:host_interval_ms:seconds,... (the command sleeps that long; CPU is
    # read from a third of it, at most 6 s, to 2 s before its end).
    for run in os.environ.get("FOOTPRINT_IDLE", "10:100:22,1:100:22,10:0:22").split(","):
        iv, host_ms, seconds = run.split(":")
        interval, host_ms, seconds = float(iv) if "." in iv else int(iv), int(host_ms), int(seconds)
        extra = () if host_ms == 100 else ("--host-interval-ms", str(host_ms))
        name = f"idle-{interval}ms-host{host_ms}"
        def at_mid(run_pid, child_pid, interval=interval):
            smaps.extend(smaps_rows(f"diescope run, {interval} ms", run_pid))
            if child_pid:
                smaps.extend(smaps_rows(f"sampler child, {interval} ms", child_pid))

        steady = (min(6, seconds / 3), seconds - 2)
        pw, cw, out_dir = run_diescope(name, interval, 1000, ["sleep", str(seconds)], steady, timing=True, extra=extra,
                                       at_mid=at_mid if host_ms else None)
        parent, child = pw.pct("a", "b"), cw.pct("a", "b") if cw else float("nan")
        probes, drain_us = float("nan"), float("nan")
        try:
            _, _, _, _, notes = read_recording(os.path.join(out_dir, "gpu0.dsrec"), interval)
        except (OSError, ValueError, TypeError) as e:
            log(name, "recording unreadable:", repr(e))
            notes = []
        for n in notes:
            if n and n[0] == "host_probes" and len(n) > 1:
                m = re.search(r"\(([\d.]+)% of one core\); diescope", n[1])
                probes = float(m.group(1)) if m else probes
            if n and n[0] == "timing-total" and len(n) > 1:
                kv = dict(zip(n[1].split()[0::2], n[1].split()[1::2]))
                drain_us = int(kv.get("drain_cpu_us", 0)) / max(int(kv.get("samples", 0)), 1)
        rows.append([interval, host_ms, fmt(parent, 3), fmt(child, 3), fmt(parent + child, 3), fmt(probes, 3),
                     fmt(drain_us, 1), fmt(pw.peak, 1), fmt(cw.peak if cw else float("nan"), 1),
                     fmt(pw.peak + (cw.peak if cw else 0), 1)])
    tsv("idle.tsv", ["interval_ms", "host_interval_ms", "run_cpu_pct", "child_cpu_pct", "together_cpu_pct",
                     "host_probes_cpu_pct_of_run", "child_drain_cpu_us_per_sample", "run_rss_mb", "child_rss_mb",
                     "together_rss_mb"], rows)
    tsv("idle_smaps.tsv", ["program", "mapped", "rss_mb"], smaps)


def read_recording(path, interval_ms):
    meta, marks, chips, notes = None, [], [], []
    with open(path) as f:
        for line in f:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "chip":
                v = rest.split()
                chips.append((int(v[0]), int(v[1]), [float(x) for x in v[2:]]))
            elif kind == "meta":
                meta = json.loads(rest)
            elif kind == "mark":
                t, what = rest.split()[:2]
                marks.append((int(t), what))
            elif kind == "note":
                notes.append(rest.split(" ", 2)[1:])
    cols = [u["key"] for u in meta["units"] + meta.get("diagnostics", []) + meta.get("counts", [])]
    return meta, cols, marks, chips, notes


def loss_of(chips, notes, interval_ms, after_ns):
    """Samples after the setup sample: holes between them and what was lost."""
    iv = interval_ms * 1e6
    s = [c for c in chips[1:] if c[0] >= after_ns]
    holes, hole_ns = 0, 0
    for a, b in zip(s, s[1:]):
        if b[0] - a[1] > iv / 2:
            holes += 1
            hole_ns += b[0] - a[1]
    span = (s[-1][1] - s[0][0]) if s else 0
    nan = sum(1 for c in s if any(x != x for x in c[2]))
    topics = {}
    for n in notes:
        if n and n[0] == "sampler":
            text = n[1] if len(n) > 1 else ""
            for key in ("retimed", "dropped", "chip samples lost", "overflow"):
                if key in text:
                    topics[key] = topics.get(key, 0) + 1
    return {"samples": len(s), "expected": round(span / iv) if iv else 0, "span_s": span / 1e9, "holes": holes,
            "hole_ms": hole_ns / 1e6, "lost_pct": 100 * hole_ns / span if span else float("nan"),
            "nan_samples": nan, "notes": topics}


def section_heldout():
    plan = [("ffma132", ["ffma", "--sms", "132"]), ("ffma66", ["ffma", "--sms", "66"]),
            ("ffma33", ["ffma", "--sms", "33"]), ("stream_copy", ["stream", "--kernel", "copy"]),
            ("l2_copy", ["stream", "--kernel", "copy", "--elements", "4194304"])]
    means_rows, loss_rows, stage_rows, cost_rows, own_rows = [], [], [], [], []
    # FOOTPRINT_HELDOUT: interval_ms:drain_ms:seconds per workload,...
    runs = []
    for run in os.environ.get("FOOTPRINT_HELDOUT", "10:1000:4,1:1000:4,0.1:100:12").split(","):
        iv, dr, sec = run.split(":")
        runs.append((float(iv) if "." in iv else int(iv), int(dr), int(sec)))
    for interval, drain, seconds in runs:
        script = " && ".join(f"{exe('diescope-workload')} {' '.join(a)} --seconds {seconds}" for _, a in plan)
        name = f"heldout-{interval}ms"
        pw, cw, out_dir = run_diescope(name, interval, drain, ["bash", "-c", script], timing=True)
        cost_rows.append([interval, fmt(pw.pct_since_start("last"), 3),
                          fmt(cw.pct_since_start("last") if cw else float("nan"), 3), fmt(pw.peak, 1),
                          fmt(cw.peak if cw else float("nan"), 1)])
        meta, cols, marks, chips, notes = read_recording(os.path.join(out_dir, "gpu0.dsrec"), interval)
        starts = [t for t, w in marks if w == "start"]
        stops = [t for t, w in marks if w == "stop"]
        for (label, _), a, b in zip(plan, starts, stops):
            inside = [c for c in chips if c[0] >= a and c[1] <= b and not any(x != x for x in c[2])]
            means = [sum(c[2][i] for c in inside) / len(inside) if inside else float("nan") for i in range(len(cols))]
            means_rows.append([interval, label, len(inside)] + [fmt(m, 2) for m in means])
        loss = loss_of(chips, notes, interval, 0)
        loss_rows.append([interval, drain, fmt(loss["span_s"], 1), loss["samples"], loss["expected"], loss["holes"],
                          fmt(loss["hole_ms"], 3), fmt(loss["lost_pct"], 3), loss["nan_samples"],
                          json.dumps(loss["notes"], separators=(",", ":"))])
        for n in notes:
            if n and n[0] == "timing-total":
                kv = dict(zip(n[1].split()[0::2], n[1].split()[1::2]))
                samples = max(int(kv.get("samples", 0)), 1)
                stage_rows.append([interval, drain, kv.get("samples"), kv.get("drains"), kv.get("passes")] +
                                  [fmt(int(kv.get(k, 0)) / samples, 2) for k in
                                   ("decode_us", "info_us", "evaluate_us", "emit_us", "init_us", "write_us",
                                    "drain_cpu_us", "wait_us", "decode_cpu_us", "evaluate_cpu_us")] +
                                  [kv.get("image_bytes"), kv.get("sample_bytes"), kv.get("images", "")] +
                                  [kv.get(k, "") for k in ("late_max_us", "gap_max_us", "decode_max_us",
                                                           "drain_max_us", "gaps_over_period", "gaps_over_image")])
            if n and n[0] == "sampler" and len(n) > 1 and "decode image holds" in n[1]:
                own_rows.append([interval, "sampler", n[1]])
    tsv("heldout_means.tsv", ["interval_ms", "window", "samples"] + cols, means_rows)
    tsv("loss.tsv", ["interval_ms", "drain_ms", "span_s", "samples", "expected", "holes", "hole_ms", "lost_pct",
                     "samples_without_values", "sampler_notes"], loss_rows)
    tsv("stages.tsv", ["interval_ms", "drain_ms", "samples", "drains", "passes", "decode_us_per_sample",
                       "info_us", "evaluate_us", "emit_us", "init_us", "write_us", "drain_cpu_us",
                       "wait_us", "decode_cpu_us", "evaluate_cpu_us", "image_bytes", "sample_bytes", "images",
                       "late_max_us", "gap_max_us", "decode_max_us", "drain_max_us", "gaps_over_period",
                       "gaps_over_image"],
        stage_rows)
    tsv("heldout_cost.tsv", ["interval_ms", "run_cpu_pct_whole_run", "child_cpu_pct_whole_run", "run_rss_mb_peak",
                             "child_rss_mb_peak"], cost_rows)
    tsv("heldout_own.tsv", ["interval_ms", "from", "line"], own_rows)
    # The workloads' own counts beside the readings (their JSON lines stay in WORK).
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "heldout_table.py"),
                    OUT, WORK], check=True)


# ---------------------------------------------------------------- CUPTI alone
def hopper_metrics():
    """The Hopper unit table's metrics, as `diescope units` lists them, comma-separated."""
    units = subprocess.run([exe("diescope"), "units"], capture_output=True, text=True).stdout
    metrics, inside = [], False
    for line in units.splitlines():
        if not line.startswith(" "):
            inside = line.startswith("hopper-gh100")
            continue
        if inside:
            names = [w for w in line.split() if "__" in w]
            if names:
                metrics.append(names[0])
    return ",".join(metrics)


def section_minimal():
    m = hopper_metrics()
    lines = ["metrics=" + m]
    load = subprocess.Popen([exe("diescope-workload"), "ffma", "--seconds", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(3)
    smaps = []

    def pm(*args):
        p = subprocess.Popen([exe("pm_minimal"), "--metrics", m] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        if "--interval-ms" in args and args[args.index("--interval-ms") + 1] == "10":
            time.sleep(6)
            smaps.extend(smaps_rows("pm_minimal 10 ms", p.pid))
        out, err = p.communicate()
        lines.append(" ".join(args) + " | " + (out.strip() or err.strip()))

    # The child's own settings: evaluation on, a 20 MiB hardware buffer, decodes every 100 intervals
    # at most (docs/footprint.md#the-decode-period).
    pm("--interval-ms", "0.1", "--drain-ms", "10", "--seconds", "12", "--evaluate", "--hw-buffer-mb", "20")
    pm("--interval-ms", "1", "--drain-ms", "100", "--seconds", "8", "--evaluate", "--hw-buffer-mb", "20")
    pm("--interval-ms", "10", "--drain-ms", "1000", "--seconds", "12", "--evaluate", "--hw-buffer-mb", "20")
    # A 4 MiB buffer decoded once after 2.5 s: no overflow at 10 ms says a raw sample takes under
    # 4 MiB / 250 (16.8 kB); at 1 ms, under 4 MiB / 2500 (1.7 kB) (docs/footprint.md#the-hardware-buffer).
    pm("--interval-ms", "10", "--drain-ms", "2500", "--seconds", "5", "--hw-buffer-mb", "4")
    pm("--interval-ms", "1", "--drain-ms", "2500", "--seconds", "5", "--hw-buffer-mb", "4")
    load.terminate()
    load.wait()
    write("minimal.txt", "\n".join(lines) + "\n")
    tsv("minimal_smaps.tsv", ["program", "mapped", "rss_mb"], smaps)


def main():
    for s in SECTIONS:
        log("section", s, time.strftime("%H:%M:%S"))
        try:
            globals()["section_" + s]()
        except Exception as e:  # one section's failure must not lose the others' figures
            log("section", s, "failed:", repr(e))
            write(f"failed-{s}.txt", repr(e) + "\n")
    log("done", time.strftime("%H:%M:%S"))


if __name__ == "__main__":
    main()
