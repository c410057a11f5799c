package nnrt_test

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"nnrt.dev/nnrt"
)

// A classifier small enough to train in well under a second.
const mlpConfig = `{"input": [8], "seed": 7, "layers": [
	{"type": "dense", "name": "hidden", "units": 16, "activation": "tanh"},
	{"type": "output", "name": "out", "units": 4, "activation": "softmax", "loss": "nll"}]}`

const adamOptions = `{"optimizer": {"type": "adam", "learning_rate": 0.01}, "batch_size": 32, "seed": 3}`

// blobs makes n examples of 4 classes in 8 dimensions: Gaussian noise around a fixed centre per
// class, so that a small model separates them well but not from the start.
func blobs(t *testing.T, ctx *nnrt.Context, n int, seed int64) (*nnrt.Array, *nnrt.Array) {
	t.Helper()
	centres := rand.New(rand.NewSource(99))
	var centre [4][8]float32
	for c := range centre {
		for j := range centre[c] {
			centre[c][j] = float32(centres.Intn(3) - 1)
		}
	}
	r := rand.New(rand.NewSource(seed))
	x := make([]float32, n*8)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		y[i] = int32(i % 4)
		for j := 0; j < 8; j++ {
			x[i*8+j] = centre[y[i]][j] + float32(r.NormFloat64()*0.6)
		}
	}
	return array(t, ctx, x, int64(n), 8), array(t, ctx, y, int64(n))
}

// blobDataset makes a dataset of blobs.
func blobDataset(t *testing.T, ctx *nnrt.Context, n int, seed int64) *nnrt.Dataset {
	t.Helper()
	x, y := blobs(t, ctx, n, seed)
	d := must(ctx.NewDataset(x, y)).on(t)
	t.Cleanup(d.Close)
	return d
}

func accuracy(t *testing.T, m *nnrt.Model, d *nnrt.Dataset) float64 {
	t.Helper()
	e := must(m.Evaluate(d)).on(t)
	defer e.Close()
	return must(e.Accuracy()).on(t)
}

