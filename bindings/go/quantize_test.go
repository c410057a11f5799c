package nnrt_test

import (
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"nnrt.dev/nnrt"
)

// cnnConfig takes 1x8x8 images: a convolution, then two dense layers.
const cnnConfig = `{"input": [1, 8, 8], "seed": 11, "layers": [
	{"type": "conv2d", "name": "c1", "filters": 4, "kernel": 3, "padding": "same", "activation": "relu"},
	{"type": "flatten"},
	{"type": "dense", "name": "d1", "units": 16, "activation": "relu"},
	{"type": "output", "name": "out", "units": 3, "activation": "softmax", "loss": "nll"}]}`

// images makes 64 random images in [0, 1) as an F32 array [64, 1, 8, 8], and a calibration dataset
// of them (labels all 0: quantization does not read them).
func images(t *testing.T, ctx *nnrt.Context) (*nnrt.Array, *nnrt.Dataset) {
	t.Helper()
	r := rand.New(rand.NewSource(17))
	pixels := make([]float32, 64*64)
	for i := range pixels {
		pixels[i] = r.Float32()
	}
	x := array(t, ctx, pixels, 64, 1, 8, 8)
	data := must(ctx.NewDataset(x, array(t, ctx, make([]int64, 64), 64))).on(t)
	t.Cleanup(data.Close)
	return x, data
}

// largestDifference is the largest absolute difference between two models' predictions for x.
func largestDifference(t *testing.T, a, b *nnrt.Model, x *nnrt.Array) float64 {
	t.Helper()
	pa := values[float32](t, must(a.Predict(x)).on(t))
	pb := values[float32](t, must(b.Predict(x)).on(t))
	worst := 0.0
	for i := range pa {
		worst = math.Max(worst, math.Abs(float64(pa[i]-pb[i])))
	}
	return worst
}

// integral reports whether every value is an integer within [-limit, limit], and the largest size.
func integral(w []float32, limit float64) (bool, float64) {
	top := 0.0
	for _, v := range w {
		f := float64(v)
		if f != math.Trunc(f) || math.Abs(f) > limit {
			return false, math.Abs(f)
		}
		top = math.Max(top, math.Abs(f))
	}
	return true, top
}

// A quantized model predicts close to the float one, with integer weights of 7 bits.
func TestQuantizedModelPredictsLikeTheFloatOne(t *testing.T) {
	ctx := newContext(t)
	x, calibration := images(t, ctx)
	model := must(ctx.NewModel(cnnConfig)).on(t)
	defer model.Close()
	quantized := must(model.Quantize(calibration, map[string]any{"batches": 0, "batch_size": 16})).on(t)
	defer quantized.Close()
	if worst := largestDifference(t, model, quantized, x); worst >= 0.05 {
		t.Fatalf("largest probability difference %g", worst)
	}
	for _, name := range []string{"c1.weight", "d1.weight"} {
		w := values[float32](t, must(quantized.Param(name)).on(t))
		if ok, v := integral(w, 63); !ok {
			t.Errorf("%s holds %g, not an integer within [-63, 63]", name, v)
		}
	}
	for i, s := range values[float32](t, must(quantized.Param("d1.weight_scale")).on(t)) {
		if !(s > 0) {
			t.Errorf("d1.weight_scale[%d] = %g", i, s)
		}
	}
	if ok, _ := integral(values[float32](t, must(model.Param("d1.weight")).on(t)), 1e9); ok {
		t.Error("the float model's weights became integers")
	}
}

// A quantized model cannot be trained, exported to ONNX or quantized again.
func TestQuantizedModelRefusals(t *testing.T) {
	ctx := newContext(t)
	_, calibration := images(t, ctx)
	model := must(ctx.NewModel(cnnConfig)).on(t)
	defer model.Close()
	quantized := must(model.Quantize(calibration, nil)).on(t)
	defer quantized.Close()
	_, err := quantized.NewTrainer(`{"optimizer": {"type": "sgd"}}`)
	expectError(t, err, nnrt.ErrUnsupported, "quantized")
	expectError(t, quantized.ExportONNX(filepath.Join(t.TempDir(), "q.onnx")), nnrt.ErrUnsupported, "")
	_, err = quantized.Quantize(calibration, nil)
	expectError(t, err, nnrt.ErrUnsupported, "already quantized")
}

