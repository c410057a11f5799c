package nnrt

// The C side of versions, statuses, dtypes, logging, contexts, arrays and ops: one C shim per
// fallible call, which copies nnrt_last_error() inside the same cgo call (see nnrt_go.h), and a Go
// function around it that speaks Go types. Only the capi_*.go files call C, because every cgo
// file costs several compiler runs at build time.

// #include "nnrt_go.h"
//
// extern void nnrt_go_log_trampoline(int level, const char *message, void *user);
// static void nnrt_go_set_log(int on, int min_level) {
//   nnrt_set_log_callback(on ? nnrt_go_log_trampoline : NULL, NULL, min_level);
// }
//
// static nnrt_status nnrt_go_context_create(const char *options, nnrt_context **out, char **err) {
//   NNRT_GO_CALL(nnrt_context_create(options, out));
// }
// NNRT_GO_STRING_SHIM(nnrt_context_describe, nnrt_context *)
//
// static nnrt_status nnrt_go_array_create(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim,
//                                         const int64_t *shape, nnrt_array **out, char **err) {
//   NNRT_GO_CALL(nnrt_array_create(ctx, dtype, ndim, shape, out));
// }
// static nnrt_status nnrt_go_array_from_host(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim,
//                                            const int64_t *shape, const void *data, size_t nbytes,
//                                            nnrt_array **out, char **err) {
//   NNRT_GO_CALL(nnrt_array_from_host(ctx, dtype, ndim, shape, data, nbytes, out));
// }
// static nnrt_status nnrt_go_array_to_host(const nnrt_array *a, void *data, size_t nbytes,
//                                          char **err) {
//   NNRT_GO_CALL(nnrt_array_to_host(a, data, nbytes));
// }
// static nnrt_status nnrt_go_array_info(const nnrt_array *a, nnrt_dtype *dtype, int32_t *ndim,
//                                       int64_t *shape, char **err) {
//   NNRT_GO_CALL(nnrt_array_info(a, dtype, ndim, shape));
// }
// static nnrt_status nnrt_go_array_nbytes(const nnrt_array *a, size_t *nbytes, char **err) {
//   NNRT_GO_CALL(nnrt_array_nbytes(a, nbytes));
// }
// static nnrt_status nnrt_go_op(nnrt_context *ctx, const char *name, nnrt_array **inputs,
//                               int32_t n_inputs, const char *attrs, nnrt_array **outputs,
//                               int32_t n_outputs, char **err) {
//   NNRT_GO_CALL(nnrt_op(ctx, name, (const nnrt_array *const *)inputs, n_inputs, attrs, outputs,
//                        n_outputs));
// }
import "C"

import "unsafe"

// The Go constants repeat the header's values (which never change meaning); this stops the build
// if one ever differs: a map literal may not have the key false twice.
var _ = map[bool]int{false: 0, OK == C.NNRT_OK && ErrInvalidArgument == C.NNRT_ERR_INVALID_ARGUMENT &&
	ErrOutOfMemory == C.NNRT_ERR_OUT_OF_MEMORY && ErrShape == C.NNRT_ERR_SHAPE &&
	ErrDType == C.NNRT_ERR_DTYPE && ErrUnsupported == C.NNRT_ERR_UNSUPPORTED &&
	ErrBackend == C.NNRT_ERR_BACKEND && ErrNoDevice == C.NNRT_ERR_NO_DEVICE && ErrIO == C.NNRT_ERR_IO &&
	ErrCorrupt == C.NNRT_ERR_CORRUPT && ErrVersion == C.NNRT_ERR_VERSION &&
	ErrCancelled == C.NNRT_ERR_CANCELLED && ErrInternal == C.NNRT_ERR_INTERNAL &&
	ErrDeadlineExceeded == C.NNRT_ERR_DEADLINE_EXCEEDED &&
	F32 == C.NNRT_DTYPE_F32 && F64 == C.NNRT_DTYPE_F64 && F16 == C.NNRT_DTYPE_F16 &&
	BF16 == C.NNRT_DTYPE_BF16 && I32 == C.NNRT_DTYPE_I32 && I64 == C.NNRT_DTYPE_I64 &&
	U8 == C.NNRT_DTYPE_U8 && Bool == C.NNRT_DTYPE_BOOL &&
	LogDebug == C.NNRT_LOG_DEBUG && LogInfo == C.NNRT_LOG_INFO && LogWarn == C.NNRT_LOG_WARN &&
	LogError == C.NNRT_LOG_ERROR && HeaderABIVersion == C.NNRT_ABI_VERSION &&
	VersionMajor == C.NNRT_VERSION_MAJOR && VersionMinor == C.NNRT_VERSION_MINOR &&
	VersionPatch == C.NNRT_VERSION_PATCH && MaxDims == C.NNRT_MAX_DIMS: 1}

// errorFrom turns a shim's status and malloc'd message copy into an *Error, freeing the copy.
// It returns nil for NNRT_OK.
func errorFrom(status C.nnrt_status, message *C.char) error {
	if status == C.NNRT_OK {
		return nil
	}
	e := &Error{Status: Status(status)}
	if message != nil {
		e.Message = C.GoString(message)
		C.free(unsafe.Pointer(message))
	}
	return e
}

// cString is a C copy of s, for the length of one call; free it with freeCString.
func cString(s string) *C.char { return C.CString(s) }

