#!/usr/bin/env bash
# examples/gpt.json, a byte-level GPT, trained by the nnrt command on a text Debian ships on every
# machine (base-files' GPL-3, 35 KB) for 4 epochs (124 steps of 32 windows of 64 bytes; about 20 s
# on 2 cores), with a fixed seed. Its perplexity on the held-out last 10% of the text must fall from
# the untrained model's (above 100; a uniform guess among the bytes scores 256) to below 16: better than a
# unigram model of the training bytes (33 on that tail) and than an interpolated bigram model (15.9),
# so it must use the context attention gives it (13.3 measured). A model that sees the byte it
# predicts (a broken causal mask, or labels equal to the inputs) would get near 1: it must stay
# above 2. Then eval agrees with train, and bad input is refused with its reason.
#
#   check_gpt_text.sh NNRT EXAMPLES_DIR
set -euo pipefail
nnrt=$(readlink -f "$1")
examples=$(readlink -f "$2")
text=/usr/share/common-licenses/GPL-3
[ -r "$text" ] || { echo "no $text (Debian's base-files): skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "check_gpt_text: $*" >&2; exit 1; }

# The untrained model (0 epochs) on the held-out tail: where training starts.
"$nnrt" train --model "$examples/gpt.json" --data "text:$text" --epochs 0 --quiet > untrained.out
first=$(sed -n 's/^test_perplexity=//p' untrained.out)
start=$(date +%s)
"$nnrt" train --model "$examples/gpt.json" --trainer "$examples/gpt_trainer.json" --data "text:$text" --epochs 4 \
  --save gpt.safetensors --report report.html > train.out
echo "train: $(( $(date +%s) - start )) s"
grep -q "^data: text $text as bytes, windows of 64 tokens (last 10% held out): 987 training examples, 54 test examples$" \
  train.out || fail "unexpected data line: $(grep '^data' train.out)"
grep -Eq "^epoch 1/4 batch 3/31 loss [0-9.]+ ppl [0-9.]+ [0-9]+ tokens/s" train.out \
  || fail "progress shows no perplexity or tokens/s: $(grep -m1 '^epoch' train.out)"
perplexity=$(sed -n 's/^test_perplexity=//p' train.out)
echo "held-out perplexity: untrained $first, after 124 steps $perplexity"
awk -v p="$first" 'BEGIN { exit !(p > 100) }' || fail "the untrained model's perplexity is $first, expected > 100"
awk -v p="$perplexity" 'BEGIN { exit !(p > 2 && p < 16) }' \
  || fail "held-out perplexity $perplexity after 124 steps, expected between 2 and 16"
grep -q ">Perplexity<" report.html || fail "the report has no perplexity chart"
grep -q "test perplexity" report.html || fail "the report does not give the test perplexity"

"$nnrt" eval --model-file gpt.safetensors --data "text:$text" --json > eval.json
python3 -c 'import json, sys; r = json.load(open("eval.json"))
sys.exit(abs(r["perplexity"] - float(sys.argv[1])) > 1e-3 * r["perplexity"] or r["examples"] != 54 or r["labels"] != 54 * 64)' \
  "$perplexity" || fail "eval disagrees with train: $(head -c 300 eval.json)"
echo "eval: the same perplexity on 54 held-out windows"

# Failures: exit status 1 and the reason on stderr.
expect_failure() {  # text the message must hold, then the command
  local text="$1"
  shift
  if "$@" > /dev/null 2> err.txt; then fail "$* succeeded"; fi
  grep -qF "$text" err.txt || fail "$*: expected \"$text\", got: $(cat err.txt)"
}
expect_failure "no such file: /nonexistent/text" \
  "$nnrt" train --model "$examples/gpt.json" --data text:/nonexistent/text --epochs 1
expect_failure "but the model's input is [1, 28, 28]" \
  "$nnrt" train --model "$examples/lenet.json" --data "text:$text" --epochs 1
printf 'too short for a window of 64 bytes' > short.txt
expect_failure "NNRT_ERR_INVALID_ARGUMENT: nnrt_dataset_load: short.txt: the text holds 34 bytes (the train split's 31 of them), too few for one window of 64 tokens" \
  "$nnrt" train --model "$examples/gpt.json" --data text:short.txt --epochs 1
echo "failures: reported with their reasons"
