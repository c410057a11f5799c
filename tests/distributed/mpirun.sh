#!/usr/bin/env bash
# Runs a test program on 2 ranks (NNRT_TEST_RANKS to change) on this host: mpirun -np 2 over TCP on loopback, as the test suite
# needs it (Open MPI refuses root without the two variables below; no core binding, since other
# programs share the cores). Passes when every rank printed "rank R ok"; in the fault scenarios
# (hang, kill), every rank but the faulty last one, and the job must end within the time limit.
#   mpirun.sh <plugin folder> <program> <scenario> [args...]
# Exit 77 (skipped) when mpirun or the MPI communicator plugin is missing.
set -uo pipefail
plugin_dir=$1
shift
program=$1
scenario=${2:-}
ranks=${NNRT_TEST_RANKS:-2}
if ! command -v mpirun >/dev/null; then
  echo "skipped: mpirun not found (scripts/setup installs openmpi-bin)"
  exit 77
fi
if [ ! -e "$plugin_dir/libnnrt-comm-mpi.so" ]; then
  echo "skipped: $plugin_dir/libnnrt-comm-mpi.so was not built (meson -Dmpi=enabled needs libopenmpi-dev)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Idle ranks yield the CPU instead of spinning: two ranks share two busy cores.
export OMPI_MCA_mpi_yield_when_idle=1
export NNRT_BACKEND_PATH=$plugin_dir
log=$(mktemp)
trap 'rm -f "$log"' EXIT
limit=240
case "$scenario" in hang | kill) limit=60 ;; esac
launch=()
if [ "$scenario" = kill ]; then
  # By default mpirun ends every rank as soon as one dies, so the surviving ranks' own handling of
  # the dead one would never run: each rank runs under outlive_killed_rank.sh, which mpirun sees
  # instead. (Open MPI's own way, --mca orte_enable_recovery 1, crashes mpirun 4.1.4 in its PMIx
  # event handler in about half the runs.)
  launch=("$(dirname "$0")/outlive_killed_rank.sh")
  export NNRT_KILL_LOG=$log NNRT_KILL_RANKS=$ranks
fi
# Open MPI 4.1.4's mpirun itself sometimes crashes in its PMIx log handler (pmix_server_log_fn)
# while forwarding the survivor's "peer process has unexpectedly disconnected" message, taking the
# ranks' reports with it: the kill scenario then runs again, and counts as skipped (never passed)
# if mpirun crashes every time. Passing needs the surviving ranks' own reports.
attempts=1
[ "$scenario" = kill ] && attempts=3
for ((attempt = 1; attempt <= attempts; attempt++)); do
  start=$(date +%s)
  timeout --kill-after=10 "$limit" mpirun -np "$ranks" --oversubscribe --bind-to none --mca btl self,tcp \
    --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "${launch[@]}" "$@" >"$log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  cat "$log"
  echo "mpirun exited with $rc after $elapsed s"
  launcher_crashed=0
  grep -q "pmix_server_log_fn\|PMIX ERROR" "$log" && ! grep -q "^rank 0 ok" "$log" && launcher_crashed=1
  [ "$launcher_crashed" = 0 ] && break
  echo "mpirun itself crashed (attempt $attempt of $attempts)"
done
if [ "$launcher_crashed" = 1 ]; then
  echo "skipped: mpirun itself crashed in all $attempts attempts (Open MPI's PMIx log handler), so the ranks' reports were lost"
  exit 77
fi
# timeout's 124 (or its KILL after the grace period) ends a hang; mpirun itself exits 137 when a rank
# was killed, so the elapsed time tells the two apart.
if [ "$rc" = 124 ] || [ "$elapsed" -ge "$limit" ]; then
  echo "FAILED: the job did not end within $limit s"
  exit 1
fi
case "$scenario" in
  hang | kill)
    # Every rank but the last (the one that stops answering or is killed) must see its fit fail
    # within its own time bound with NNRT_ERR_BACKEND and a message naming that rank, and say so
    # ("rank R ok" after test_distributed's checks); what mpirun prints about the dead rank counts
    # for nothing.
    for ((r = 0; r < ranks - 1; r++)); do
      if ! grep -q "^rank $r ok" "$log"; then
        echo "FAILED: rank $r did not report the rank that $([ "$scenario" = kill ] && echo died || echo stopped answering)"
        exit 1
      fi
    done
    exit 0
    ;;
esac
[ "$rc" = 0 ] && grep -q "^rank 0 ok" "$log" && grep -q "^rank 1 ok" "$log" && exit 0
echo "FAILED"
exit 1
