package nnrt_test

import (
	"errors"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"nnrt.dev/nnrt"
)

// features returns n examples of mlpConfig's 8 features as a Go slice.
func features(n int, seed int64) []float32 {
	r := rand.New(rand.NewSource(seed))
	x := make([]float32, n*8)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// predictCopying predicts from a copy of input, through an nnrt array, as Predict does.
func predictCopying(t *testing.T, ctx *nnrt.Context, m *nnrt.Model, input []float32, shape ...int64) []float32 {
	t.Helper()
	return values[float32](t, must(m.Predict(array(t, ctx, input, shape...))).on(t))
}

func TestOutputShape(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	if got := must(model.OutputShape(5)).on(t); !equal(got, []int64{5, 4}) {
		t.Errorf("OutputShape(5) = %v", got)
	}
	_, err := model.OutputShape(-1)
	expectError(t, err, nnrt.ErrInvalidArgument, "")
}

// PredictInto writes what Predict returns, reading the input slice where it lies on every call.
func TestPredictIntoGoMemory(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	input := features(16, 1)
	output := make([]float32, 16*4)
	check(t, model.PredictInto(input, []int64{16, 8}, output))
	first := append([]float32(nil), output...)
	if want := predictCopying(t, ctx, model, input, 16, 8); !equal(output, want) {
		t.Fatalf("PredictInto %v, Predict %v", output, want)
	}

	// Change the same slice in place and predict into the same output again.
	for i := range input {
		input[i] = -input[i] + 0.5
	}
	check(t, model.PredictInto(input, []int64{16, 8}, output))
	if equal(output, first) {
		t.Fatal("the second prediction did not see the changed input")
	}
	if want := predictCopying(t, ctx, model, input, 16, 8); !equal(output, want) {
		t.Fatalf("after the change: PredictInto %v, Predict %v", output, want)
	}
	// Many rounds on one pair of slices: the memory is given back after every call.
	for round := 0; round < 50; round++ {
		input[round%len(input)] += 0.01
		check(t, model.PredictInto(input, []int64{16, 8}, output))
	}
	if want := predictCopying(t, ctx, model, input, 16, 8); !equal(output, want) {
		t.Fatal("PredictInto and Predict differ after many rounds")
	}
}

func TestPredictIntoChecksTheSlices(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	input := features(4, 2)
	output := make([]float32, 4*4)
	expectError(t, model.PredictInto(input, []int64{4, 8}, output[:15]), nnrt.ErrShape, "output holds 15")
	expectError(t, model.PredictInto(input, []int64{4, 8}, make([]float32, 17)), nnrt.ErrShape, "")
	expectError(t, model.PredictInto(input[:31], []int64{4, 8}, output), nnrt.ErrInvalidArgument, "input holds 31")
	expectError(t, model.PredictInto(input, []int64{4, -8}, output), nnrt.ErrInvalidArgument, "negative")
	expectError(t, model.PredictInto(nil, nil, nil), nnrt.ErrShape, "")
	// A shape the model does not take: nnrt's own message.
	expectError(t, model.PredictInto(input, []int64{8, 4}, make([]float32, 8*4)), nnrt.ErrShape, "")
	// An empty batch is fine.
	check(t, model.PredictInto(nil, []int64{0, 8}, nil))
	check(t, model.PredictInto(input, []int64{4, 8}, output))
	if want := predictCopying(t, ctx, model, input, 4, 8); !equal(output, want) {
		t.Fatal("PredictInto after refusals differs from Predict")
	}
	// A closed model, a closed context.
	closed := must(ctx.NewModel(mlpConfig)).on(t)
	closed.Close()
	expectError(t, closed.PredictInto(input, []int64{4, 8}, output), nnrt.ErrInvalidArgument, "closed")
}

// A model keeps its context: PredictInto works after the Context is closed, and from many
// goroutines at once.
func TestPredictIntoAfterContextCloseAndConcurrently(t *testing.T) {
	ctx, err := nnrt.NewContext(nnrt.ContextOptions{Threads: 2, Seed: 1})
	check(t, err)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	ref := newContext(t)
	ctx.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			input := features(4, int64(g))
			output := make([]float32, 16)
			for i := 0; i < 20; i++ {
				if err := model.PredictInto(input, []int64{4, 8}, output); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	input := features(4, 3)
	output := make([]float32, 16)
	check(t, model.PredictInto(input, []int64{4, 8}, output))
	if want := predictCopying(t, ref, model, input, 4, 8); !equal(output, want) {
		t.Fatal("PredictInto after Context.Close differs from Predict")
	}
}

// Cancelled options stop every kind of call until Reset; the model is usable at once.
func TestRunOptionsCancelAndReset(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	input := features(4, 4)
	x := array(t, ctx, input, 4, 8)
	data := blobDataset(t, ctx, 64, 1)
	saved := filepath.Join(t.TempDir(), "mlp.safetensors")
	check(t, model.Save(saved))
	onnx := filepath.Join(t.TempDir(), "mlp.onnx")
	check(t, model.ExportONNX(onnx))
	output := make([]float32, 16)

	opts := must(nnrt.NewRunOptions()).on(t)
	defer opts.Close()
	check(t, opts.Cancel())
	_, err := model.PredictWith(x, opts)
	expectError(t, err, nnrt.ErrCancelled, "")
	if !errors.Is(err, nnrt.ErrCancelled) {
		t.Fatal("errors.Is(err, ErrCancelled) is false")
	}
	expectError(t, model.PredictIntoWith(input, []int64{4, 8}, output, opts), nnrt.ErrCancelled, "")
	_, err = model.EvaluateWith(data, opts)
	expectError(t, err, nnrt.ErrCancelled, "")
	_, err = ctx.LoadModelWith(saved, opts)
	expectError(t, err, nnrt.ErrCancelled, "")
	_, err = ctx.ImportONNXWith(onnx, nil, opts)
	expectError(t, err, nnrt.ErrCancelled, "")

	want := values[float32](t, must(model.Predict(x)).on(t))
	if got := values[float32](t, must(model.PredictWith(x, nil)).on(t)); !equal(got, want) {
		t.Fatal("PredictWith(nil options) differs from Predict")
	}
	check(t, opts.Reset())
	if got := values[float32](t, must(model.PredictWith(x, opts)).on(t)); !equal(got, want) {
		t.Fatal("PredictWith after Reset differs from Predict")
	}
	check(t, model.PredictIntoWith(input, []int64{4, 8}, output, opts))
	if !equal(output, want) {
		t.Fatal("PredictIntoWith after Reset differs from Predict")
	}
	e := must(model.EvaluateWith(data, opts)).on(t)
	e.Close()
	loaded := must(ctx.LoadModelWith(saved, opts)).on(t)
	defer loaded.Close()
	if got := values[float32](t, must(loaded.Predict(x)).on(t)); !equal(got, want) {
		t.Fatal("the model loaded with options predicts otherwise")
	}
	imported := must(ctx.ImportONNXWith(onnx, nil, opts)).on(t)
	defer imported.Close()
	got := values[float32](t, must(imported.Predict(x)).on(t))
	for i := range want {
		if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("prediction %d: imported %g, original %g", i, got[i], want[i])
		}
	}

	// Closed options are refused, not used.
	opts.Close()
	_, err = model.PredictWith(x, opts)
	expectError(t, err, nnrt.ErrInvalidArgument, "closed")
	expectError(t, opts.Cancel(), nnrt.ErrInvalidArgument, "closed")
}

func TestRunOptionsTimeout(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	input := features(4, 5)
	x := array(t, ctx, input, 4, 8)
	output := make([]float32, 16)
	opts := must(nnrt.NewRunOptions()).on(t)
	defer opts.Close()
	check(t, opts.SetTimeout(time.Nanosecond))
	_, err := model.PredictWith(x, opts)
	expectError(t, err, nnrt.ErrDeadlineExceeded, "")
	if !errors.Is(err, nnrt.ErrDeadlineExceeded) {
		t.Fatal("errors.Is(err, ErrDeadlineExceeded) is false")
	}
	expectError(t, model.PredictIntoWith(input, []int64{4, 8}, output, opts), nnrt.ErrDeadlineExceeded, "")
	_, err = model.EvaluateWith(blobDataset(t, ctx, 32, 2), opts)
	expectError(t, err, nnrt.ErrDeadlineExceeded, "")
	expectError(t, opts.SetTimeout(-time.Second), nnrt.ErrInvalidArgument, "negative")

	check(t, opts.SetTimeout(10*time.Minute))
	values[float32](t, must(model.PredictWith(x, opts)).on(t))
	check(t, opts.SetTimeout(0)) // no limit
	check(t, model.PredictIntoWith(input, []int64{4, 8}, output, opts))
}

// Cancel from another goroutine stops a loop of predictions running with the options.
func TestRunOptionsCancelFromAnotherGoroutine(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	opts := must(nnrt.NewRunOptions()).on(t)
	defer opts.Close()

	type result struct {
		done int
		err  error
	}
	loops := 4
	results := make(chan result, loops)
	for g := 0; g < loops; g++ {
		go func(g int) {
			input := features(32, int64(g))
			output := make([]float32, 32*4)
			x, err := nnrt.NewArrayFrom(ctx, input, 32, 8)
			if err != nil {
				results <- result{0, err}
				return
			}
			defer x.Close()
			deadline := time.Now().Add(30 * time.Second)
			for done := 0; ; done++ {
				input[done%len(input)] += 0.001
				if g%2 == 0 {
					err = model.PredictIntoWith(input, []int64{32, 8}, output, opts)
				} else {
					var y *nnrt.Array
					if y, err = model.PredictWith(x, opts); err == nil {
						y.Close()
					}
				}
				if err != nil || time.Now().After(deadline) {
					results <- result{done, err}
					return
				}
			}
		}(g)
	}
	time.Sleep(100 * time.Millisecond)
	check(t, opts.Cancel())
	for g := 0; g < loops; g++ {
		r := <-results
		if r.err == nil {
			t.Fatal("a loop of predictions ran for 30 s without seeing the cancel")
		}
		expectError(t, r.err, nnrt.ErrCancelled, "")
	}

	// After Reset the options run calls again.
	check(t, opts.Reset())
	check(t, model.PredictIntoWith(features(2, 9), []int64{2, 8}, make([]float32, 8), opts))
}

// Shared models predict alike; setting a parameter of one copies its parameters first.
func TestShareCopiesParametersOnWrite(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	input := features(8, 5)
	before := predictCopying(t, ctx, model, input, 8, 8)
	shared := must(model.Share()).on(t)
	defer shared.Close()
	twice := must(shared.Share()).on(t)
	defer twice.Close()
	if got := predictCopying(t, ctx, twice, input, 8, 8); !equal(got, before) {
		t.Fatalf("a shared model predicts %v, the original %v", got, before)
	}
	check(t, shared.SetParam("out.bias", array(t, ctx, []float32{1, -2, 3, -4}, 4)))
	if equal(predictCopying(t, ctx, shared, input, 8, 8), before) {
		t.Fatal("setting out.bias changed nothing")
	}
	model.Close()
	if got := predictCopying(t, ctx, twice, input, 8, 8); !equal(got, before) {
		t.Fatalf("after the set and the original's Close, a sharer predicts %v, before %v", got, before)
	}
}
