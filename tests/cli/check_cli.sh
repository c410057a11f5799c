#!/usr/bin/env bash
# The nnrt command end to end on a small CSV problem (reference backend): train with a test set,
# a checkpoint and a report, then eval, predict, summary, and failures reported with their status.
set -euo pipefail
nnrt=$(readlink -f "$1")  # the folder changes below
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Three classes of four features: the class is the feature that is largest.
make_csv() {  # rows, offset
  awk -v rows="$1" -v off="$2" 'BEGIN {
    print "label,a,b,c,d"
    for (i = 0; i < rows; i++) {
      k = (i + off) % 3; line = k
      for (f = 0; f < 4; f++) line = line "," (f == k ? 1 + ((i * 7) % 10) / 20 : ((i + f) % 5) / 10 - 0.2)
      print line
    }
  }'
}
make_csv 90 0 > train.csv
make_csv 30 1 > test.csv
cat > model.json <<'JSON'
{"input": [4], "seed": 5, "layers": [{"type": "dense", "units": 8, "activation": "relu"},
  {"type": "output", "units": 3, "loss": "nll"}]}
JSON
trainer='{"optimizer": {"type": "adam", "learning_rate": 0.05}, "batch_size": 10}'
fail() { echo "check_cli: $*" >&2; exit 1; }

"$nnrt" train --model model.json --data train.csv --test test.csv --epochs 30 --backend reference --quiet \
  --trainer "$trainer" --save model.safetensors --report report.html > train.out
grep -q "^saved model.safetensors$" train.out || fail "train did not report the checkpoint: $(cat train.out)"
accuracy=$(sed -n 's/^test_accuracy=//p' train.out)
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.9) }' || fail "test accuracy $accuracy after training, expected >= 0.9"
grep -q "<svg" report.html || fail "the report has no curves"
echo "train: test_accuracy=$accuracy"

"$nnrt" eval --model-file model.safetensors --data test.csv --backend reference --json > eval.json
python3 -c 'import json, sys; r = json.load(open("eval.json")); sys.exit(abs(r["accuracy"] - float(sys.argv[1])) > 1e-4 or r["examples"] != 30)' \
  "$accuracy" || fail "eval disagrees with train: $(head -c 300 eval.json)"
echo "eval: same accuracy on 30 examples"

# An int8 copy calibrated on the training examples, evaluated and used like the float model.
"$nnrt" quantize --model-file model.safetensors --data train.csv --backend reference --save model.int8.safetensors \
  > quantize.out
grep -q "^quantized 1 layers to int8, calibrated on 90 examples$" quantize.out || fail "quantize: $(cat quantize.out)"
int8_accuracy=$("$nnrt" eval --model-file model.int8.safetensors --data test.csv --backend reference | sed -n 's/^test_accuracy=//p')
awk -v a="$int8_accuracy" 'BEGIN { exit !(a >= 0.9) }' || fail "int8 test accuracy $int8_accuracy, expected >= 0.9"
echo "quantize: int8 test_accuracy=$int8_accuracy"

"$nnrt" predict --model-file model.safetensors --data test.csv --backend reference --count 10 --output p.csv > predict.out
[ "$(head -1 p.csv)" = "example,predicted,probability,label" ] || fail "predict CSV header: $(head -1 p.csv)"
[ "$(wc -l < p.csv)" -eq 11 ] || fail "predict wrote $(wc -l < p.csv) lines, expected 11"
grep -Eq "^[0-9]+ of 10 right$" predict.out || fail "predict summary: $(cat predict.out)"
echo "predict: $(cat predict.out)"

"$nnrt" summary --model model.json --backend reference | grep -q "total parameters 67 (trainable 67)" \
  || fail "summary does not count 67 parameters"
# A model file given to --model opens as with --model-file (told by its first bytes); another file is
# refused with a message that names what --model takes, not with the JSON parser's complaint.
"$nnrt" summary --model model.safetensors --backend reference | grep -q "total parameters 67 (trainable 67)" \
  || fail "summary --model of a saved model does not count 67 parameters"
if "$nnrt" info | grep -q "^  onnx .*loaded"; then
  "$nnrt" export --model-file model.safetensors -o model.onnx > /dev/null
  cp model.onnx model.bin  # no .onnx name: its first bytes tell
  "$nnrt" summary --model model.bin --backend reference | grep -q "total parameters 67 (trainable 67)" \
    || fail "summary --model of an ONNX model does not count 67 parameters"
fi
printf '\x01\x02 not a model' > garbage.bin
if "$nnrt" summary --model garbage.bin > /dev/null 2> err.txt; then fail "summary --model garbage.bin succeeded"; fi
grep -q "is not a model config (JSON), a saved model (.safetensors) or an ONNX model" err.txt \
  || fail "summary --model garbage.bin: $(cat err.txt)"

# Failures: exit status 1 and the library's status and message on stderr.
expect_failure() {  # status, then the command
  local status="$1"
  shift
  if "$@" > /dev/null 2> err.txt; then fail "$* succeeded"; fi
  grep -q "^nnrt: $status: " err.txt || fail "$*: expected $status, got: $(cat err.txt)"
}
head -c 100 model.safetensors > truncated.safetensors
expect_failure NNRT_ERR_CORRUPT "$nnrt" eval --model-file truncated.safetensors --data test.csv --backend reference
expect_failure NNRT_ERR_INVALID_ARGUMENT "$nnrt" train --model model.json --data train.csv --backend reference \
  --trainer '{"optimizer": {"type": "adamm"}}'
expect_failure NNRT_ERR_INVALID_ARGUMENT "$nnrt" info --backend no-such-backend
expect_failure NNRT_ERR_UNSUPPORTED "$nnrt" train --model model.int8.safetensors --data train.csv --backend reference
echo "failures: statuses reported"
