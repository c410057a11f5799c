#!/usr/bin/env bash
# A short libFuzzer run: the fuzzer explores from a scratch copy of the committed corpus (so that the
# corpus itself is not rewritten) for the given number of seconds. A crash, leak, sanitizer report
# or timeout fails the test; the input that did it is left in the scratch folder, named in the output.
#   short_run.sh <fuzzer> <corpus folder> <seconds>
set -euo pipefail
fuzzer=$(readlink -f "$1")
corpus=$2
seconds=$3
scratch=$(mktemp -d)
mkdir "$scratch/corpus"
cp "$corpus"/* "$scratch/corpus"/
cd "$scratch"  # crash-* and leak-* inputs land here, beside fuzz.log
if "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus 2> fuzz.log; then
  grep -E "^stat::number_of_executed_units|^Done" fuzz.log || true
  rm -rf "$scratch"
else
  tail -40 fuzz.log
  echo "fuzzing $(basename "$fuzzer") failed; inputs and log are in $scratch" >&2
  exit 1
fi
