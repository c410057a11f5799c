#!/usr/bin/env bash
# Runs a test program on 2 ranks (NNRT_TEST_RANKS to change) on this host over the Gloo communicator,
# as processes that no launcher joined (Spark executors) run it: each rank is a plain child process
# with NNRT_GLOO_RANK and NNRT_GLOO_SIZE, and they meet through a fresh rendezvous directory
# (NNRT_GLOO_STORE) on loopback (NNRT_GLOO_HOSTNAME). The same pass rule as mpirun.sh: every rank
# printed "rank R ok"; in the fault scenarios (hang, kill), every rank but the faulty last one, and
# every rank must end within the time limit. (No outlive_killed_rank.sh: nobody here ends the other
# ranks when one dies.)
#   gloo_launch.sh <plugin folder> <program> <scenario> [args...]
# Exit 77 (skipped) when the Gloo communicator plugin is missing.
set -uo pipefail
plugin_dir=$1
shift
scenario=${2:-}
ranks=${NNRT_TEST_RANKS:-2}
if [ ! -e "$plugin_dir/libnnrt-comm-gloo.so" ]; then
  echo "skipped: $plugin_dir/libnnrt-comm-gloo.so was not built (meson -Dgloo=enabled needs libgloo-dev)"
  exit 77
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
mkdir "$work/store"
export NNRT_BACKEND_PATH=$plugin_dir NNRT_TEST_COMM=gloo NNRT_GLOO_SIZE=$ranks NNRT_GLOO_STORE=$work/store \
  NNRT_GLOO_HOSTNAME=127.0.0.1
limit=240
case "$scenario" in hang | kill) limit=60 ;; esac
start=$(date +%s)
for ((r = 0; r < ranks; r++)); do
  NNRT_GLOO_RANK=$r timeout --kill-after=10 "$limit" "$@" >"$work/rank$r.log" 2>&1 &
  pids+=($!)
done
failed=0
rcs=()
for ((r = 0; r < ranks; r++)); do
  wait "${pids[$r]}" 2>/dev/null  # not the shell's own "Killed" line for the killed rank
  rc=$?
  rcs+=("$rc")
  elapsed=$(($(date +%s) - start))
  sed "s/^/[$r] /" "$work/rank$r.log"
  echo "rank $r exited with $rc after $elapsed s"
  # timeout's 124 (or KILL's 137 after its grace period) ends a hang; the killed rank's 137 comes early.
  if [ "$rc" = 124 ] || [ "$elapsed" -ge "$limit" ]; then
    echo "FAILED: rank $r did not end within $limit s"
    failed=1
  fi
done
pids=()
[ "$failed" = 0 ] || exit 1
# In the fault scenarios the last rank (which stops answering or is killed) has nothing to report.
checked=$ranks
case "$scenario" in hang | kill) checked=$((ranks - 1)) ;; esac
for ((r = 0; r < checked; r++)); do
  if ! grep -q "^rank $r ok" "$work/rank$r.log" || { [ "$checked" = "$ranks" ] && [ "${rcs[$r]}" != 0 ]; }; then
    echo "FAILED: rank $r did not print \"rank $r ok\" and exit with 0"
    exit 1
  fi
done
exit 0
