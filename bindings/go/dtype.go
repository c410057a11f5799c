package nnrt

// DType is the element type of an array.
type DType int32

// The element types of the C API, with its values.
const (
	F32  DType = 1
	F64  DType = 2
	F16  DType = 3 // IEEE 754 binary16; Go type Float16
	BF16 DType = 4 // bfloat16, the upper half of an f32; Go type BFloat16
	I32  DType = 5
	I64  DType = 6
	U8   DType = 7
	Bool DType = 8 // one byte, 0 or 1, like Go's bool
	I8   DType = 9 // signed byte, Go type int8: quantized weights (Model.Quantize); copied, not computed on
)

// Size returns the size in bytes of one element, or 0 for a value that is not a DType.
func (d DType) Size() int {
	return cDTypeSize(d)
}

// String returns the name the "cast" op uses: "f32", "bf16", "bool"...
func (d DType) String() string {
	switch d {
	case F32:
		return "f32"
	case F64:
		return "f64"
	case F16:
		return "f16"
	case BF16:
		return "bf16"
	case I32:
		return "i32"
	case I64:
		return "i64"
	case U8:
		return "u8"
	case Bool:
		return "bool"
	case I8:
		return "i8"
	}
	return "unknown"
}

// Element is the set of Go types that hold one array element, each with the memory layout of its
// DType, so that a []T is copied to and from nnrt without conversion.
type Element interface {
	float32 | float64 | Float16 | BFloat16 | int32 | int64 | uint8 | bool | int8
}

// DTypeOf returns the DType whose elements a T holds.
func DTypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case Float16:
		return F16
	case BFloat16:
		return BF16
	case int32:
		return I32
	case int64:
		return I64
	case uint8:
		return U8
	case int8:
		return I8
	default: // bool: the constraint leaves no other type
		return Bool
	}
}
