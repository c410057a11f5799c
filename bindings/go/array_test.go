package nnrt_test

import (
	"math"
	"testing"

	"nnrt.dev/nnrt"
)

// roundTrip sends a slice to nnrt and reads it back, checking dtype, shape and every element.
func roundTrip[T nnrt.Element](t *testing.T, ctx *nnrt.Context, data []T, shape ...int64) {
	t.Helper()
	a := array(t, ctx, data, shape...)
	if a.DType() != nnrt.DTypeOf[T]() {
		t.Fatalf("dtype %v, want %v", a.DType(), nnrt.DTypeOf[T]())
	}
	dtype, gotShape, err := a.Info()
	if err != nil || dtype != a.DType() || !equal(gotShape, shape) || !equal(a.Shape(), shape) {
		t.Fatalf("Info() = %v %v, want %v %v", dtype, gotShape, a.DType(), shape)
	}
	if n := must(a.NBytes()).on(t); n != len(data)*a.DType().Size() {
		t.Fatalf("NBytes() = %d, want %d", n, len(data)*a.DType().Size())
	}
	if got := must(nnrt.ToSlice[T](a)).on(t); !equal(got, data) {
		t.Fatalf("%v round trip gave %v, want %v", a.DType(), got, data)
	}
}

// Every dtype goes to nnrt and back bit for bit.
func TestArrayEveryDType(t *testing.T) {
	ctx := newContext(t)
	roundTrip(t, ctx, []float32{1.5, -2, 3.25, float32(math.Inf(1)), 0, 7}, 2, 3)
	roundTrip(t, ctx, []float64{1e300, -2.5, math.SmallestNonzeroFloat64}, 3)
	roundTrip(t, ctx, []nnrt.Float16{0x3c00, 0xc000, 0x7bff, 0x0001}, 2, 2) // 1, -2, max, min subnormal
	roundTrip(t, ctx, []nnrt.BFloat16{0x3f80, 0xc040, 0x7f7f}, 3, 1, 1)     // 1, -3, max
	roundTrip(t, ctx, []int32{math.MinInt32, -1, 0, math.MaxInt32}, 4)
	roundTrip(t, ctx, []int64{math.MinInt64, 42, math.MaxInt64}, 1, 3)
	roundTrip(t, ctx, []uint8{0, 1, 128, 255}, 2, 2)
	roundTrip(t, ctx, []int8{math.MinInt8, -1, 0, math.MaxInt8}, 4)
	roundTrip(t, ctx, []bool{true, false, false, true, true, false}, 3, 2)
	roundTrip(t, ctx, []float32{2.5})    // a scalar
	roundTrip(t, ctx, []float32{}, 0, 4) // an empty array
}

func TestArrayZeroFilledAndBytes(t *testing.T) {
	ctx := newContext(t)
	a := must(ctx.NewArray(nnrt.I64, 2, 3)).on(t)
	defer a.Close()
	if got := must(nnrt.ToSlice[int64](a)).on(t); !equal(got, make([]int64, 6)) {
		t.Fatalf("NewArray is not zero-filled: %v", got)
	}
	raw := []byte{1, 2, 3, 4, 5, 6}
	b := must(ctx.NewArrayFromBytes(nnrt.U8, []int64{3, 2}, raw)).on(t)
	defer b.Close()
	if got := must(b.Bytes()).on(t); !equal(got, raw) {
		t.Fatalf("Bytes() = %v, want %v", got, raw)
	}
	dst := make([]uint8, 6)
	if err := nnrt.CopyTo(b, dst); err != nil || !equal(dst, raw) {
		t.Fatalf("CopyTo gave %v (%v)", dst, err)
	}
}

