// Package nnrt is the Go binding of nnrt, an embeddable deep-learning runtime: a thin layer over
// its C API (include/nnrt/nnrt.h, the reference manual for every call).
//
// A Context selects the backend and device; Arrays live on it and Context.Op runs array math by
// name; a Model is built from a JSON config (or loaded from a safetensors checkpoint), a Dataset
// holds examples, a Trainer fits a model on a dataset, and an Evaluation holds the metrics.
//
// Errors: every failing call returns an *Error with the Status and nnrt's message for that very
// call. The message is copied inside the same cgo call that failed, since nnrt keeps it per OS
// thread and a goroutine may move to another thread between two calls. errors.Is(err, ErrShape)
// and errors.As(err, &nnrtErr) both work.
//
// Lifetimes: every object has an idempotent Close, and objects may be closed in any order, since
// nnrt objects keep alive what they depend on (an array its context, a trainer its model). Close
// while another goroutine is inside a call on the same object is safe too: the C object is
// released when that call returns. Finalizers close what was forgotten, but only as a safety net,
// since the garbage collector does not see the C memory behind an object.
//
// Concurrency follows the C API: Context, Model, Array, Dataset and Evaluation may be used from
// many goroutines at once; a Trainer's calls take turns, and Trainer.Cancel may be called from any
// goroutine while Fit runs. RunOptions stop the calls of Model.PredictWith, PredictManyWith,
// PredictIntoWith, EvaluateWith, Context.LoadModelWith and ImportONNXWith from any goroutine, or
// after a timeout.
//
// Model.PredictInto predicts from one Go slice into another without copying either: both are lent
// to nnrt for the length of that one cgo call.
package nnrt