// cJSONText is the C string of an optional JSON text: NULL when none was given.
func cJSONText(j jsonText) *C.char {
	if !j.given {
		return nil
	}
	return C.CString(j.text)
}

func freeCString(s *C.char) { C.free(unsafe.Pointer(s)) }

// goStringFree copies a malloc'd C string into Go and frees it.
func goStringFree(s *C.char) string {
	defer C.free(unsafe.Pointer(s))
	return C.GoString(s)
}

func cStatusName(s Status) string { return C.GoString(C.nnrt_status_name(C.nnrt_status(s))) }
func cDTypeSize(d DType) int      { return int(C.nnrt_dtype_size(C.nnrt_dtype(d))) }
func cABIVersion() uint32         { return uint32(C.nnrt_abi_version()) }
func cVersionString() string      { return C.GoString(C.nnrt_version_string()) }

// cSetLog routes nnrt's log to the exported Go function (on) or back to stderr.
func cSetLog(on bool, minLevel LogLevel) {
	flag := C.int(0)
	if on {
		flag = 1
	}
	C.nnrt_go_set_log(flag, C.int(minLevel))
}

func cContextCreate(options jsonText) (unsafe.Pointer, error) {
	text := cJSONText(options)
	defer freeCString(text)
	var out *C.nnrt_context
	var msg *C.char
	if err := errorFrom(C.nnrt_go_context_create(text, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cContextRelease(ctx unsafe.Pointer) { C.nnrt_context_release((*C.nnrt_context)(ctx)) }

func cContextDescribe(ctx unsafe.Pointer) (string, error) {
	var out, msg *C.char
	if err := errorFrom(C.nnrt_go_nnrt_context_describe((*C.nnrt_context)(ctx), &out, &msg), msg); err != nil {
		return "", err
	}
	return goStringFree(out), nil
}

// shapePtr points C at a shape's first entry, or is NULL for a scalar.
func shapePtr(shape []int64) *C.int64_t {
	if len(shape) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&shape[0]))
}

func cArrayCreate(ctx unsafe.Pointer, dtype DType, shape []int64) (unsafe.Pointer, error) {
	var out *C.nnrt_array
	var msg *C.char
	st := C.nnrt_go_array_create((*C.nnrt_context)(ctx), C.nnrt_dtype(dtype), C.int32_t(len(shape)),
		shapePtr(shape), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

// cArrayFromHost copies nbytes at data: Go memory that holds no Go pointers and that C uses only
// during the call, as the cgo rules require.
func cArrayFromHost(ctx unsafe.Pointer, dtype DType, shape []int64, data unsafe.Pointer, nbytes int) (unsafe.Pointer, error) {
	var out *C.nnrt_array
	var msg *C.char
	st := C.nnrt_go_array_from_host((*C.nnrt_context)(ctx), C.nnrt_dtype(dtype), C.int32_t(len(shape)),
		shapePtr(shape), data, C.size_t(nbytes), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

// cArrayToHost fills Go memory that holds no Go pointers; nnrt checks nbytes against the array.
func cArrayToHost(a unsafe.Pointer, data unsafe.Pointer, nbytes int) error {
	var msg *C.char
	return errorFrom(C.nnrt_go_array_to_host((*C.nnrt_array)(a), data, C.size_t(nbytes), &msg), msg)
}

func cArrayInfo(a unsafe.Pointer) (DType, []int64, error) {
	var dtype C.nnrt_dtype
	var ndim C.int32_t
	var shape [MaxDims]C.int64_t
	var msg *C.char
	if err := errorFrom(C.nnrt_go_array_info((*C.nnrt_array)(a), &dtype, &ndim, &shape[0], &msg), msg); err != nil {
		return 0, nil, err
	}
	out := make([]int64, int(ndim))
	for i := range out {
		out[i] = int64(shape[i])
	}
	return DType(dtype), out, nil
}

func cArrayNBytes(a unsafe.Pointer) (int, error) {
	var n C.size_t
	var msg *C.char
	if err := errorFrom(C.nnrt_go_array_nbytes((*C.nnrt_array)(a), &n, &msg), msg); err != nil {
		return 0, err
	}
	return int(n), nil
}

func cArrayRelease(a unsafe.Pointer) { C.nnrt_array_release((*C.nnrt_array)(a)) }

// cOp runs an op; on success the caller owns the outputs.
func cOp(ctx unsafe.Pointer, name string, inputs []unsafe.Pointer, attrs jsonText, outputs int) ([]unsafe.Pointer, error) {
	// Go slices of C pointers may be passed to C: they hold no Go pointers. One spare entry each
	// keeps &x[0] valid when a count is 0.
	ins := make([]*C.nnrt_array, len(inputs)+1)
	for i, p := range inputs {
		ins[i] = (*C.nnrt_array)(p)
	}
	outs := make([]*C.nnrt_array, outputs+1)
	cname := cString(name)
	defer freeCString(cname)
	cattrs := cJSONText(attrs)
	defer freeCString(cattrs)
	var msg *C.char
	st := C.nnrt_go_op((*C.nnrt_context)(ctx), cname, &ins[0], C.int32_t(len(inputs)), cattrs,
		&outs[0], C.int32_t(outputs), &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	result := make([]unsafe.Pointer, outputs)
	for i := range result {
		result[i] = unsafe.Pointer(outs[i])
	}
	return result, nil
}
