package nnrt_test

import (
	"testing"

	"nnrt.dev/nnrt"
)

// A small GPT: windows of 8 tokens, vocabulary 12.
const gptConfig = `{"input": [8], "seed": 3, "nodes": [
  {"name": "emb", "type": "embedding", "inputs": ["input"], "vocab": 12, "units": 8},
  {"name": "pos", "type": "position_embedding", "inputs": ["emb"]},
  {"name": "att", "type": "multi_head_attention", "inputs": ["pos"], "heads": 2, "causal": true},
  {"name": "res", "type": "add", "inputs": ["pos", "att"]},
  {"name": "out", "type": "output", "inputs": ["res"], "units": 12, "loss": "nll", "flatten": false}],
  "outputs": ["out"]}`

// Greedy tokens with and without the cache agree; a seed names one sample; bad input is refused.
func TestGenerate(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(gptConfig)).on(t)
	defer model.Close()
	greedy := must(model.Generate([]int64{1, 2, 3}, 20, nil)).on(t)
	if len(greedy) != 20 {
		t.Fatalf("%d tokens, expected 20", len(greedy))
	}
	for _, token := range greedy {
		if token < 0 || token >= 12 {
			t.Fatalf("token %d outside the vocabulary: %v", token, greedy)
		}
	}
	if again := must(model.Generate([]int64{1, 2, 3}, 20, map[string]any{"cache": false})).on(t); !equal(again, greedy) {
		t.Errorf("recomputed %v, cached %v", again, greedy)
	}
	sample := func(seed int) []int64 {
		return must(model.Generate([]int64{1, 2, 3}, 30, map[string]any{"temperature": 1, "seed": seed})).on(t)
	}
	if a, b := sample(4), sample(4); !equal(a, b) {
		t.Errorf("seed 4 gave %v and %v", a, b)
	}
	if a, b := sample(4), sample(5); equal(a, b) {
		t.Errorf("seeds 4 and 5 both gave %v", a)
	}
	if n := must(model.Generate([]int64{1}, 0, nil)).on(t); len(n) != 0 {
		t.Errorf("maxTokens 0 gave %v", n)
	}
	_, err := model.Generate([]int64{1, 12}, 5, nil)
	expectError(t, err, nnrt.ErrInvalidArgument, "prompt[1] is 12")
	_, err = model.Generate(nil, 5, nil)
	expectError(t, err, nnrt.ErrInvalidArgument, "prompt_len is 0")
	_, err = model.Generate([]int64{1}, 5, `{"top_p": 0.9}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "top_p")
}
