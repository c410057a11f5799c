#!/usr/bin/env bash
# Runs one rank of the kill scenario (mpirun.sh). mpirun ends the whole job the moment it sees one
# of the processes it launched die, before the surviving ranks could report how nnrt handled the
# loss. So each rank runs as this script's child: the rank that kills itself really dies (its
# sockets close, its peers see it gone), while the script, which is what mpirun watches, stays
# until every other rank has printed its closing counts line to the job's log (or 60 s have
# passed), then exits with the rank's status.
#   outlive_killed_rank.sh <program> [args...]     (NNRT_KILL_LOG: the job's log; NNRT_KILL_RANKS)
"$@"
rc=$?
if [ "$rc" -gt 128 ]; then
  for ((i = 0; i < 600; i++)); do
    reported=$(grep -c "^nnrt-test-\(counts\|repeats\):" "$NNRT_KILL_LOG")
    [ "$reported" -ge $((NNRT_KILL_RANKS - 1)) ] && break
    sleep 0.1
  done
fi
exit "$rc"
