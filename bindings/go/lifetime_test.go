package nnrt_test

import (
	"encoding/json"
	"errors"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	"nnrt.dev/nnrt"
)

// Every object set closed in many orders, the context first or the model before its trainer:
// each object keeps alive what it depends on, so what is still open keeps working.
func TestCloseInAnyOrder(t *testing.T) {
	orders := rand.New(rand.NewSource(1))
	for round := 0; round < 24; round++ {
		ctx := must(nnrt.NewContext(`{"threads": 1}`)).on(t)
		x, y := blobs(t, ctx, 64, 1)
		data := must(ctx.NewDataset(x, y)).on(t)
		model := must(ctx.NewModel(mlpConfig)).on(t)
		trainer := must(model.NewTrainer(nil)).on(t)
		eval := must(model.Evaluate(data)).on(t)
		param := must(model.Param("out.bias")).on(t)
		type closer struct {
			name  string
			close func()
		}
		objects := []closer{
			{"context", ctx.Close}, {"features", x.Close}, {"labels", y.Close}, {"dataset", data.Close},
			{"model", model.Close}, {"trainer", trainer.Close}, {"evaluation", eval.Close}, {"param", param.Close},
		}
		closed := map[string]bool{}
		for _, i := range orders.Perm(len(objects)) {
			objects[i].close()
			closed[objects[i].name] = true
			// What is still open works, whatever it depends on.
			if !closed["trainer"] && !closed["dataset"] {
				check(t, trainer.Fit(data, nil, 1))
			}
			if !closed["model"] && !closed["features"] {
				must(model.Predict(x)).on(t).Close()
			}
			if !closed["evaluation"] {
				must(eval.Accuracy()).on(t)
			}
			if !closed["param"] {
				must(nnrt.ToSlice[float32](param)).on(t)
				if !closed["context"] {
					must(ctx.Op("neg", nil, param)).on(t).Close()
				}
			}
		}
		for _, o := range objects {
			o.close() // a second Close does nothing
		}
	}
}

// Close while other goroutines are inside calls on the same model: each call either finishes or
// reports the model closed; the C object goes when the last call returns.
func TestCloseWhileInUse(t *testing.T) {
	ctx := newContext(t)
	x, _ := blobs(t, ctx, 32, 1)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16*50)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				out, err := model.Predict(x)
				if err != nil {
					errs <- err
					return
				}
				out.Close()
			}
		}()
	}
	time.Sleep(2 * time.Millisecond)
	model.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		expectError(t, err, nnrt.ErrInvalidArgument, "model is closed")
	}
	_, err := model.Predict(x)
	expectError(t, err, nnrt.ErrInvalidArgument, "model is closed")
}

// Closing a trainer while Fit runs cancels the fit; the model trained so far stays usable.
func TestCloseTrainerDuringFit(t *testing.T) {
	ctx := newContext(t)
	train := blobDataset(t, ctx, 512, 1)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(`{"batch_size": 4}`)).on(t)
	started := make(chan struct{})
	var once sync.Once
	check(t, trainer.SetProgress(func(nnrt.Progress) bool {
		once.Do(func() { close(started) })
		return false
	}))
	done := make(chan error, 1)
	go func() { done <- trainer.Fit(train, nil, 1000) }()
	<-started
	trainer.Close()
	select {
	case err := <-done:
		if !errors.Is(err, nnrt.ErrCancelled) {
			t.Fatalf("Fit returned %v after Close", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Fit kept running after Close")
	}
	_, err := trainer.Result()
	expectError(t, err, nnrt.ErrInvalidArgument, "trainer is closed")
	must(model.Predict(must(train.Features(ctx, 0, 4)).on(t))).on(t).Close()
}

// Objects nobody closed are released by their finalizers: their memory returns to the cache.
func TestFinalizersRelease(t *testing.T) {
	ctx := newContext(t)
	inUse := func() float64 {
		var d struct {
			Cache struct {
				Allocated float64 `json:"allocated_bytes"`
				Cached    float64 `json:"cached_bytes"`
			} `json:"cache"`
		}
		check(t, json.Unmarshal([]byte(must(ctx.Describe()).on(t)), &d))
		return d.Cache.Allocated - d.Cache.Cached
	}
	before := inUse()
	for i := 0; i < 32; i++ {
		if _, err := ctx.NewArray(nnrt.F32, 256, 1024); err != nil { // 1 MiB each, never closed
			t.Fatal(err)
		}
	}
	grown := inUse()
	for i := 0; i < 20 && inUse() > before+(grown-before)/2; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if after := inUse(); !(grown >= before+32<<20) || after > before+(grown-before)/2 {
		t.Fatalf("bytes in use: %.0f before, %.0f with the arrays, %.0f after GC", before, grown, after)
	}
}
