package nnrt

// Progress is what a ProgressFunc receives after every minibatch and once more after every epoch.
type Progress struct {
	Epoch             int     // 0-based
	Iteration         int64   // minibatches so far, over all epochs
	ExamplesSeen      int64   // over all epochs
	Loss              float64 // of the last minibatch
	LearningRate      float64 // used for the last minibatch
	ExamplesPerSecond float64 // over the current epoch so far
	EpochEnd          bool    // true on the call after an epoch, with ValidationScore filled in
	ValidationScore   float64 // the validation metric after an epoch; NaN when none
	BatchesPerEpoch   int64   // minibatches in one epoch; -1 from a library too old to say
	Batch             int64   // 0-based minibatch within the epoch; -1 from a library too old to say

	// The training device's load (a GPU whose backend reads NVML), sampled at most about once a
	// second; -1 for what is unknown: always on a CPU, without NVML, or from a library too old to say.
	DeviceUtilizationPercent int
	DeviceTemperatureCelsius int
	DeviceMemoryUsedBytes    int64 // by every process on the device
	DeviceMemoryTotalBytes   int64
}

// ProgressFunc is called on the goroutine running Trainer.Fit. Returning true stops training:
// Fit then returns nil and the result's stop reason is "callback". It must not call the
// trainer's methods (Cancel excepted).
type ProgressFunc func(p Progress) (stop bool)

// progressSink is what the C user pointer leads to, through a runtime/cgo.Handle: the Go function
// and, if it panicked, the panic to raise again once Fit is back in Go.
type progressSink struct {
	fn       ProgressFunc
	panicked bool
	panicVal any
}

// deliver calls the function; a panic stops training instead of unwinding through C frames.
func (s *progressSink) deliver(p Progress) (stop bool) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked, s.panicVal = true, r
			stop = true
		}
	}()
	return s.fn(p)
}

// rethrow raises a panic caught during the last Fit, on the goroutine that called Fit.
func (s *progressSink) rethrow() {
	if s != nil && s.panicked {
		v := s.panicVal
		s.panicked, s.panicVal = false, nil
		panic(v)
	}
}
