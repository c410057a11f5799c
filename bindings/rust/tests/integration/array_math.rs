//! (2) Array math with exact results, and every dtype in and out.

use nnrt::{Array, BF16, Context, DType, F16, Status};

use crate::common::context;

fn floats(ctx: &Context, shape: &[i64], data: &[f32]) -> Array {
    Array::from_slice(ctx, shape, data).unwrap()
}

#[test]
fn every_dtype_round_trips() {
    let ctx = context();
    let shape = [2, 3];
    fn check<T: nnrt::Element + PartialEq + std::fmt::Debug>(ctx: &Context, shape: &[i64], data: &[T]) {
        let a = Array::from_slice(ctx, shape, data).unwrap();
        let info = a.info().unwrap();
        assert_eq!(info.dtype, T::DTYPE);
        assert_eq!(info.shape, shape);
        assert_eq!(info.len(), data.len());
        assert_eq!(a.nbytes().unwrap(), std::mem::size_of_val(data));
        assert_eq!(a.to_vec::<T>().unwrap(), data);
        // And through raw bytes.
        let b = Array::from_bytes(ctx, T::DTYPE, shape, &a.to_bytes().unwrap()).unwrap();
        assert_eq!(b.to_vec::<T>().unwrap(), data);
    }
    check(&ctx, &shape, &[1.5f32, -2.0, 0.0, 3.25, 1e30, -1e-30]);
    check(&ctx, &shape, &[1.5f64, -2.0, 0.0, 3.25, 1e300, -1e-300]);
    check(&ctx, &shape, &[0.5f32, 1.0, -2.0, 65504.0, 0.0, -0.25].map(F16::from_f32));
    check(&ctx, &shape, &[0.5f32, 1.0, -2.0, 3.0e38, 0.0, -0.25].map(BF16::from_f32));
    check(&ctx, &shape, &[1i32, -2, i32::MAX, i32::MIN, 0, 7]);
    check(&ctx, &shape, &[1i64, -2, i64::MAX, i64::MIN, 0, 7]);
    check(&ctx, &shape, &[0u8, 1, 127, 128, 255, 9]);
    check(&ctx, &shape, &[0i8, -1, 127, -128, 63, -63]);
    check(&ctx, &shape, &[true, false, true, true, false, false]);
}

#[test]
fn zeros_scalars_and_empty_arrays() {
    let ctx = context();
    for dtype in DType::ALL {
        let a = Array::zeros(&ctx, dtype, &[2, 2]).unwrap();
        assert_eq!(a.dtype().unwrap(), dtype);
        assert_eq!(a.to_bytes().unwrap(), vec![0u8; 4 * dtype.size()]);
    }
    let s = Array::scalar(&ctx, 42i64).unwrap();
    assert_eq!(s.shape().unwrap(), Vec::<i64>::new());
    assert_eq!(s.to_vec::<i64>().unwrap(), [42]);
    let empty = Array::from_slice::<f32>(&ctx, &[3, 0], &[]).unwrap();
    assert!(empty.info().unwrap().is_empty());
    assert_eq!(empty.to_vec::<f32>().unwrap(), Vec::<f32>::new());
}

