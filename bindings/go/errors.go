package nnrt

import "fmt"

// Status is an nnrt status code. Every non-OK value is also an error, so that
// errors.Is(err, nnrt.ErrShape) asks whether a call failed with that status.
type Status int32

// The status codes of the C API, with its values (which never change meaning; new ones are
// appended). capi_arrays.go stops the build if one differs from the header.
const (
	OK                 Status = 0
	ErrInvalidArgument Status = 1 // NULL, bad value, unknown JSON key, wrong or closed handle
	ErrOutOfMemory     Status = 2
	ErrShape           Status = 3  // shapes do not fit together; the message gives both
	ErrDType           Status = 4  // a dtype the operation does not accept
	ErrUnsupported     Status = 5  // a valid request this build or backend cannot do
	ErrBackend         Status = 6  // a backend failed to load or failed at run time
	ErrNoDevice        Status = 7  // the requested device does not exist here
	ErrIO              Status = 8  // a file could not be opened, read or written
	ErrCorrupt         Status = 9  // a malformed, truncated or bit-flipped file or buffer
	ErrVersion         Status = 10 // a file or plugin from an incompatible version
	ErrCancelled       Status = 11 // stopped by Trainer.Cancel or RunOptions.Cancel
	ErrInternal        Status = 12 // a bug in nnrt: please report it with the message
	// ErrDeadlineExceeded: a call ran past its RunOptions' timeout (RunOptions.SetTimeout).
	ErrDeadlineExceeded Status = 13
)

// String returns the C name of the status, such as "NNRT_ERR_SHAPE".
func (s Status) String() string {
	return cStatusName(s)
}

// Error returns the status name, so that a Status can stand as an error of its own.
func (s Status) Error() string { return s.String() }

// Error is what every failing call of this package returns: the status and the message nnrt
// wrote for the failing call (copied on the same OS thread, so it is always this call's own).
type Error struct {
	Status  Status
	Message string
}

// Error formats the error as "NNRT_ERR_SHAPE: <message>".
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Status.String()
	}
	return e.Status.String() + ": " + e.Message
}

// Unwrap returns the status, so that errors.Is(err, nnrt.ErrShape) works on wrapped errors.
func (e *Error) Unwrap() error { return e.Status }

// bindingError is an error found by the Go layer itself, before any C call: a closed object or a
// Go slice that does not fit the array.
func bindingError(status Status, format string, args ...any) error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}
