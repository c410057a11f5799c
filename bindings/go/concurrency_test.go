package nnrt_test

import (
	"strings"
	"sync"
	"testing"

	"nnrt.dev/nnrt"
)

// One context and one model shared by many goroutines give every goroutine the same answers as
// a single one gets, also while a trainer trains another model on the same context.
func TestSharedContextAndModel(t *testing.T) {
	ctx := newContext(t)
	x, _ := blobs(t, ctx, 32, 3)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	want := values[float32](t, must(model.Predict(x)).on(t))
	wantSum := values[float32](t, must(ctx.Op("sum", nil, x)).on(t))

	other := must(ctx.NewModel(mlpConfig)).on(t)
	defer other.Close()
	trainer := must(other.NewTrainer(nil)).on(t)
	defer trainer.Close()
	train := blobDataset(t, ctx, 256, 1)

	var wg sync.WaitGroup
	failures := make(chan string, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				p, err := model.Predict(x)
				if err != nil {
					failures <- err.Error()
					return
				}
				got, err := nnrt.ToSlice[float32](p)
				p.Close()
				if err != nil || !equal(got, want) {
					failures <- "a concurrent prediction differs"
					return
				}
				s, err := ctx.Op("sum", nil, x) // x is read by every goroutine at once
				if err != nil {
					failures <- err.Error()
					return
				}
				sum, _ := nnrt.ToSlice[float32](s)
				s.Close()
				if !equal(sum, wantSum) {
					failures <- "a concurrent sum differs"
					return
				}
			}
		}()
	}
	check(t, trainer.Fit(train, nil, 2))
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
}

// The log callback receives nnrt's messages at the chosen level; nil restores the default.
func TestLogCallback(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	nnrt.SetLogCallback(func(level nnrt.LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, level.String()+": "+message)
	}, nnrt.LogDebug)
	ctx := must(nnrt.NewContext(`{"threads": 1}`)).on(t)
	ctx.Close()
	nnrt.SetLogCallback(nil, nnrt.LogWarn)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) == 0 {
		t.Fatal("no log message while creating a context at debug level")
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "debug: ") && !strings.HasPrefix(l, "info: ") &&
			!strings.HasPrefix(l, "warn: ") && !strings.HasPrefix(l, "error: ") {
			t.Errorf("log line with an unknown level: %q", l)
		}
	}
	t.Logf("%d log lines, the first: %s", len(lines), lines[0])
}
