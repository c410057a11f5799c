package nnrt

import (
	"runtime"
	"time"
	"unsafe"
)

// RunOptions stop the calls that can run long (Model.PredictWith, PredictManyWith,
// PredictIntoWith, EvaluateWith, Context.LoadModelWith and ImportONNXWith) from another
// goroutine, or after a time limit. A stopped call returns ErrCancelled or ErrDeadlineExceeded as
// soon as the op running then has finished, gives no output and leaves the model usable at once.
// One RunOptions may be passed to any number of calls on any goroutines at once, and Cancel, Reset
// and SetTimeout may be called from any goroutine while those calls run.
//
// nnrt's abort callback (nnrt_run_options_set_abort_callback) is not offered: cancel from a
// goroutine of your own instead (see left_out.txt).
type RunOptions struct {
	h cHandle
}

// NewRunOptions creates run options that never stop a call: not cancelled, no timeout.
func NewRunOptions() (*RunOptions, error) {
	p, err := cRunOptionsCreate()
	if err != nil {
		return nil, err
	}
	o := &RunOptions{h: newCHandle("run options", p, cRunOptionsRelease)}
	runtime.SetFinalizer(o, (*RunOptions).Close)
	return o, nil
}

func (o *RunOptions) handle() *cHandle {
	if o == nil {
		return nil
	}
	return &o.h
}

// borrowOrNil lends the C pointer for one call, or NULL for nil options (never stop); the caller
// defers the returned giveBack.
func (o *RunOptions) borrowOrNil() (unsafe.Pointer, func(), error) {
	if o == nil {
		return nil, func() {}, nil
	}
	p, err := o.h.borrow()
	if err != nil {
		return nil, nil, err
	}
	return p, o.h.giveBack, nil
}

// Cancel stops every call running with these options, and every later one until Reset: each
// returns ErrCancelled at its next check. Safe from any goroutine.
func (o *RunOptions) Cancel() error {
	p, err := o.handle().borrow()
	if err != nil {
		return err
	}
	defer o.h.giveBack()
	return cRunOptionsCancel(p)
}

// Reset clears a cancellation, so that later calls run again (a call stopped already stays
// stopped).
func (o *RunOptions) Reset() error {
	p, err := o.handle().borrow()
	if err != nil {
		return err
	}
	defer o.h.giveBack()
	return cRunOptionsReset(p)
}

// SetTimeout gives each later call run with these options at most d, counted from the call's
// start on a monotonic clock; past it the call returns ErrDeadlineExceeded. 0 removes the limit;
// a negative d is ErrInvalidArgument. Calls already running keep the limit they started with.
func (o *RunOptions) SetTimeout(d time.Duration) error {
	if d < 0 {
		return bindingError(ErrInvalidArgument, "timeout %v is negative; 0 removes the limit", d)
	}
	p, err := o.handle().borrow()
	if err != nil {
		return err
	}
	defer o.h.giveBack()
	return cRunOptionsSetTimeout(p, d.Seconds())
}

// Close releases the options; calls running with them keep them until they return. Calling
// Close again does nothing.
func (o *RunOptions) Close() {
	if o == nil {
		return
	}
	runtime.SetFinalizer(o, nil)
	o.h.close()
}
