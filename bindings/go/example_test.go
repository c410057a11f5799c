package nnrt_test

import (
	"errors"
	"fmt"
	"log"

	"nnrt.dev/nnrt"
)

// Array math by name, and an error naming what was wrong.
func ExampleContext_Op() {
	ctx, err := nnrt.NewContext(nnrt.ContextOptions{Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	a, err := nnrt.NewArrayFrom(ctx, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	sums, err := ctx.Op("sum", map[string]any{"axes": []int{1}}, a)
	if err != nil {
		log.Fatal(err)
	}
	defer sums.Close()
	values, _ := nnrt.ToSlice[float32](sums)
	fmt.Println(sums.Shape(), values)

	_, err = ctx.Op("matmul", nil, a, a)
	var e *nnrt.Error
	fmt.Println(errors.As(err, &e), e.Status, errors.Is(err, nnrt.ErrShape))
	// Output:
	// [2] [6 15]
	// true NNRT_ERR_SHAPE true
}