// The options reach nnrt: 8-bit weights, excluded layers, and bad options named in the error.
func TestQuantizeOptions(t *testing.T) {
	ctx := newContext(t)
	x, calibration := images(t, ctx)
	model := must(ctx.NewModel(cnnConfig)).on(t)
	defer model.Close()
	eight := must(model.Quantize(calibration, `{"weight_bits": 8, "batches": 0}`)).on(t)
	defer eight.Close()
	if ok, top := integral(values[float32](t, must(eight.Param("d1.weight")).on(t)), 127); !ok || top <= 63 {
		t.Errorf("8-bit weights: integral %v, largest %g", ok, top)
	}
	if worst := largestDifference(t, model, eight, x); worst >= 0.05 {
		t.Errorf("8 bits: largest probability difference %g", worst)
	}
	kept := must(model.Quantize(calibration, map[string]any{"exclude": []string{"c1"}})).on(t)
	defer kept.Close()
	if got, want := values[float32](t, must(kept.Param("c1.weight")).on(t)),
		values[float32](t, must(model.Param("c1.weight")).on(t)); !equal(got, want) {
		t.Error("the excluded layer c1 changed")
	}
	_, err := model.Quantize(calibration, `{"bits": 8}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "bits")
	_, err = model.Quantize(calibration, map[string]any{"exclude": []string{"nope"}})
	expectError(t, err, nnrt.ErrInvalidArgument, "nope")
	small := array(t, ctx, make([]float32, 4*36), 4, 1, 6, 6)
	wrong := must(ctx.NewDataset(small, array(t, ctx, make([]int64, 4), 4))).on(t)
	defer wrong.Close()
	_, err = model.Quantize(wrong, nil)
	expectError(t, err, nnrt.ErrShape, "")
	_, err = model.Quantize(nil, nil)
	expectError(t, err, nnrt.ErrInvalidArgument, "")
}

// A quantized weight is set from int8 values; the model saves, loads and shares.
func TestQuantizedWeightsSaveAndShare(t *testing.T) {
	ctx := newContext(t)
	x, calibration := images(t, ctx)
	model := must(ctx.NewModel(cnnConfig)).on(t)
	defer model.Close()
	quantized := must(model.Quantize(calibration, nil)).on(t)
	defer quantized.Close()
	param := must(quantized.Param("d1.weight")).on(t)
	shape := param.Shape()
	param.Close()
	r := rand.New(rand.NewSource(5))
	w := make([]int8, shape[0]*shape[1])
	floats := make([]float32, len(w))
	for i := range w {
		w[i] = int8(r.Intn(127) - 63)
		floats[i] = float32(w[i])
	}
	check(t, quantized.SetParam("d1.weight", array(t, ctx, w, shape...)))
	if got := values[float32](t, must(quantized.Param("d1.weight")).on(t)); !equal(got, floats) {
		t.Error("d1.weight does not read back as set")
	}
	expectError(t, quantized.SetParam("d1.weight", array(t, ctx, floats, shape...)), nnrt.ErrDType, "i8")
	w[0] = 64
	expectError(t, quantized.SetParam("d1.weight", array(t, ctx, w, shape...)), nnrt.ErrInvalidArgument, "63")

	want := values[float32](t, must(quantized.Predict(x)).on(t))
	path := filepath.Join(t.TempDir(), "quantized.safetensors")
	check(t, quantized.Save(path))
	loaded := must(ctx.LoadModel(path)).on(t)
	defer loaded.Close()
	if got := values[float32](t, must(loaded.Predict(x)).on(t)); !equal(got, want) {
		t.Error("the loaded quantized model predicts differently")
	}
	shared := must(quantized.Share()).on(t)
	defer shared.Close()
	if got := values[float32](t, must(shared.Predict(x)).on(t)); !equal(got, want) {
		t.Error("a shared quantized model predicts differently")
	}
}

// int8 slices go to nnrt as I8 arrays and back unchanged.
func TestInt8Arrays(t *testing.T) {
	ctx := newContext(t)
	roundTrip(t, ctx, []int8{math.MinInt8, -63, -1, 0, 63, math.MaxInt8}, 2, 3)
	if nnrt.DTypeOf[int8]() != nnrt.I8 || nnrt.I8.Size() != 1 || nnrt.I8.String() != "i8" {
		t.Errorf("I8: DTypeOf %v, Size %d, String %q", nnrt.DTypeOf[int8](), nnrt.I8.Size(), nnrt.I8.String())
	}
	a := array(t, ctx, []int8{-5, 5}, 2)
	_, err := nnrt.ToSlice[uint8](a) // the same size, another dtype
	expectError(t, err, nnrt.ErrDType, "")
	zeros := must(ctx.NewArray(nnrt.I8, 2, 2)).on(t)
	if got := values[int8](t, zeros); !equal(got, make([]int8, 4)) {
		t.Errorf("NewArray(I8) = %v", got)
	}
}
