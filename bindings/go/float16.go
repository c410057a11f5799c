package nnrt

import "math"

// Float16 is an IEEE 754 binary16 value, stored as its bits: the Go element type of F16 arrays.
type Float16 uint16

// BFloat16 is a bfloat16 value (the upper 16 bits of a float32), stored as its bits: the Go
// element type of BF16 arrays.
type BFloat16 uint16

// Float32 converts exactly: every binary16 value is a float32 value.
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // infinity or NaN: keep the payload
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0: // zero or subnormal: mant units of 2^-24, exact in a float32
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// Float16FromFloat32 rounds to the nearest binary16 value, ties to even, as nnrt's "cast" does;
// values too large become infinities and NaN stays NaN.
func Float16FromFloat32(f float32) Float16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return Float16(sign | 0x7e00)
		}
		return Float16(sign | 0x7c00)
	}
	e := exp - 127 + 15 // the binary16 exponent field this value would have
	if e >= 0x1f {
		return Float16(sign | 0x7c00)
	}
	if e <= 0 {
		if e < -10 { // below half the smallest subnormal: rounds to zero
			return Float16(sign)
		}
		// Subnormal result: the 24-bit significand in units of 2^-24.
		return Float16(sign | roundShift(mant|0x800000, uint32(14-e)))
	}
	// A carry out of the mantissa correctly bumps the exponent (and overflows to infinity).
	return Float16(sign | (uint16(e)<<10 + roundShift(mant, 13)))
}

// roundShift returns v >> shift rounded to nearest, ties to even.
func roundShift(v, shift uint32) uint16 {
	q := v >> shift
	rem := v & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return uint16(q)
}

// Float32 converts exactly.
func (h BFloat16) Float32() float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// BFloat16FromFloat32 rounds to the nearest bfloat16 value, ties to even; NaN stays NaN.
func BFloat16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return BFloat16(b>>16 | 0x40)
	}
	return BFloat16((b + 0x7fff + ((b >> 16) & 1)) >> 16)
}
