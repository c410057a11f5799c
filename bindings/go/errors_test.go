package nnrt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"nnrt.dev/nnrt"
)

// Each kind of bad input gives its status and a message that says what was wrong.
func TestErrorPaths(t *testing.T) {
	ctx := newContext(t)
	a := array(t, ctx, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := array(t, ctx, []float32{1, 2, 3, 4}, 2, 2)

	_, err := nnrt.NewContext(`{"threads": 2, "no_such_option": 1}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "no_such_option")
	_, err = nnrt.NewContext(map[string]any{"backend": "no_such_backend"})
	expectError(t, err, nnrt.ErrInvalidArgument, "no_such_backend")
	_, err = nnrt.NewContext(map[string]any{"threads": func() {}})
	expectError(t, err, nnrt.ErrInvalidArgument, "JSON")

	_, err = ctx.Op("no_such_op", nil, a)
	expectError(t, err, nnrt.ErrUnsupported, "no_such_op")
	_, err = ctx.Op("add", nil, a, b)
	expectError(t, err, nnrt.ErrShape, "[2, 3]")
	expectError(t, err, nnrt.ErrShape, "[2, 2]")
	_, err = ctx.Op("matmul", map[string]any{"transpose_z": true}, b, b)
	expectError(t, err, nnrt.ErrInvalidArgument, "transpose_z")
	_, err = ctx.Op("add", nil, a, array(t, ctx, []int32{1, 2, 3}, 3))
	expectError(t, err, nnrt.ErrDType, "")
	_, err = ctx.Op("add", nil, a, nil)
	expectError(t, err, nnrt.ErrInvalidArgument, "input 1")

	_, err = nnrt.NewArrayFrom(ctx, []float32{1, 2, 3}, 2, 2)
	expectError(t, err, nnrt.ErrInvalidArgument, "12")
	_, err = ctx.NewArray(nnrt.F32, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	expectError(t, err, nnrt.ErrInvalidArgument, "")
	_, err = ctx.NewArray(nnrt.F32, -1)
	expectError(t, err, nnrt.ErrInvalidArgument, "")
	_, err = ctx.NewArray(nnrt.DType(99), 2)
	expectError(t, err, nnrt.ErrDType, "")
	_, err = nnrt.ToSlice[int32](a)
	expectError(t, err, nnrt.ErrDType, "f32")
	err = nnrt.CopyTo(a, make([]float32, 5))
	expectError(t, err, nnrt.ErrInvalidArgument, "24")

	_, err = ctx.NewModel(`{"input": [4], "layers": [{"type": "dense", "units": 3, "colour": "red"}]}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "colour")
	_, err = ctx.NewModel(`{"input": [4], "layers": [`)
	expectError(t, err, nnrt.ErrInvalidArgument, "")
	_, err = ctx.LoadModel("/nonexistent-nnrt-folder/m.safetensors")
	expectError(t, err, nnrt.ErrIO, "/nonexistent-nnrt-folder/m.safetensors")
	notAModel := filepath.Join(t.TempDir(), "not-a-model.safetensors")
	if err := os.WriteFile(notAModel, []byte(strings.Repeat("not a checkpoint ", 20)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ctx.LoadModel(notAModel)
	expectError(t, err, nnrt.ErrCorrupt, "")
	_, err = ctx.LoadDataset(nnrt.CSVSpec{Path: "/nonexistent-nnrt-folder/d.csv"})
	expectError(t, err, nnrt.ErrIO, "/nonexistent-nnrt-folder/d.csv")
	_, err = ctx.LoadDataset(`{"format": "parquet"}`)
	expectError(t, err, nnrt.ErrInvalidArgument, "parquet")

	// The message carries the status name, and errors.As reaches it through wrapping.
	wrapped := fmt.Errorf("loading: %w", err)
	var e *nnrt.Error
	if !errors.As(wrapped, &e) || !errors.Is(wrapped, nnrt.ErrInvalidArgument) || errors.Is(wrapped, nnrt.ErrIO) {
		t.Fatalf("errors.As/Is do not see through wrapping: %v", wrapped)
	}
	if !strings.HasPrefix(e.Error(), "NNRT_ERR_INVALID_ARGUMENT: ") {
		t.Fatalf("Error() = %q", e.Error())
	}
}

// Many goroutines fail at once, each with a message naming its own input. nnrt keeps the last
// error per OS thread and goroutines hop between threads, so a message read in a later cgo call
// could be another goroutine's; each must get exactly its own.
func TestErrorsFromManyGoroutines(t *testing.T) {
	ctx := newContext(t)
	x := array(t, ctx, []float32{1, 2, 3, 4}, 2, 2)
	const goroutines, rounds = 64, 20
	failures := make(chan string, goroutines*rounds)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				tag := fmt.Sprintf("g%dr%d", g, r)
				var err error
				var want nnrt.Status
				switch r % 3 {
				case 0:
					_, err = ctx.Op("no_such_op_"+tag, nil, x)
					want = nnrt.ErrUnsupported
				case 1:
					_, err = ctx.LoadModel("/nonexistent-nnrt-folder/" + tag + ".safetensors")
					want = nnrt.ErrIO
				case 2:
					_, err = ctx.Op("sum", map[string]any{"unknown_attr_" + tag: 1}, x)
					want = nnrt.ErrInvalidArgument
				}
				var e *nnrt.Error
				if !errors.As(err, &e) || e.Status != want || !strings.Contains(e.Message, tag) {
					failures <- fmt.Sprintf("%s: got %v, expected %v naming %s", tag, err, want, tag)
				}
				// Successful calls in between must not disturb the next failure's message.
				if out, err := ctx.Op("add", nil, x, x); err == nil {
					out.Close()
				} else {
					failures <- fmt.Sprintf("%s: add failed: %v", tag, err)
				}
				runtime.Gosched()
			}
		}(g)
	}
	wg.Wait()
	close(failures)
	n := 0
	for f := range failures {
		if n++; n <= 10 {
			t.Error(f)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d failing calls got a wrong status or message", n, goroutines*rounds)
	}
}

// A closed object, or a nil one, is a Go error, never a use of freed C memory.
func TestUseAfterClose(t *testing.T) {
	ctx := newContext(t)
	a := must(nnrt.NewArrayFrom(ctx, []float32{1, 2}, 2)).on(t)
	a.Close()
	_, err := a.Bytes()
	expectError(t, err, nnrt.ErrInvalidArgument, "array is closed")
	_, err = ctx.Op("neg", nil, a)
	expectError(t, err, nnrt.ErrInvalidArgument, "array is closed")
	var m *nnrt.Model
	_, err = m.ParamCount()
	expectError(t, err, nnrt.ErrInvalidArgument, "nil")
	m.Close() // nil Close is a no-op, like nnrt_X_release(NULL)
	other := must(nnrt.NewContext(nil)).on(t)
	other.Close()
	other.Close()
	_, err = other.NewArray(nnrt.F32, 1)
	expectError(t, err, nnrt.ErrInvalidArgument, "context is closed")
}
