#!/usr/bin/env bash
# A sweep as a Slurm job array on a real, single-node Slurm (Debian 12's 22.05), as root on
# a test machine without systemd: installs slurmctld, slurmd, slurm-client and munge,
# starts munged, slurmctld and slurmd, submits a tiny sweep into a folder whose name holds
# spaces, quotes and $(...), cancels one task in its first steps and one mid-way, submits
# again, and checks that only those points trained again (from their checkpoints), every
# run file and the summary.
#   scripts/slurm-check.sh              builds normlab-cli first (scripts/normlab.sh setup)
#   NORMLAB_CLI=path scripts/slurm-check.sh   uses that normlab-cli
# Refuses to touch a slurm.conf it did not write. The daemons it started are stopped at the end.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'slurm-check: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }
started=$(date +%s)

[ "$(id -u)" = 0 ] || fail "run it as root (it installs and starts Slurm)"
cli=${NORMLAB_CLI:-}
if [ -z "$cli" ]; then
  "$root/scripts/normlab.sh" setup >&2
  cli=$root/build/release/app/normlab-cli
fi
cli=$(realpath "$cli")

missing=()
for package in slurmctld slurmd slurm-client munge; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

conf=/etc/slurm/slurm.conf
marker="# written by normlab's scripts/slurm-check.sh"
if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then fail "$conf is not this script's: not touching it"; fi
host=$(hostname -s)
# Addresses given, so nothing has to resolve the host name (a fresh root's /etc/hosts may not know it).
cat >"$conf" <<EOF
$marker
ClusterName=normlab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=1001
MpiDefault=none
MailProg=/bin/true
KillWait=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown slurm: /var/spool/slurmctld /var/log/slurm
chown munge: /run/munge
[ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create

daemons=()
stop_daemons() {
  scancel --jobname=normlab-lr-sweep 2>/dev/null || true  # a check that failed midway leaves none running
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
trap stop_daemons EXIT
start() {  # name, pid file, command...
  local name=$1 pid_file=$2
  shift 2
  if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
    say "$name already runs (process $(cat "$pid_file"))"
    return
  fi
  rm -f "$pid_file"  # an earlier one's, killed before it could remove it
  "$@"
  for _ in $(seq 50); do [ -s "$pid_file" ] && break; sleep 0.1; done
  [ -s "$pid_file" ] || fail "$name did not start"
  daemons+=("$(cat "$pid_file")")
}
start munged /run/munge/munged.pid runuser -u munge -- /usr/sbin/munged
# A fresh cluster each time: no job of an earlier check comes back.
start slurmctld /run/slurmctld.pid /usr/sbin/slurmctld -c
start slurmd /run/slurmd.pid /usr/sbin/slurmd
for _ in $(seq 60); do
  state=$(sinfo --noheader --format=%T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || fail "the node is '$state', not idle: see /var/log/slurm/"
say "Slurm $(sinfo --version | cut -d' ' -f2) up on $host with $(nproc) CPUs"

# The folder's name would run `touch pwned` if a shell ever read it unquoted.
work=$(mktemp -d /tmp/slurm-check.XXXXXX)
runs="$work/runs, 'quoted' \"twice\" \$(touch pwned) \`touch pwned\`"
sweep=(sweep --vary lr --values 1e-3,3e-3 --placements pre,post --device cpu --threads 1 --layers 2
       --d-model 64 --heads 2 --context 32 --batch 8 --vocab 256 --steps 2000 --warmup 5 --eval-interval 500
       --eval-batches 2 --checkpoint-interval 0 --out "$runs")
# Point 0 trained here first (which also caches the tokenizer the tasks share): a finished
# point is not submitted.
"$cli" "${sweep[@]}" --task 0 >/dev/null
submitted=$("$cli" "${sweep[@]}" --slurm --throttle 2 --time 10:00)
echo "$submitted"
job=$(sed -n 's/.*submitted job array \([0-9]*\),.*/\1/p' <<<"$submitted")
[ -n "$job" ] || fail "no job id in: $submitted"
grep -qF "(tasks 1-3)" <<<"$submitted" || fail "expected tasks 1-3"
# Before the tasks have run files, only squeue can say they are queued or running.
early=$("$cli" "${sweep[@]}" --status | tail -1)
echo "$early"
grep -q "^lr-sweep: 1 done, .* 0 failed, 0 missing$" <<<"$early" || fail "squeue did not answer for the tasks"

# Task 2 cancelled in its first steps: as soon as its first save (the step-0 evaluation)
# is there. Slurm takes a moment to pass the SIGTERM on, so the stop comes some hundred
# milliseconds of steps later, but before the first evaluation and its checkpoint.
early_run="$runs/pre-norm_lr_3e-3_warmup_5_layers_2.json"
for _ in $(seq 1200); do [ -f "$early_run" ] && break; sleep 0.05; done
[ -f "$early_run" ] || fail "task 2 never started training"
scancel "${job}_2"
say "cancelled task ${job}_2 in its first steps"
# Task 3 cancelled mid-way, after its first checkpoint (at its first evaluation, step 500).
checkpoint="$runs/post-norm_lr_3e-3_warmup_5_layers_2.ckpt"
for _ in $(seq 600); do [ -f "$checkpoint" ] && break; sleep 0.1; done
[ -f "$checkpoint" ] || fail "task 3 never wrote a checkpoint"
scancel "${job}_3"
say "cancelled task ${job}_3 while it trained"
wait_for_job() {
  for _ in $(seq 600); do
    [ -z "$(squeue --noheader --jobs="$1" 2>/dev/null)" ] && return
    sleep 0.5
  done
  fail "job $1 did not end"
}
wait_for_job "$job"
status=$("$cli" "${sweep[@]}" --status)
echo "$status"
grep -q "2 done, 0 queued, 0 running, 2 failed, 0 missing" <<<"$status" || fail "expected tasks 2 and 3 failed after scancel"
for run in "$early_run" "$runs/post-norm_lr_3e-3_warmup_5_layers_2.json"; do
  grep -q '"status": "stopped"' "$run" || fail "the cancelled run $run was not saved as stopped"
done
early_step=$(head -1 "${early_run%.json}.ckpt" | sed -n 's/^{"schema":"normlab.checkpoint".*"step":\([0-9]*\),.*/\1/p')
[ -n "$early_step" ] && [ "$early_step" -gt 0 ] && [ "$early_step" -lt 500 ] ||
  fail "task 2's checkpoint is not from before its first evaluation (step '${early_step}')"
say "task 2 stopped with a checkpoint at step $early_step"

again=$("$cli" "${sweep[@]}" --slurm --throttle 2)
echo "$again"
grep -qF "(tasks 2-3)" <<<"$again" || fail "expected only tasks 2 and 3 submitted again"
job2=$(sed -n 's/.*submitted job array \([0-9]*\),.*/\1/p' <<<"$again")
wait_for_job "$job2"
grep -q "goes on from its checkpoint at step $early_step" "$runs/slurm/${job2}_2.out" ||
  fail "task 2 did not resume from step $early_step: $(cat "$runs/slurm/${job2}_2.out")"
grep -q "goes on from its checkpoint at step" "$runs/slurm/${job2}_3.out" || fail "task 3 did not resume: $(cat "$runs/slurm/${job2}_3.out")"

status=$("$cli" "${sweep[@]}" --status)
for run in "$runs"/*-norm_*.json; do
  grep -q '"status": "done"' "$run" || fail "$run is not done"
done
[ "$(ls "$runs"/*-norm_*.json | wc -l)" = 4 ] || fail "expected 4 run files"
[ "$(wc -l <"$runs/lr-sweep.csv")" = 5 ] || fail "expected 4 rows in the summary"
[ -s "$runs/lr-sweep.svg" ] || fail "no chart"
[ -z "$(find "$work" -name pwned; find / /tmp /var/spool/slurmd "$HOME" -maxdepth 1 -name pwned)" ] ||
  fail "a folder name ran a command"
echo "$status"
rm -rf "$work"
say "ok in $(($(date +%s) - started)) s: 4 points as one job array, task 2 cancelled in its first steps and task 3 mid-way, both re-submitted alone and resumed"