#[test]
fn elementwise_ops_broadcast_exactly() {
    let ctx = context();
    let a = floats(&ctx, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let row = floats(&ctx, &[3], &[10.0, 20.0, 30.0]);
    let run = |name: &str, inputs: &[&Array]| ctx.op(name, inputs, "").unwrap().to_vec::<f32>().unwrap();
    assert_eq!(run("add", &[&a, &row]), [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    assert_eq!(run("sub", &[&a, &row]), [-9.0, -18.0, -27.0, -6.0, -15.0, -24.0]);
    assert_eq!(run("mul", &[&a, &row]), [10.0, 40.0, 90.0, 40.0, 100.0, 180.0]);
    assert_eq!(run("div", &[&row, &a]), [10.0, 10.0, 10.0, 2.5, 4.0, 5.0]);
    assert_eq!(run("maximum", &[&a, &floats(&ctx, &[], &[3.5])]), [3.5, 3.5, 3.5, 4.0, 5.0, 6.0]);
    assert_eq!(run("neg", &[&a]), [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]);
    assert_eq!(run("sqrt", &[&floats(&ctx, &[3], &[4.0, 9.0, 0.25])]), [2.0, 3.0, 0.5]);
    assert_eq!(run("relu", &[&floats(&ctx, &[3], &[-1.0, 0.0, 2.0])]), [0.0, 0.0, 2.0]);
}

#[test]
fn matmul_reductions_and_layout() {
    let ctx = context();
    let a = floats(&ctx, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = floats(&ctx, &[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let product = ctx.op("matmul", &[&a, &b], "").unwrap();
    assert_eq!(product.shape().unwrap(), [2, 2]);
    assert_eq!(product.to_vec::<f32>().unwrap(), [58.0, 64.0, 139.0, 154.0]);
    let gram = ctx.op("matmul", &[&a, &a], r#"{"transpose_b": true}"#).unwrap();
    assert_eq!(gram.to_vec::<f32>().unwrap(), [14.0, 32.0, 32.0, 77.0]);

    let row_sums = ctx.op("sum", &[&a], r#"{"axes": [1]}"#).unwrap();
    assert_eq!(row_sums.to_vec::<f32>().unwrap(), [6.0, 15.0]);
    let mean = ctx.op("mean", &[&a], r#"{"axes": [0], "keepdims": true}"#).unwrap();
    assert_eq!(mean.shape().unwrap(), [1, 3]);
    assert_eq!(mean.to_vec::<f32>().unwrap(), [2.5, 3.5, 4.5]);
    let argmax = ctx.op("argmax", &[&b], r#"{"axis": 0}"#).unwrap();
    assert_eq!(argmax.to_vec::<i64>().unwrap(), [2, 2]);

    let t = ctx.op("transpose", &[&a], "").unwrap();
    assert_eq!(t.shape().unwrap(), [3, 2]);
    assert_eq!(t.to_vec::<f32>().unwrap(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let r = ctx.op("reshape", &[&a], r#"{"shape": [3, -1]}"#).unwrap();
    assert_eq!(r.shape().unwrap(), [3, 2]);
    assert_eq!(r.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn softmax_of_equal_logits_is_uniform() {
    let ctx = context();
    let logits = floats(&ctx, &[2, 4], &[3.0; 8]);
    let p = ctx.op("softmax", &[&logits], r#"{"axis": -1}"#).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(p, [0.25; 8]);
}

#[test]
fn casts_between_dtypes_are_exact() {
    let ctx = context();
    let a = floats(&ctx, &[4], &[1.5, -2.75, 3.0, 0.0]);
    let cast = |to: DType| ctx.op("cast", &[&a], &format!(r#"{{"dtype": "{to}"}}"#)).unwrap();
    assert_eq!(cast(DType::F64).to_vec::<f64>().unwrap(), [1.5, -2.75, 3.0, 0.0]);
    assert_eq!(cast(DType::I32).to_vec::<i32>().unwrap(), [1, -2, 3, 0]); // truncates toward zero
    assert_eq!(cast(DType::I64).to_vec::<i64>().unwrap(), [1, -2, 3, 0]);
    assert_eq!(cast(DType::Bool).to_vec::<bool>().unwrap(), [true, true, true, false]);
    // 16-bit floats: the values are representable, so arithmetic on them stays exact.
    let half = cast(DType::F16);
    let doubled = ctx.op("add", &[&half, &half], "").unwrap();
    let values: Vec<f32> = doubled.to_vec::<F16>().unwrap().into_iter().map(f32::from).collect();
    assert_eq!(values, [3.0, -5.5, 6.0, 0.0]);
    let brain = cast(DType::BF16);
    let product = ctx.op("mul", &[&brain, &brain], "").unwrap();
    let values: Vec<f32> = product.to_vec::<BF16>().unwrap().into_iter().map(f32::from).collect();
    assert_eq!(values, [2.25, 7.5625, 9.0, 0.0]);
    let bytes = ctx.op("cast", &[&floats(&ctx, &[2], &[200.0, 7.9])], r#"{"dtype": "u8"}"#).unwrap();
    assert_eq!(bytes.to_vec::<u8>().unwrap(), [200, 7]);
}

#[test]
fn integer_math_is_exact() {
    let ctx = context();
    let a = Array::from_slice(&ctx, &[3], &[i64::MAX - 1, -5, 1 << 40]).unwrap();
    let one = Array::scalar(&ctx, 1i64).unwrap();
    let sum = ctx.op("add", &[&a, &one], "").unwrap();
    assert_eq!(sum.to_vec::<i64>().unwrap(), [i64::MAX, -4, (1 << 40) + 1]);
    let ints = Array::from_slice(&ctx, &[2, 2], &[1i32, -2, 3, -4]).unwrap();
    assert_eq!(ctx.op("abs", &[&ints], "").unwrap().to_vec::<i32>().unwrap(), [1, 2, 3, 4]);
    assert_eq!(ctx.op("sum", &[&ints], "").unwrap().to_vec::<i32>().unwrap(), [-2]);
}

#[test]
fn creation_ops_fill_and_repeat_with_a_seed() {
    let ctx = context();
    let filled = ctx.op("fill", &[], r#"{"shape": [2, 2], "value": 7, "dtype": "i32"}"#).unwrap();
    assert_eq!(filled.to_vec::<i32>().unwrap(), [7; 4]);
    let draw = || ctx.op("random_uniform", &[], r#"{"shape": [64], "seed": 9, "low": -1, "high": 1}"#).unwrap();
    let first = draw().to_vec::<f32>().unwrap();
    assert_eq!(first, draw().to_vec::<f32>().unwrap());
    assert!(first.iter().all(|&v| (-1.0..1.0).contains(&v)));
    assert!(first.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn reading_as_the_wrong_type_is_refused() {
    let ctx = context();
    let ints = Array::from_slice(&ctx, &[2], &[1i32, 2]).unwrap();
    let e = ints.to_vec::<f32>().unwrap_err();
    assert_eq!(e.status(), Status::Dtype);
    assert!(e.message().contains("i32"), "{e}");
}
