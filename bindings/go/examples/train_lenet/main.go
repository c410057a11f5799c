// Command train_lenet trains the classic LeNet on Fashion-MNIST through the Go binding, printing
// progress and the evaluation on the test set:
//
//	go run ./examples/train_lenet [data folder] [epochs] [training examples]
//
// The data folder holds train-images-idx3-ubyte.gz and friends (default: Debian's
// dataset-fashion-mnist, /usr/share/datasets/fashion-mnist); epochs defaults to 1 and training
// examples to all 60000. Ctrl-C cancels training and still evaluates the model trained so far.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"

	"nnrt.dev/nnrt"
)

// lenetFiles reads the project's one LeNet and its trainer options (Adam, a cosine schedule over 8
// epochs): examples/lenet.json and examples/lenet_trainer.json, the files the C example, the tests
// and `nnrt train` use. go:embed cannot reach outside the module, so they are read from the
// checkout this source file is in.
func lenetFiles() (model, trainer []byte, err error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return nil, nil, errors.New("cannot tell where this source file is, to find examples/lenet.json")
	}
	dir := filepath.Join(filepath.Dir(self), "..", "..", "..", "..", "examples")
	if model, err = os.ReadFile(filepath.Join(dir, "lenet.json")); err != nil {
		return nil, nil, err
	}
	if trainer, err = os.ReadFile(filepath.Join(dir, "lenet_trainer.json")); err != nil {
		return nil, nil, err
	}
	return model, trainer, nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "train_lenet:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	dir, epochs, limit := "/usr/share/datasets/fashion-mnist", 1, int64(0)
	var err error
	if len(args) > 0 {
		dir = args[0]
	}
	if len(args) > 1 {
		if epochs, err = strconv.Atoi(args[1]); err != nil {
			return fmt.Errorf("epochs: %w", err)
		}
	}
	if len(args) > 2 {
		if limit, err = strconv.ParseInt(args[2], 10, 64); err != nil {
			return fmt.Errorf("training examples: %w", err)
		}
	}

	lenet, trainerOptions, err := lenetFiles()
	if err != nil {
		return err
	}
	ctx, err := nnrt.NewContext(nil)
	if err != nil {
		return err
	}
	defer ctx.Close()
	train, err := ctx.LoadDataset(nnrt.IDXSpec{
		Images: filepath.Join(dir, "train-images-idx3-ubyte.gz"),
		Labels: filepath.Join(dir, "train-labels-idx1-ubyte.gz"),
		Limit:  limit,
	})
	if err != nil {
		return err
	}
	defer train.Close()
	test, err := ctx.LoadDataset(nnrt.IDXSpec{
		Images: filepath.Join(dir, "t10k-images-idx3-ubyte.gz"),
		Labels: filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"),
	})
	if err != nil {
		return err
	}
	defer test.Close()

	model, err := ctx.NewModel(lenet)
	if err != nil {
		return err
	}
	defer model.Close()
	trainer, err := model.NewTrainer(trainerOptions)
	if err != nil {
		return err
	}
	defer trainer.Close()
	if err := trainer.SetProgress(printProgress); err != nil {
		return err
	}

	// Ctrl-C cancels from the signal goroutine while Fit runs on this one.
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	go func() {
		if _, ok := <-interrupt; ok {
			fmt.Println("cancelling...")
			_ = trainer.Cancel()
		}
	}()

	n, err := train.Size()
	if err != nil {
		return err
	}
	fmt.Printf("nnrt %s: LeNet, %d training images, %d epoch(s)\n", nnrt.Version(), n, epochs)
	if err := trainer.Fit(train, test, epochs); err != nil && !errors.Is(err, nnrt.ErrCancelled) {
		return err
	}

	eval, err := model.Evaluate(test)
	if err != nil {
		return err
	}
	defer eval.Close()
	report, err := eval.Report()
	if err != nil {
		return err
	}
	fmt.Println("class  precision  recall  f1      support")
	for _, c := range report.PerClass {
		fmt.Printf("%5d  %9.4f  %6.4f  %6.4f  %7d\n", c.Class, c.Precision, c.Recall, c.F1, c.Support)
	}
	fmt.Printf("macro avg  precision %.4f  recall %.4f  f1 %.4f\n",
		report.MacroAvg.Precision, report.MacroAvg.Recall, report.MacroAvg.F1)
	fmt.Printf("test_accuracy=%.4f\n", report.Accuracy)
	return nil
}

func printProgress(p nnrt.Progress) bool {
	if p.EpochEnd {
		fmt.Printf("epoch %d done: %.0f images/s, test accuracy %.4f\n", p.Epoch+1, p.ExamplesPerSecond, p.ValidationScore)
	} else if p.Batch%100 == 0 {
		fmt.Printf("epoch %d batch %4d/%d  loss %.4f  %.0f images/s\n", p.Epoch+1, p.Batch, p.BatchesPerEpoch, p.Loss, p.ExamplesPerSecond)
	}
	return false
}