// Fit lowers the loss and raises the accuracy, reporting progress along the way.
func TestTrainingLearns(t *testing.T) {
	ctx := newContext(t)
	train := blobDataset(t, ctx, 1024, 1)
	test := blobDataset(t, ctx, 256, 2)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(adamOptions)).on(t)
	defer trainer.Close()

	before := accuracy(t, model, test)
	var calls, epochEnds int
	var firstLoss, lastLoss float64
	var lastScore float64
	err := trainer.SetProgress(func(p nnrt.Progress) bool {
		if calls == 0 {
			firstLoss = p.Loss
		}
		calls++
		lastLoss = p.Loss
		if p.EpochEnd {
			epochEnds++
			lastScore = p.ValidationScore
		} else if p.BatchesPerEpoch != 32 || p.Batch < 0 || p.Batch >= 32 {
			t.Errorf("progress batch %d of %d, expected 32 minibatches", p.Batch, p.BatchesPerEpoch)
		}
		if p.DeviceUtilizationPercent != -1 || p.DeviceTemperatureCelsius != -1 ||
			p.DeviceMemoryUsedBytes != -1 || p.DeviceMemoryTotalBytes != -1 {
			t.Errorf("a CPU backend reported a device load: %+v", p)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := trainer.Fit(train, test, 3); err != nil {
		t.Fatal(err)
	}
	after := accuracy(t, model, test)
	t.Logf("accuracy %.3f -> %.3f, minibatch loss %.3f -> %.3f", before, after, firstLoss, lastLoss)
	if calls != 3*32+3 || epochEnds != 3 {
		t.Errorf("%d progress calls with %d epoch ends, expected 99 and 3", calls, epochEnds)
	}
	if !(after >= 0.85 && after > before+0.3) {
		t.Errorf("accuracy went from %.3f to %.3f", before, after)
	}
	if math.Abs(lastScore-after) > 1e-9 {
		t.Errorf("last validation score %.4f differs from the evaluation's %.4f", lastScore, after)
	}
	r := must(trainer.Result()).on(t)
	if r.Epochs != 3 || r.Iterations != 96 || r.StopReason != "completed" || len(r.History) != 3 {
		t.Fatalf("result %+v", r)
	}
	if !(r.History[2].Loss < r.History[0].Loss/2) || !(lastLoss < firstLoss) {
		t.Errorf("loss did not fall: epochs %.4f -> %.4f", r.History[0].Loss, r.History[2].Loss)
	}
	if r.BestEpoch < 0 || r.History[0].ValidationScore == nil {
		t.Errorf("validation is missing from the result: %+v", r)
	}

	report := must(must(model.Evaluate(test)).on(t).Report()).on(t)
	if report.Examples != 256 || report.Classes != 4 || len(report.PerClass) != 4 || len(report.ConfusionMatrix) != 4 {
		t.Errorf("report %+v", report)
	}
	if math.Abs(report.Accuracy-after) > 1e-12 {
		t.Errorf("report accuracy %.4f, Accuracy() %.4f", report.Accuracy, after)
	}
}

// Step trains on one minibatch; Predict returns probabilities.
func TestStepAndPredict(t *testing.T) {
	ctx := newContext(t)
	x, y := blobs(t, ctx, 64, 5)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(`{"optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.9}}`)).on(t)
	defer trainer.Close()
	first := must(trainer.Step(x, y)).on(t)
	var last float64
	for i := 0; i < 30; i++ {
		last = must(trainer.Step(x, y)).on(t)
	}
	if !(last < first/2) {
		t.Errorf("30 steps on one batch took the loss from %.4f to %.4f only", first, last)
	}
	probs := values[float32](t, must(model.Predict(x)).on(t))
	if len(probs) != 64*4 {
		t.Fatalf("Predict gave %d values", len(probs))
	}
	for i := 0; i < 64; i++ {
		sum := float32(0)
		for _, p := range probs[i*4 : i*4+4] {
			sum += p
		}
		if math.Abs(float64(sum-1)) > 1e-5 {
			t.Fatalf("probabilities of example %d sum to %g", i, sum)
		}
	}
	_, err := trainer.Step(x, array(t, ctx, []int32{9}, 1))
	expectError(t, err, nnrt.ErrShape, "")
	bad := array(t, ctx, []int32{0, 1, 2, 9}, 4)
	_, err = trainer.Step(array(t, ctx, make([]float32, 32), 4, 8), bad)
	expectError(t, err, nnrt.ErrInvalidArgument, "9")
}

// Cancel from another goroutine stops a running Fit with ErrCancelled; returning true from the
// progress function stops it by plan.
func TestCancelAndCallbackStop(t *testing.T) {
	ctx := newContext(t)
	train := blobDataset(t, ctx, 512, 1)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(`{"batch_size": 8}`)).on(t)
	defer trainer.Close()

	started := make(chan struct{})
	var calls atomic.Int64
	if err := trainer.SetProgress(func(p nnrt.Progress) bool {
		if calls.Add(1) == 1 {
			close(started)
		}
		time.Sleep(time.Millisecond) // keep the fit running long enough to be cancelled
		return false
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- trainer.Fit(train, nil, 1000) }()
	<-started
	if err := trainer.Cancel(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		expectError(t, err, nnrt.ErrCancelled, "")
	case <-time.After(30 * time.Second):
		t.Fatal("Fit did not stop after Cancel")
	}
	if r := must(trainer.Result()).on(t); r.StopReason != "cancelled" || r.Epochs >= 1000 {
		t.Errorf("after Cancel: %+v", r)
	}

	var seen int
	check(t, trainer.SetProgress(func(p nnrt.Progress) bool { seen++; return seen == 5 }))
	if err := trainer.Fit(train, nil, 2); err != nil {
		t.Fatalf("a stop by the callback is not an error: %v", err)
	}
	if r := must(trainer.Result()).on(t); r.StopReason != "callback" || seen != 5 {
		t.Errorf("after the callback stopped it (%d calls): %+v", seen, r)
	}

	// A Cancel before Fit makes the next Fit stop at once.
	check(t, trainer.SetProgress(nil))
	check(t, trainer.Cancel())
	expectError(t, trainer.Fit(train, nil, 1), nnrt.ErrCancelled, "")
}

// A panic in the progress function stops training and comes out of Fit, not through C frames.
func TestProgressPanicReachesFit(t *testing.T) {
	ctx := newContext(t)
	train := blobDataset(t, ctx, 128, 1)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(nil)).on(t)
	defer trainer.Close()
	check(t, trainer.SetProgress(func(p nnrt.Progress) bool { panic("boom in progress") }))
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "boom") {
			t.Fatalf("recovered %v", r)
		}
		if r := must(trainer.Result()).on(t); r.StopReason != "callback" {
			t.Errorf("stop reason %q", r.StopReason)
		}
	}()
	_ = trainer.Fit(train, nil, 1)
	t.Fatal("Fit returned without the panic")
}

// Bad training input: empty data, wrong shapes, negative epochs.
func TestFitErrors(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(nil)).on(t)
	defer trainer.Close()
	train := blobDataset(t, ctx, 64, 1)
	expectError(t, trainer.Fit(train, nil, -1), nnrt.ErrInvalidArgument, "")
	wide := must(ctx.NewDataset(array(t, ctx, make([]float32, 4*3), 4, 3), array(t, ctx, []int32{0, 1, 2, 3}, 4))).on(t)
	defer wide.Close()
	if err := trainer.Fit(wide, nil, 1); !errors.Is(err, nnrt.ErrShape) {
		t.Errorf("fitting [4, 3] examples on an [8] input: %v", err)
	}
	_, err := model.NewTrainer(`{"optimizer": {"type": "sgd", "learning_rate": -1}}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "")
	_, err = model.NewTrainer(`{"workers": 0}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "workers")
	_, err = model.NewTrainer(`{"mode": "averag"}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "averag")
	parallel := must(model.NewTrainer(`{"workers": 2, "mode": "average", "averaging_frequency": 2}`)).on(t)
	defer parallel.Close()
	if rank, world, err := parallel.Rank(); err != nil || rank != 0 || world != 1 {
		t.Errorf("Rank() without distributed training: %d, %d, %v", rank, world, err)
	}
	if err := parallel.Fit(train, nil, 1); err != nil {
		t.Errorf("fitting with 2 workers: %v", err)
	}
}
