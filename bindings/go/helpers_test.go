package nnrt_test

import (
	"errors"
	"strings"
	"testing"

	"nnrt.dev/nnrt"
)

// newContext makes a small deterministic context that the test closes at its end.
func newContext(t *testing.T) *nnrt.Context {
	t.Helper()
	ctx, err := nnrt.NewContext(nnrt.ContextOptions{Threads: 2, Deterministic: true, Seed: 1})
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

// outcome holds a call's value and error until the test says what to do with them.
type outcome[T any] struct {
	v   T
	err error
}

// must wraps a (value, error) call so that must(f()).on(t) stops the test on an error.
func must[T any](v T, err error) outcome[T] { return outcome[T]{v, err} }

// on returns the value, failing the test if the call failed.
func (o outcome[T]) on(t *testing.T) T {
	t.Helper()
	if o.err != nil {
		t.Fatalf("unexpected error: %v", o.err)
	}
	return o.v
}

// check stops the test on an error.
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// array makes an array from a Go slice and closes it at the test's end.
func array[T nnrt.Element](t *testing.T, ctx *nnrt.Context, data []T, shape ...int64) *nnrt.Array {
	t.Helper()
	a := must(nnrt.NewArrayFrom(ctx, data, shape...)).on(t)
	t.Cleanup(a.Close)
	return a
}

// values reads an array's elements and closes it.
func values[T nnrt.Element](t *testing.T, a *nnrt.Array) []T {
	t.Helper()
	defer a.Close()
	return must(nnrt.ToSlice[T](a)).on(t)
}

// expectError checks that err is an *nnrt.Error with the given status whose message holds text.
func expectError(t *testing.T, err error, status nnrt.Status, text string) {
	t.Helper()
	var e *nnrt.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), expected an *nnrt.Error with %v", err, err, status)
	}
	if e.Status != status || !errors.Is(err, status) {
		t.Fatalf("got status %v (%q), expected %v", e.Status, e.Message, status)
	}
	if !strings.Contains(e.Message, text) {
		t.Fatalf("message %q does not contain %q", e.Message, text)
	}
}

// equal compares two slices element by element.
func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
