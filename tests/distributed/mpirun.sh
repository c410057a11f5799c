#!/usr/bin/env bash
# Runs a test program on 2 ranks (NNRT_TEST_RANKS to change) on this host: mpirun -np 2 over TCP on loopback, as the test suite
# needs it (Open MPI refuses root without the two variables below; no core binding, since other
# programs share the cores). Passes when every rank printed "rank R ok" and, for the fault
# scenarios, when the job ended within the time limit (it must never hang).
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
start=$(date +%s)
timeout --kill-after=10 "$limit" mpirun -np "$ranks" --oversubscribe --bind-to none --mca btl self,tcp \
  --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@" >"$log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$log"
echo "mpirun exited with $rc after $elapsed s"
# timeout's 124 (or its KILL after the grace period) ends a hang; mpirun itself exits 137 when a rank
# was killed, so the elapsed time tells the two apart.
if [ "$rc" = 124 ] || [ "$elapsed" -ge "$limit" ]; then
  echo "FAILED: the job did not end within $limit s"
  exit 1
fi
case "$scenario" in
  kill)
    # Rank 1 is gone: rank 0 either reports the dead rank within its timeout or is ended by mpirun.
    if grep -q "rank 0: fit returned NNRT_ERR_BACKEND" "$log" || grep -qi "killed\|signal 9\|exited on signal" "$log"; then
      exit 0
    fi
    echo "FAILED: rank 0 neither reported the dead rank nor was ended"
    exit 1
    ;;
  hang)
    # Every rank but the last (the one that stops answering) must name it.
    for ((r = 0; r < ranks - 1; r++)); do
      if ! grep -q "^rank $r ok" "$log"; then
        echo "FAILED: rank $r did not report the rank that stopped answering"
        exit 1
      fi
    done
    exit 0
    ;;
esac
[ "$rc" = 0 ] && grep -q "^rank 0 ok" "$log" && grep -q "^rank 1 ok" "$log" && exit 0
echo "FAILED"
exit 1