// f16 and bf16 conversions in Go round exactly as nnrt's cast does, ties to even included. The
// reference backend is the definition (the oneDNN one flushes f32 subnormals to zero on the way
// to bf16).
func TestHalfPrecisionMatchesCast(t *testing.T) {
	ctx := must(nnrt.NewContext(nnrt.ContextOptions{Backend: "reference", Strict: true})).on(t)
	defer ctx.Close()
	xs := []float32{0, -0.0, 1, -1, 0.1, 1.0 / 3, 65504, 65520, 1e6, 6e-8, 3e-8, 2.98e-8, 1.00048828125,
		1.00146484375, 5.960464477539063e-08, -6.1035156e-05, 3.3895314e38, float32(math.Inf(-1)), 1e-40}
	x := array(t, ctx, xs, int64(len(xs)))
	f16 := values[nnrt.Float16](t, must(ctx.Op("cast", map[string]any{"dtype": "f16"}, x)).on(t))
	bf16 := values[nnrt.BFloat16](t, must(ctx.Op("cast", `{"dtype": "bf16"}`, x)).on(t))
	for i, v := range xs {
		if got := nnrt.Float16FromFloat32(v); got != f16[i] {
			t.Errorf("Float16FromFloat32(%g) = %#04x, nnrt gives %#04x", v, got, f16[i])
		}
		if got := nnrt.BFloat16FromFloat32(v); got != bf16[i] {
			t.Errorf("BFloat16FromFloat32(%g) = %#04x, nnrt gives %#04x", v, got, bf16[i])
		}
	}
	// Widening is exact both in Go and in nnrt.
	h := array(t, ctx, f16, int64(len(f16)))
	back := values[float32](t, must(ctx.Op("cast", map[string]any{"dtype": "f32"}, h)).on(t))
	for i, v := range f16 {
		if v.Float32() != back[i] && !(math.IsNaN(float64(back[i])) && math.IsNaN(float64(v.Float32()))) {
			t.Errorf("Float16(%#04x).Float32() = %g, nnrt gives %g", uint16(v), v.Float32(), back[i])
		}
	}
	if nnrt.BFloat16(0x3fc0).Float32() != 1.5 || !math.IsNaN(float64(nnrt.Float16FromFloat32(float32(math.NaN())).Float32())) {
		t.Error("bf16 1.5 or f16 NaN converts wrongly")
	}
}

