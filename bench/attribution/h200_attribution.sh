#!/usr/bin/env bash
# Attribution on a GPU machine, in one go (docs/attribution.md):
#   pods   two workloads, each in a cgroup laid out as a Kubernetes pod's container (v2 where the
#          machine lets us write cgroup v2, else v1), and diescope-test-kubelet serving the
#          pod-resources API at the kubelet's own socket path, naming them as two pods sharing the
#          GPU (time-sliced replicas <UUID>::0 and ::1). `run`'s report, `top --once` and the agent's
#          /metrics must name each pod; the agent's job records must hold both, with energy.
#   slurm  `run` of a workload started inside a cgroup named as Slurm job 4242 step 0: its report
#          must name the job.
#   cost   two agents side by side over the same 30 s, one with attribution and one without
#          (--no-attribution), both reading GPM (two agents cannot both hold PM sampling): CPU
#          seconds and RSS of each.
#
#   bench/attribution/h200_attribution.sh BIN OUT_DIR [STEPS]    BIN: bench/attribution/devcarry.sh's folder;
#                                                                 STEPS: a list of pods,slurm,cost (default all)
#
# Writes small tables and excerpts into OUT_DIR; raw outputs stay in a temporary folder. Clocks,
# power limits and modes are read, never set.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin_dir h200_attribution.sh "${1:-}" "${2:-}" diescope diescope-cupti diescope-workload \
  libdiescope-kubelet.so diescope-test-kubelet
export PATH="$bin:$PATH"
steps=",${3:-pods,slurm,cost},"
want() { [[ $steps == *",$1,"* ]]; }
log="$out/log.txt"
: > "$log"
stamp() { echo "$(date -u +%T) $*" | tee -a "$log"; }
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)

# The machine's own cgroup file and mounts (a layout fixture of its own).
{ echo "## /proc/self/cgroup"; cat /proc/self/cgroup; echo "## cgroup mounts"; grep cgroup /proc/mounts
  echo "## /sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)"; } > "$out/cgroups.txt" 2>&1

# Where a cgroup can be made and a process moved into it: v2 first, then v1's pids controller.
can_use() {
  mkdir -p "$1/diescope-probe" 2> /dev/null || return 1
  sh -c "echo \$\$ > '$1/diescope-probe/cgroup.procs'" 2> /dev/null || { rmdir "$1/diescope-probe"; return 1; }
  rmdir "$1/diescope-probe" 2> /dev/null
  return 0
}
cg_root="" cg_kind="none"
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && can_use /sys/fs/cgroup; then cg_root=/sys/fs/cgroup cg_kind=v2
elif [ -d /sys/fs/cgroup/unified ] && can_use /sys/fs/cgroup/unified; then cg_root=/sys/fs/cgroup/unified cg_kind=v2
elif can_use /sys/fs/cgroup/pids; then cg_root=/sys/fs/cgroup/pids cg_kind=v1
fi
stamp "cgroups: $cg_kind at ${cg_root:-nowhere}"
echo "cgroup hierarchy used: $cg_kind at ${cg_root:-(none could be written)}" >> "$out/cgroups.txt"

id_a=$(printf 'c0ffee00%.0s' 1 2 3 4 5 6 7 8)
id_b=$(printf 'beef0123%.0s' 1 2 3 4 5 6 7 8)
uid_a=3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c
uid_b=9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b
if [ "$cg_kind" = v2 ]; then
  cg_a="kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid_a//-/_}.slice/cri-containerd-$id_a.scope"
  cg_b="kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${uid_b//-/_}.slice/crio-$id_b.scope"
  cg_slurm="system.slice/slurmstepd.scope/job_4242/step_0/user/task_0"
else
  cg_a="kubepods/burstable/pod$uid_a/$id_a"
  cg_b="kubepods/besteffort/pod$uid_b/$id_b"
  cg_slurm="slurm/uid_0/job_4242/step_0/task_0"
fi
# in_cgroup REL CMD...: CMD in the cgroup REL (made here), with the environment as given; where no
# cgroup could be written, CMD where it is (cgroups.txt says so).
in_cgroup="$work/in_cgroup.sh"
printf '%s\n' '#!/bin/sh' 'rel=$1; shift' \
  "if [ -n \"$cg_root\" ]; then mkdir -p \"$cg_root/\$rel\" && echo \$\$ > \"$cg_root/\$rel/cgroup.procs\"; fi" \
  'exec "$@"' > "$in_cgroup"
chmod +x "$in_cgroup"

# The test kubelet at the kubelet's own socket path, so every command finds it by default.
mkdir -p /var/lib/kubelet/pod-resources
printf 'ml train-7 trainer %s::0\nserve infer-2 server %s::1\n' "$uuid" "$uuid" > "$work/pods"
diescope-test-kubelet --socket /var/lib/kubelet/pod-resources/kubelet.sock --pods "$work/pods" \
  > "$work/kubelet.log" 2>&1 &
kubelet=$!
sleep 1

# ---- pods ----
if want pods; then
stamp "pods: agent, two pods, run, top --once, /metrics"
diescope agent --db "$work/agent.db" --ndjson --duty-period-ms 5000 --duty-on-ms 5000 --host-interval-ms 0 \
  > "$work/agent.ndjson" 2> "$work/agent.stderr" &
agent=$!
sleep 2
env HOSTNAME=train-7 KUBERNETES_SERVICE_HOST=10.96.0.1 \
  "$in_cgroup" "$cg_a" diescope-workload ffma --sms 66 --seconds 20 \
  > "$work/pod-a.out" 2>&1 &
