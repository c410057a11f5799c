package nnrt_test

import (
	"math"
	"testing"

	"nnrt.dev/nnrt"
)

// maskedAttentionConfig is a graph of two inputs, token ids and a Hugging Face attention mask (1:
// a real token, 0: padding), and two outputs: class probabilities [N, 3] and the attention's
// output [N, 6, 8].
const maskedAttentionConfig = `{"inputs": [{"name": "ids", "shape": [6]}, {"name": "attention_mask", "shape": [6]}],
	"seed": 3, "nodes": [
	{"name": "emb", "type": "embedding", "inputs": ["ids"], "vocab": 11, "units": 8},
	{"name": "attn", "type": "multi_head_attention", "inputs": ["emb", "attention_mask"], "heads": 2, "mask": "keep"},
	{"name": "out", "type": "output", "inputs": ["attn"], "units": 3, "loss": "nll"}],
	"outputs": ["out", "attn"]}`

// closeAll closes every array of a PredictMany result.
func closeAll(arrays []*nnrt.Array) {
	for _, a := range arrays {
		a.Close()
	}
}

func TestMultiInputDescription(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(maskedAttentionConfig)).on(t)
	defer model.Close()
	inputs := must(model.Inputs()).on(t)
	if len(inputs) != 2 || inputs[0].Name != "ids" || !equal(inputs[0].Shape, []int64{6}) ||
		inputs[1].Name != "attention_mask" || !equal(inputs[1].Shape, []int64{6}) {
		t.Errorf("Inputs() = %+v", inputs)
	}
	if n := must(model.OutputCount()).on(t); n != 2 {
		t.Errorf("OutputCount() = %d, expected 2", n)
	}

	// A model of one input describes it as "input".
	mlp := must(ctx.NewModel(mlpConfig)).on(t)
	defer mlp.Close()
	inputs = must(mlp.Inputs()).on(t)
	if len(inputs) != 1 || inputs[0].Name != "input" || !equal(inputs[0].Shape, []int64{8}) {
		t.Errorf("Inputs() of a one-input model = %+v", inputs)
	}
	if n := must(mlp.OutputCount()).on(t); n != 1 {
		t.Errorf("OutputCount() of a one-input model = %d, expected 1", n)
	}

	model.Close()
	_, err := model.Inputs()
	expectError(t, err, nnrt.ErrInvalidArgument, "closed")
	_, err = model.OutputCount()
	expectError(t, err, nnrt.ErrInvalidArgument, "closed")
}

func TestPredictManyMaskedAttention(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(maskedAttentionConfig)).on(t)
	defer model.Close()

	const n = 2
	ids := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1}
	mask := []float32{1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0}
	maskArray := array(t, ctx, mask, n, 6)
	outs := must(model.PredictMany([]*nnrt.Array{array(t, ctx, ids, n, 6), maskArray})).on(t)
	if len(outs) != 2 {
		closeAll(outs)
		t.Fatalf("PredictMany gave %d outputs, expected 2", len(outs))
	}
	if got := outs[0].Shape(); !equal(got, []int64{n, 3}) || outs[0].DType() != nnrt.F32 {
		t.Errorf("out: %v %v, expected F32 [2 3]", outs[0].DType(), got)
	}
	if got := outs[1].Shape(); !equal(got, []int64{n, 6, 8}) || outs[1].DType() != nnrt.F32 {
		t.Errorf("attn: %v %v, expected F32 [2 6 8]", outs[1].DType(), got)
	}
	probs := values[float32](t, outs[0])
	attn := values[float32](t, outs[1])
	for i := 0; i < n; i++ {
		sum := 0.0
		for _, p := range probs[i*3 : i*3+3] {
			if p < 0 || p > 1 {
				t.Errorf("example %d: probability %v", i, p)
			}
			sum += float64(p)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("example %d: probabilities sum to %v", i, sum)
		}
	}

	// The same ids as F32 give the same outputs (every input is converted to F32).
	idsF32 := make([]float32, len(ids))
	for i, id := range ids {
		idsF32[i] = float32(id)
	}
	again := must(model.PredictMany([]*nnrt.Array{array(t, ctx, idsF32, n, 6), maskArray})).on(t)
	if !equal(values[float32](t, again[0]), probs) || !equal(values[float32](t, again[1]), attn) {
		t.Errorf("F32 ids predict otherwise than I64 ids")
	}

	// Other tokens at the masked positions (4 and 5) change nothing that tokens 0..3 see: their
	// rows of attn stay bit for bit the same, while the masked tokens' own rows change.
	changed := append([]int64(nil), ids...)
	changed[4], changed[5], changed[10], changed[11] = 9, 3, 2, 7
	outs = must(model.PredictMany([]*nnrt.Array{array(t, ctx, changed, n, 6), maskArray})).on(t)
	outs[0].Close()
	attn2 := values[float32](t, outs[1])
	for i := 0; i < n; i++ {
		kept := attn[i*48 : i*48+4*8]
		if !equal(attn2[i*48:i*48+4*8], kept) {
			t.Errorf("example %d: attn rows 0..3 changed with the tokens at masked positions", i)
		}
	}
	if equal(attn2, attn) {
		t.Errorf("attn did not change at all with other tokens at positions 4 and 5")
	}
}

