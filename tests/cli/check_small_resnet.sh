#!/usr/bin/env bash
# examples/small_resnet.json, a residual network with batch norm (three stages of basic blocks, 16,
# 32 and 64 channels), trained by the nnrt command with examples/small_resnet_trainer.json on the
# first 10000 Fashion-MNIST images for one epoch (79 steps at the schedule's highest learning rate;
# about 15 s on 2 cores). Its test accuracy must pass 0.50 (0.10 is chance; 0.645 measured): the
# residual adds, the batch norms' running statistics (what evaluation uses) and their gradients all
# work. The full run, 10 epochs on all 60000 images,
# is the README's command (by hand, not here: about 13 minutes on 2 cores; it reached 0.926).
#
#   check_small_resnet.sh NNRT EXAMPLES_DIR
set -euo pipefail
nnrt=$(readlink -f "$1")
examples=$(readlink -f "$2")
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "no $data (Debian's dataset-fashion-mnist): skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "check_small_resnet: $*" >&2; exit 1; }

start=$(date +%s)
"$nnrt" train --model "$examples/small_resnet.json" --trainer "$examples/small_resnet_trainer.json" \
  --data fashion-mnist --limit 10000 --epochs 1 --quiet > train.out
echo "train: $(( $(date +%s) - start )) s"
accuracy=$(sed -n 's/^test_accuracy=//p' train.out)
echo "test accuracy after one epoch on 10000 images: $accuracy"
awk -v a="$accuracy" 'BEGIN { exit !(a > 0.50) }' || fail "test accuracy $accuracy, expected above 0.50"