// Array math by name, with results that are exact in binary floating point.
func TestOpsExact(t *testing.T) {
	ctx := newContext(t)
	a := array(t, ctx, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := array(t, ctx, []float32{10, 20, 30}, 3)
	cases := []struct {
		name  string
		attrs any
		in    []*nnrt.Array
		shape []int64
		want  []float32
	}{
		{"add", nil, []*nnrt.Array{a, b}, []int64{2, 3}, []float32{11, 22, 33, 14, 25, 36}},
		{"sub", nil, []*nnrt.Array{a, b}, []int64{2, 3}, []float32{-9, -18, -27, -6, -15, -24}},
		{"mul", nil, []*nnrt.Array{a, a}, []int64{2, 3}, []float32{1, 4, 9, 16, 25, 36}},
		{"div", nil, []*nnrt.Array{b, b}, []int64{3}, []float32{1, 1, 1}},
		{"neg", nil, []*nnrt.Array{b}, []int64{3}, []float32{-10, -20, -30}},
		{"relu", nil, []*nnrt.Array{array(t, ctx, []float32{-1, 0, 2}, 3)}, []int64{3}, []float32{0, 0, 2}},
		{"matmul", map[string]any{"transpose_b": true}, []*nnrt.Array{a, a}, []int64{2, 2}, []float32{14, 32, 32, 77}},
		{"sum", map[string]any{"axes": []int{1}}, []*nnrt.Array{a}, []int64{2}, []float32{6, 15}},
		{"mean", map[string]any{"axes": []int{0}, "keepdims": true}, []*nnrt.Array{a}, []int64{1, 3}, []float32{2.5, 3.5, 4.5}},
		{"max", nil, []*nnrt.Array{a}, []int64{}, []float32{6}},
		{"transpose", nil, []*nnrt.Array{a}, []int64{3, 2}, []float32{1, 4, 2, 5, 3, 6}},
		{"reshape", map[string]any{"shape": []int{3, -1}}, []*nnrt.Array{a}, []int64{3, 2}, []float32{1, 2, 3, 4, 5, 6}},
		{"fill", map[string]any{"shape": []int{2}, "value": 7}, nil, []int64{2}, []float32{7, 7}},
		{"sqrt", nil, []*nnrt.Array{array(t, ctx, []float32{4, 9, 0.25}, 3)}, []int64{3}, []float32{2, 3, 0.5}},
	}
	for _, c := range cases {
		out := must(ctx.Op(c.name, c.attrs, c.in...)).on(t)
		if !equal(out.Shape(), c.shape) {
			t.Errorf("%s: shape %v, want %v", c.name, out.Shape(), c.shape)
		}
		if got := values[float32](t, out); !equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// argmax gives I64; integer arithmetic truncates toward zero.
	if got := values[int64](t, must(ctx.Op("argmax", map[string]any{"axis": 1}, a)).on(t)); !equal(got, []int64{2, 2}) {
		t.Errorf("argmax: %v", got)
	}
	x := array(t, ctx, []int32{7, -7, 9}, 3)
	y := array(t, ctx, []int32{2, 2, 3}, 3)
	if got := values[int32](t, must(ctx.Op("div", nil, x, y)).on(t)); !equal(got, []int32{3, -3, 3}) {
		t.Errorf("integer div: %v", got)
	}
	outs := must(ctx.OpMulti("add", nil, []*nnrt.Array{x, x}, 1)).on(t)
	if got := values[int32](t, outs[0]); len(outs) != 1 || !equal(got, []int32{14, -14, 18}) {
		t.Errorf("OpMulti add: %v", got)
	}
}

// Casting covers every dtype, including bool and u8 on the way back.
func TestCastEveryDType(t *testing.T) {
	ctx := newContext(t)
	x := array(t, ctx, []float32{0, 1, 2.75, -3.5}, 4)
	for _, d := range []nnrt.DType{nnrt.F32, nnrt.F64, nnrt.F16, nnrt.BF16, nnrt.I32, nnrt.I64, nnrt.U8, nnrt.Bool} {
		c := must(ctx.Op("cast", map[string]any{"dtype": d.String()}, x)).on(t)
		if c.DType() != d {
			t.Errorf("cast to %v gave %v", d, c.DType())
		}
		c.Close()
	}
	pos := array(t, ctx, []float32{0, 1, 2.75, 200}, 4)
	if got := values[uint8](t, must(ctx.Op("cast", `{"dtype": "u8"}`, pos)).on(t)); !equal(got, []uint8{0, 1, 2, 200}) {
		t.Errorf("cast to u8: %v", got)
	}
	if got := values[bool](t, must(ctx.Op("cast", `{"dtype": "bool"}`, x)).on(t)); !equal(got, []bool{false, true, true, true}) {
		t.Errorf("cast to bool: %v", got)
	}
	if got := values[float64](t, must(ctx.Op("cast", `{"dtype": "f64"}`, x)).on(t)); !equal(got, []float64{0, 1, 2.75, -3.5}) {
		t.Errorf("cast to f64: %v", got)
	}
}

// The counter-based generators give the same numbers for the same seed.
func TestRandomIsSeeded(t *testing.T) {
	ctx := newContext(t)
	draw := func(seed int) []float32 {
		return values[float32](t, must(ctx.Op("random_uniform", map[string]any{"shape": []int{64}, "seed": seed}, nil...)).on(t))
	}
	a, b, c := draw(5), draw(5), draw(6)
	if !equal(a, b) || equal(a, c) {
		t.Fatal("random_uniform is not a function of its seed")
	}
	for _, v := range a {
		if v < 0 || v >= 1 {
			t.Fatalf("random_uniform gave %g outside [0, 1)", v)
		}
	}
	n := values[float32](t, must(ctx.Op("random_normal", map[string]any{"shape": []int{4, 4}, "seed": 1, "std": 2}, nil...)).on(t))
	if len(n) != 16 {
		t.Fatalf("random_normal gave %d values", len(n))
	}
}