func TestPredictManyErrors(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(maskedAttentionConfig)).on(t)
	defer model.Close()
	ids := array(t, ctx, []int64{1, 2, 3, 4, 5, 6}, 1, 6)
	mask := array(t, ctx, []float32{1, 1, 1, 1, 1, 1}, 1, 6)

	// Predict runs models of one input only.
	out, err := model.Predict(ids)
	if out != nil {
		t.Errorf("Predict on a model of two inputs gave an array")
	}
	expectError(t, err, nnrt.ErrInvalidArgument, "")

	// Each failure gives no arrays.
	expectNone := func(outs []*nnrt.Array, err error, status nnrt.Status) {
		t.Helper()
		if outs != nil {
			closeAll(outs)
			t.Errorf("a failed PredictMany returned %d arrays", len(outs))
		}
		expectError(t, err, status, "")
	}
	outs, err := model.PredictMany([]*nnrt.Array{ids})
	expectNone(outs, err, nnrt.ErrInvalidArgument)
	outs, err = model.PredictMany([]*nnrt.Array{ids, nil})
	expectNone(outs, err, nnrt.ErrInvalidArgument)
	outs, err = model.PredictMany([]*nnrt.Array{ids, array(t, ctx, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 2, 6)})
	expectNone(outs, err, nnrt.ErrShape)
	outs, err = model.PredictMany([]*nnrt.Array{ids, array(t, ctx, []float32{1, 1, 1, 1, 1}, 1, 5)})
	expectNone(outs, err, nnrt.ErrShape)

	// Cancelled run options stop the call; reset, it runs.
	opts := must(nnrt.NewRunOptions()).on(t)
	defer opts.Close()
	check(t, opts.Cancel())
	outs, err = model.PredictManyWith([]*nnrt.Array{ids, mask}, opts)
	expectNone(outs, err, nnrt.ErrCancelled)
	check(t, opts.Reset())
	outs = must(model.PredictManyWith([]*nnrt.Array{ids, mask}, opts)).on(t)
	if len(outs) != 2 {
		t.Errorf("PredictManyWith gave %d outputs, expected 2", len(outs))
	}
	closeAll(outs)

	// A model of several inputs does not train.
	_, err = model.NewTrainer(nil)
	expectError(t, err, nnrt.ErrUnsupported, "")

	// A closed input is refused before any C call.
	mask.Close()
	outs, err = model.PredictMany([]*nnrt.Array{ids, mask})
	expectNone(outs, err, nnrt.ErrInvalidArgument)
}

func TestPredictManyOneInput(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	x := array(t, ctx, features(3, 5), 3, 8)
	want := values[float32](t, must(model.Predict(x)).on(t))
	outs := must(model.PredictMany([]*nnrt.Array{x})).on(t)
	if len(outs) != 1 {
		closeAll(outs)
		t.Fatalf("PredictMany gave %d outputs, expected 1", len(outs))
	}
	if got := values[float32](t, outs[0]); !equal(got, want) {
		t.Errorf("PredictMany = %v, Predict = %v", got, want)
	}
}
