package nnrt

import (
	"encoding/json"
	"math"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Trainer holds an optimizer, its state and the training loop for one model, whose parameters it
// updates in place and which it keeps alive. nnrt lets one thread use a trainer at a time, so the
// methods here take turns (a second goroutine's Fit waits for the first); Cancel and Close are
// the exceptions and may be called from any goroutine while Fit runs.
type Trainer struct {
	h       cHandle
	busy    sync.Mutex // held for every call but Cancel and Close
	fitting atomic.Bool
	slot    *progressSlot
}

// progressSlot owns the cgo.Handle of the installed progress function. It lives apart from the
// Trainer so that the release function can delete the handle without referring to the Trainer.
type progressSlot struct {
	handle cgo.Handle // 0 when no function is installed
}

func (s *progressSlot) sink() *progressSink {
	if s.handle == 0 {
		return nil
	}
	return s.handle.Value().(*progressSink)
}

// NewTrainer creates a trainer for the model. options is nil for the defaults (SGD, learning rate
// 0.01, batch size 64), a map or struct, or JSON text; see nnrt_trainer_create in nnrt.h for the
// optimizers, penalties, clipping, schedules, batching and seeds.
func (m *Model) NewTrainer(options any) (*Trainer, error) {
	text, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	mp, err := m.handle().borrow()
	if err != nil {
		return nil, err
	}
	defer m.h.giveBack()
	p, err := cTrainerCreate(mp, text)
	if err != nil {
		return nil, err
	}
	slot := &progressSlot{}
	t := &Trainer{
		h: newCHandle("trainer", p, func(p unsafe.Pointer) {
			// After the C release nnrt can no longer call back, so the handle may go.
			cTrainerRelease(p)
			if slot.handle != 0 {
				slot.handle.Delete()
				slot.handle = 0
			}
		}),
		slot: slot,
	}
	runtime.SetFinalizer(t, (*Trainer).Close)
	return t, nil
}

func (t *Trainer) handle() *cHandle {
	if t == nil {
		return nil
	}
	return &t.h
}

// lock takes the trainer's turn and borrows its pointer; the caller defers t.unlock().
func (t *Trainer) lock() (unsafe.Pointer, error) {
	if t == nil {
		return nil, bindingError(ErrInvalidArgument, "nil trainer")
	}
	t.busy.Lock()
	p, err := t.h.borrow()
	if err != nil {
		t.busy.Unlock()
		return nil, err
	}
	return p, nil
}

func (t *Trainer) unlock() {
	t.h.giveBack()
	t.busy.Unlock()
}

// SetProgress installs fn as the progress callback of Fit; nil removes it.
func (t *Trainer) SetProgress(fn ProgressFunc) error {
	p, err := t.lock()
	if err != nil {
		return err
	}
	defer t.unlock()
	var next cgo.Handle
	if fn != nil {
		next = cgo.NewHandle(&progressSink{fn: fn})
	}
	if err := cTrainerSetProgress(p, uintptr(next)); err != nil {
		if next != 0 {
			next.Delete()
		}
		return err
	}
	// No Fit runs (we hold the turn), so nnrt cannot be inside the old callback.
	if t.slot.handle != 0 {
		t.slot.handle.Delete()
	}
	t.slot.handle = next
	return nil
}

// Step runs one optimisation step on a minibatch (x [N, <input shape>], y class indices [N] or
// float targets) and returns the minibatch's mean loss before the update.
func (t *Trainer) Step(x, y *Array) (float64, error) {
	p, err := t.lock()
	if err != nil {
		return 0, err
	}
	defer t.unlock()
	ptrs, giveBack, err := borrowAll([]*cHandle{x.handle(), y.handle()})
	if err != nil {
		return 0, err
	}
	defer giveBack()
	return cTrainerStep(p, ptrs[0], ptrs[1])
}

// Fit trains for epochs passes over train, evaluating on validation (may be nil) after each, and
// calling the progress function. It returns nil when training stops by plan (all epochs, the
// progress function, a non-finite loss; Result says which) and an error with status ErrCancelled
// after Cancel. Calling Fit again continues where training stopped. A panic in the progress
// function stops training and is raised again here.
func (t *Trainer) Fit(train, validation *Dataset, epochs int) error {
	p, err := t.lock()
	if err != nil {
		return err
	}
	defer t.unlock()
	handles := []*cHandle{train.handle()}
	if validation != nil {
		handles = append(handles, validation.handle())
	}
	ptrs, giveBack, err := borrowAll(handles)
	if err != nil {
		return err
	}
	defer giveBack()
	var val unsafe.Pointer // NULL: no validation set
	if validation != nil {
		val = ptrs[1]
	}
	t.fitting.Store(true)
	err = cTrainerFit(p, ptrs[0], val, epochs)
	t.fitting.Store(false)
	t.slot.sink().rethrow()
	return err
}

// Cancel asks a running Fit to stop after its current minibatch; Fit then returns ErrCancelled.
// A Cancel before Fit starts makes the next Fit stop at once. Safe from any goroutine.
func (t *Trainer) Cancel() error {
	p, err := t.handle().borrow()
	if err != nil {
		return err
	}
	defer t.h.giveBack()
	return cTrainerCancel(p)
}

// Rank returns this process's rank and the world size in distributed training (the "distributed"
// option); 0 and 1 without it.
func (t *Trainer) Rank() (rank, worldSize int, err error) {
	p, err := t.handle().borrow()
	if err != nil {
		return 0, 0, err
	}
	defer t.h.giveBack()
	return cTrainerRank(p)
}

// ResultJSON describes the last fit as nnrt's JSON text.
func (t *Trainer) ResultJSON() (string, error) {
	p, err := t.lock()
	if err != nil {
		return "", err
	}
	defer t.unlock()
	return cTrainerResult(p)
}

// TrainResult describes the training so far.
type TrainResult struct {
	Epochs            int           `json:"epochs"` // completed, over all fits
	Iterations        int64         `json:"iterations"`
	StopReason        string        `json:"stop_reason"` // completed, callback, cancelled, invalid_score, not_started
	BestEpoch         int           `json:"best_epoch"`  // -1 without a validation set
	BestScore         float64       `json:"best_score"`  // NaN without a validation set
	LastLoss          float64       `json:"last_loss"`
	ExamplesPerSecond float64       `json:"examples_per_second"` // of the last epoch
	History           []EpochResult `json:"history"`
}

// EpochResult is one epoch of TrainResult.History.
type EpochResult struct {
	Epoch           int      `json:"epoch"`
	Loss            float64  `json:"loss"` // mean over the epoch
	LearningRate    float64  `json:"learning_rate"`
	ValidationScore *float64 `json:"validation_score"` // nil without a validation set
	Seconds         float64  `json:"seconds"`
}

// Result describes the training so far: epochs, stop reason, best validation score, history.
func (t *Trainer) Result() (TrainResult, error) {
	text, err := t.ResultJSON()
	if err != nil {
		return TrainResult{}, err
	}
	// JSON null leaves a field as it was, so these stand for "no validation set".
	r := TrainResult{BestEpoch: -1, BestScore: math.NaN()}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return TrainResult{}, bindingError(ErrInternal, "unreadable trainer result %q: %v", text, err)
	}
	return r, nil
}

// Save writes the model and the training state (optimizer state, epochs, seeds, history) to path
// atomically; LoadModel reads it as a model, Restore as a training state.
func (t *Trainer) Save(path string) error {
	p, err := t.lock()
	if err != nil {
		return err
	}
	defer t.unlock()
	return cTrainerSave(p, path)
}

// Restore loads a state saved by Save (same model config and optimizer type) into this trainer
// and its model, so training continues exactly where it stopped. On failure nothing changes.
func (t *Trainer) Restore(path string) error {
	p, err := t.lock()
	if err != nil {
		return err
	}
	defer t.unlock()
	return cTrainerRestore(p, path)
}

// Close releases the trainer and its reference to the model. A Fit running on another goroutine
// is cancelled, and the trainer is released when it returns. Calling Close again does nothing.
func (t *Trainer) Close() {
	if t == nil {
		return
	}
	runtime.SetFinalizer(t, nil)
	if t.fitting.Load() {
		_ = t.Cancel()
	}
	t.h.close()
}