pod_a=$!
env HOSTNAME=infer-2 KUBERNETES_SERVICE_HOST=10.96.0.1 \
  "$in_cgroup" "$cg_b" diescope-workload stream --kernel copy --seconds 20 \
  > "$work/pod-b.out" 2>&1 &
pod_b=$!
sleep 3
timeout 40 diescope run --label team=vision --output "$work/run-pods" -- sleep 6 \
  > "$work/run-pods.stdout" 2> "$work/run-pods.stderr"
echo "run-pods: exit $?" >> "$log"
timeout 30 diescope top --once > "$work/top.txt" 2>&1
echo "top --once: exit $?" >> "$log"
python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9402/metrics", timeout=5).read().decode())' \
  > "$work/metrics-during.txt" 2>&1
wait "$pod_a" "$pod_b"
sleep 8  # the agent's record covering the jobs' end (5 s periods), then their job records
python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9402/metrics", timeout=5).read().decode())' \
  > "$work/metrics-after.txt" 2>&1
kill -TERM "$agent"
wait "$agent"
echo "agent: exit $?" >> "$log"
diescope jobs --db "$work/agent.db" > "$out/jobs.txt" 2>&1
diescope jobs --db "$work/agent.db" --format csv > "$out/jobs.csv" 2>&1
diescope jobs --db "$work/agent.db" --format json > "$work/jobs.json" 2>&1
fi

# ---- slurm ----
if want slurm; then
stamp "slurm: run of a workload in Slurm job 4242's cgroup"
timeout 40 diescope run --output "$work/run-slurm" -- \
  "$in_cgroup" "$cg_slurm" diescope-workload ffma --sms 66 --seconds 4 \
  > "$work/run-slurm.stdout" 2> "$work/run-slurm.stderr"
echo "run-slurm: exit $?" >> "$log"
fi

# ---- cost ----
if want cost; then
stamp "cost: two agents, attribution on and off, 30 s under pod A's FFMA"
env HOSTNAME=train-7 KUBERNETES_SERVICE_HOST=10.96.0.1 \
  "$in_cgroup" "$cg_a" diescope-workload ffma --sms 66 --seconds 36 \
  > "$work/pod-a2.out" 2>&1 &
load=$!
diescope agent --no-db --no-listen --source gpm --duty-period-ms 5000 --duty-on-ms 5000 --host-interval-ms 0 \
  > /dev/null 2> "$work/agent-on.stderr" &
on=$!
diescope agent --no-db --no-listen --source gpm --duty-period-ms 5000 --duty-on-ms 5000 --host-interval-ms 0 \
  --no-attribution > /dev/null 2> "$work/agent-off.stderr" &
off=$!
sleep 3
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
a0=$(ticks $on) b0=$(ticks $off) t0=$(date +%s.%N)
sleep 30
a1=$(ticks $on) b1=$(ticks $off) t1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
{
  printf 'agent\tcpu_s\twall_s\tcpu_pct_of_core\tVmRSS_kB\tVmHWM_kB\n'
  for pair in "attribution_on $on $a0 $a1" "attribution_off $off $b0 $b1"; do
    set -- $pair
    rss=$(awk '/VmRSS/{print $2}' "/proc/$2/status") hwm=$(awk '/VmHWM/{print $2}' "/proc/$2/status")
    python3 -c "import sys; c=($4-$3)/$hz; w=$t1-$t0; print(f'$1\t{c:.2f}\t{w:.1f}\t{100*c/w:.2f}\t$rss\t$hwm')"
  done
} > "$out/cost.tsv"
kill -TERM "$on" "$off"
wait "$on" "$off" "$load"
fi
kill -TERM "$kubelet"
wait "$kubelet"

# ---- excerpts ----
stamp "excerpts"
for r in run-pods run-slurm; do
  [ -f "$work/$r.stdout" ] && grep -v '^{' "$work/$r.stdout" > "$out/$r-headline.txt"
  python3 - "$work/$r" > "$out/$r-holders.json" << 'PY'
import json, pathlib, sys
for report in sorted(pathlib.Path(sys.argv[1]).glob("*.report/report.json")):
    print(json.dumps({"report": report.parent.name, "holders": json.load(open(report)).get("holders")}, indent=1))
PY
done
if want pods; then
  cp "$work/top.txt" "$out/top-once.txt"
  grep -E '^diescope_(job_|gpu_holders)' "$work/metrics-during.txt" > "$out/metrics-during.txt"
  grep -E '^(# (HELP|TYPE) )?diescope_(job_|gpu_holders)' "$work/metrics-after.txt" > "$out/metrics-after.txt"
  python3 - "$work/agent.ndjson" > "$out/agent-records-holders.tsv" << 'PY'
import json, sys
print("kind\tgpu\tperiod_end_s\tholders_or_job")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "holder" in r:
        print(f"job\t{r['gpu']['index']}\t{r['end_ns']/1e9:.0f}\t{r['holder']['name']} gpu_s={r['gpu_seconds']:.2f} energy_j={r['energy_j']} shared={r['shared']}")
    else:
        print(f"record\t{r['gpu']['index']}\t{r['period']['end_ns']/1e9:.0f}\t" + "; ".join(h["name"] for h in r["holders"]))
PY
fi
grep -h 'attribution' "$work"/agent*.stderr > "$out/agent-log.txt" 2> /dev/null
stamp "done"
