package nnrt

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// Evaluation holds the metrics of a model on a dataset. It is read-only, so any goroutine may
// read it.
type Evaluation struct {
	h cHandle
}

func wrapEvaluation(p unsafe.Pointer) *Evaluation {
	e := &Evaluation{h: newCHandle("evaluation", p, cEvaluationRelease)}
	runtime.SetFinalizer(e, (*Evaluation).Close)
	return e
}

func (e *Evaluation) handle() *cHandle {
	if e == nil {
		return nil
	}
	return &e.h
}

// Accuracy returns the fraction of examples classified right, or NaN for a regression.
func (e *Evaluation) Accuracy() (float64, error) {
	p, err := e.handle().borrow()
	if err != nil {
		return 0, err
	}
	defer e.h.giveBack()
	return cEvaluationAccuracy(p)
}

// ReportJSON returns nnrt's report as JSON text.
func (e *Evaluation) ReportJSON() (string, error) {
	p, err := e.handle().borrow()
	if err != nil {
		return "", err
	}
	defer e.h.giveBack()
	return cEvaluationReport(p)
}

// Report holds the metrics: the classification ones for class labels, MSE, MAE and R² for float
// targets (the other group is zero).
type Report struct {
	Examples        int64        `json:"examples"`
	Classes         int          `json:"classes"`
	Accuracy        float64      `json:"accuracy"`
	PerClass        []ClassScore `json:"per_class"`
	MacroAvg        Averages     `json:"macro_avg"`
	WeightedAvg     Averages     `json:"weighted_avg"`
	ConfusionMatrix [][]int64    `json:"confusion_matrix"` // rows: true class, columns: predicted
	MSE             float64      `json:"mse"`
	MAE             float64      `json:"mae"`
	R2              float64      `json:"r2"`
}

// ClassScore is one class's line of a Report.
type ClassScore struct {
	Class     int     `json:"class"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Support   int64   `json:"support"`
}

// Averages are the macro or weighted averages of a Report.
type Averages struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Report returns the metrics, decoded from ReportJSON.
func (e *Evaluation) Report() (Report, error) {
	text, err := e.ReportJSON()
	if err != nil {
		return Report{}, err
	}
	var r Report
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return Report{}, bindingError(ErrInternal, "unreadable evaluation report %q: %v", text, err)
	}
	return r, nil
}

// Close releases the evaluation; calling it again does nothing.
func (e *Evaluation) Close() {
	if e == nil {
		return
	}
	runtime.SetFinalizer(e, nil)
	e.h.close()
}
