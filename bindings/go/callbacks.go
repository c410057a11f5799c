package nnrt

// The Go functions that nnrt calls back through the C trampolines in trampolines.c. A file with
// //export may only declare things in its preamble, hence this file of its own.

// #include <stdint.h>
// #include <nnrt/nnrt.h>
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

//export nnrtGoLog
func nnrtGoLog(level C.int, message *C.char) {
	deliverLog(LogLevel(level), C.GoString(message))
}

//export nnrtGoProgress
func nnrtGoProgress(p *C.nnrt_progress, user C.uintptr_t) C.int {
	sink := cgo.Handle(user).Value().(*progressSink)
	if sink.deliver(progressFromC(p)) {
		return 1
	}
	return 0
}

// progressFromC copies the struct, reading members added after the first version only when the
// library's struct_size says they are there.
func progressFromC(p *C.nnrt_progress) Progress {
	out := Progress{
		Epoch:             int(p.epoch),
		Iteration:         int64(p.iteration),
		ExamplesSeen:      int64(p.examples_seen),
		Loss:              float64(p.loss),
		LearningRate:      float64(p.learning_rate),
		ExamplesPerSecond: float64(p.examples_per_second),
		EpochEnd:          p.epoch_end != 0,
		ValidationScore:   float64(p.validation_score),
		BatchesPerEpoch:   -1,
		Batch:             -1,

		DeviceUtilizationPercent: -1,
		DeviceTemperatureCelsius: -1,
		DeviceMemoryUsedBytes:    -1,
		DeviceMemoryTotalBytes:   -1,
	}
	size := uintptr(p.struct_size)
	if size >= unsafe.Offsetof(p.batches_per_epoch)+unsafe.Sizeof(p.batches_per_epoch) {
		out.BatchesPerEpoch = int64(p.batches_per_epoch)
	}
	if size >= unsafe.Offsetof(p.batch)+unsafe.Sizeof(p.batch) {
		out.Batch = int64(p.batch)
	}
	if size >= unsafe.Sizeof(*p) {
		out.DeviceUtilizationPercent = int(p.device_utilization_percent)
		out.DeviceTemperatureCelsius = int(p.device_temperature_celsius)
		out.DeviceMemoryUsedBytes = int64(p.device_memory_used_bytes)
		out.DeviceMemoryTotalBytes = int64(p.device_memory_total_bytes)
	}
	return out
}
