#!/usr/bin/env bash
# `nnrt train` stopped by Ctrl-C (SIGINT): it stops at the next batch, saves the model (--save), and
# exits with 130 as a shell reports a process SIGINT stopped, so that scripts can tell an
# interrupted run from a finished one. The saved file must load.
#   cli_sigint.sh <nnrt>
set -uo pipefail
nnrt=$(realpath "$1")  # the script works in a temporary folder
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
# Two separable classes, 512 rows: label, then four features.
awk 'BEGIN { for (i = 0; i < 512; ++i) { c = i % 2; s = c ? 1 : -1;
  printf "%d,%.3f,%.3f,%.3f,%.3f\n", c, s + (i % 7) / 10, s - (i % 5) / 10, s, -s } }' > data.csv
cat > model.json <<'JSON'
{"input": [4], "layers": [{"type": "dense", "units": 8, "activation": "relu"},
                          {"type": "output", "units": 2, "loss": "nll"}]}
JSON
"$nnrt" train --model model.json --data data.csv --test none --epochs 1000000 --save out.safetensors \
  --trainer '{"batch_size": 8}' > train.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "batch" train.log && break
  sleep 0.1
done
if ! grep -q "batch" train.log; then
  echo "training never reported progress:"; cat train.log
  kill -9 $pid
  exit 1
fi
kill -INT $pid
wait $pid
rc=$?
cat train.log | tail -3
if [ $rc -ne 130 ]; then
  echo "expected exit status 130 after SIGINT, got $rc"
  exit 1
fi
if ! "$nnrt" summary --model-file out.safetensors > summary.txt 2>&1; then
  echo "the model saved on SIGINT does not load:"; cat summary.txt
  exit 1
fi
echo "SIGINT: exit status 130, out.safetensors saved and loads"
