#!/usr/bin/env bash
# A short libFuzzer run that grows a corpus from run to run. The fuzzer explores from a scratch copy
# of the committed corpus plus this machine's grown corpus (NNRT_FUZZ_CACHE, default
# ~/.cache/nnrt/fuzz/<fuzzer>), for the given number of seconds; the inputs it found that add
# coverage are kept in the grown corpus, so the next run starts where this one stopped instead of
# from the committed corpus again. `scripts/fuzz-grow` merges the grown corpora into the committed
# ones (only inputs that add coverage), to be committed. A crash, leak, sanitizer report or timeout
# fails the test; the input that did it is left in the scratch folder, named in the output.
#   short_run.sh <fuzzer> <corpus folder> <seconds>
set -euo pipefail
fuzzer=$(readlink -f "$1")
corpus=$2
seconds=$3
grown=${NNRT_FUZZ_CACHE:-$HOME/.cache/nnrt/fuzz}/$(basename "$fuzzer")
mkdir -p "$grown"
scratch=$(mktemp -d)
mkdir "$scratch/corpus"
cp "$corpus"/* "$scratch/corpus"/
find "$grown" -maxdepth 1 -type f -exec cp -n {} "$scratch/corpus"/ \;
before=$(ls "$scratch/corpus" | wc -l)
cd "$scratch"  # crash-* and leak-* inputs land here, beside fuzz.log
if "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus 2> fuzz.log; then
  grep -E "^stat::number_of_executed_units|^Done" fuzz.log || true
  # libFuzzer names the inputs it adds by their SHA-1: new names are new inputs.
  added=0
  for f in corpus/*; do
    name=$(basename "$f")
    if [ ! -e "$corpus/$name" ] && [ ! -e "$grown/$name" ]; then
      cp "$f" "$grown/$name"
      added=$((added + 1))
    fi
  done
  echo "corpus: $(ls "$corpus" | wc -l) committed, $before at the start with the grown ones, $added new kept in $grown"
  rm -rf "$scratch"
else
  tail -40 fuzz.log
  echo "fuzzing $(basename "$fuzzer") failed; inputs and log are in $scratch" >&2
  exit 1
fi
