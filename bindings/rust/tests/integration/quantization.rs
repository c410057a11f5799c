//! (12) int8 quantization: `Model::quantize` and I8 arrays (`i8` elements).

use nnrt::{Array, Context, DType, Dataset, Model, Status, Trainer};

use crate::common::{Rng, context, temp_path};

/// 1x8x8 images: a convolution, then two dense layers.
const CNN: &str = r#"{"input": [1, 8, 8], "seed": 11, "layers": [
  {"type": "conv2d", "name": "c1", "filters": 4, "kernel": 3, "padding": "same", "activation": "relu"},
  {"type": "flatten"},
  {"type": "dense", "name": "d1", "units": 16, "activation": "relu"},
  {"type": "output", "name": "out", "units": 3, "activation": "softmax", "loss": "nll"}]}"#;

const IMAGES: usize = 64;

/// `IMAGES` random images in [0, 1) as F32 [64, 1, 8, 8], and a calibration dataset made of them
/// (labels all 0: quantization does not read them).
fn images(ctx: &Context) -> (Array, Dataset) {
    let mut rng = Rng::new(17);
    let pixels: Vec<f32> = (0..IMAGES * 64).map(|_| (rng.symmetric() + 1.0) / 2.0).collect();
    let x = Array::from_slice(ctx, &[IMAGES as i64, 1, 8, 8], &pixels).unwrap();
    let y = Array::from_slice(ctx, &[IMAGES as i64], &[0i64; IMAGES]).unwrap();
    let data = Dataset::from_arrays(ctx, &x, &y).unwrap();
    (x, data)
}

fn predict(model: &Model, x: &Array) -> Vec<f32> {
    model.predict(x).unwrap().to_vec::<f32>().unwrap()
}

fn weights(model: &Model, name: &str) -> Vec<f32> {
    model.param(name).unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn a_quantized_model_predicts_like_the_float_one() {
    let ctx = context();
    let (x, calibration) = images(&ctx);
    let model = Model::new(&ctx, CNN).unwrap();
    let quantized = model.quantize(&calibration, r#"{"batches": 0, "batch_size": 16}"#).unwrap();
    let (float, int8) = (predict(&model, &x), predict(&quantized, &x));
    let worst = float.iter().zip(&int8).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst < 0.05, "largest probability difference {worst}");
    // 7-bit weights by default: integers within [-63, 63] (given as F32), a positive scale each.
    for name in ["c1.weight", "d1.weight"] {
        let w = weights(&quantized, name);
        assert_eq!(w.len(), weights(&model, name).len());
        assert!(w.iter().all(|v| v.fract() == 0.0 && v.abs() <= 63.0), "{name}: {w:?}");
    }
    assert!(weights(&quantized, "d1.weight_scale").iter().all(|s| *s > 0.0));
    // The float model keeps its own weights.
    assert!(weights(&model, "d1.weight").iter().any(|v| v.fract() != 0.0));
}

#[test]
fn a_quantized_model_is_refused_training_export_and_quantizing_again() {
    let ctx = context();
    let (_, calibration) = images(&ctx);
    let quantized = Model::new(&ctx, CNN).unwrap().quantize(&calibration, "").unwrap();
    let e = Trainer::new(&quantized, r#"{"optimizer": {"type": "sgd"}}"#).expect_err("a trainer of a quantized model");
    assert_eq!(e.status(), Status::Unsupported, "{e}");
    assert!(e.message().contains("quantized"), "{e}");
    let e = quantized.export_onnx(temp_path("quantized.onnx")).expect_err("an ONNX export");
    assert_eq!(e.status(), Status::Unsupported, "{e}");
    let e = quantized.quantize(&calibration, "").expect_err("quantizing twice");
    assert_eq!(e.status(), Status::Unsupported, "{e}");
    assert!(e.message().contains("already quantized"), "{e}");
}

#[test]
fn quantize_options_and_bad_ones() {
    let ctx = context();
    let (x, calibration) = images(&ctx);
    let model = Model::new(&ctx, CNN).unwrap();
    let eight = model.quantize(&calibration, r#"{"weight_bits": 8, "batches": 0}"#).unwrap();
    let w = weights(&eight, "d1.weight");
    let top = w.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(w.iter().all(|v| v.fract() == 0.0) && top > 63.0 && top <= 127.0, "largest 8-bit weight {top}");
    let worst = predict(&model, &x).iter().zip(predict(&eight, &x)).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst < 0.05, "largest probability difference {worst}");
    let kept = model.quantize(&calibration, r#"{"exclude": ["c1"]}"#).unwrap();
    assert_eq!(weights(&kept, "c1.weight"), weights(&model, "c1.weight"));
    for (options, part) in [(r#"{"bits": 8}"#, "bits"), (r#"{"exclude": ["nope"]}"#, "nope")] {
        let e = model.quantize(&calibration, options).expect_err(options);
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.message().contains(part), "{e}");
    }
    let small = Array::zeros(&ctx, DType::F32, &[4, 1, 6, 6]).unwrap();
    let labels = Array::zeros(&ctx, DType::I64, &[4]).unwrap();
    let wrong = Dataset::from_arrays(&ctx, &small, &labels).unwrap();
    assert_eq!(model.quantize(&wrong, "").expect_err("6x6 images").status(), Status::Shape);
}

#[test]
fn quantized_weights_are_set_as_i8_and_the_model_saves_and_shares() {
    let ctx = context();
    let (x, calibration) = images(&ctx);
    let quantized = Model::new(&ctx, CNN).unwrap().quantize(&calibration, "").unwrap();
    let shape = quantized.param("d1.weight").unwrap().shape().unwrap();
    let mut rng = Rng::new(5);
    let mut w: Vec<i8> = (0..shape.iter().product::<i64>()).map(|_| (rng.symmetric() * 63.0) as i8).collect();
    quantized.set_param("d1.weight", &Array::from_slice(&ctx, &shape, &w).unwrap()).unwrap();
    assert_eq!(weights(&quantized, "d1.weight"), w.iter().map(|&v| f32::from(v)).collect::<Vec<_>>());
    let floats: Vec<f32> = w.iter().map(|&v| f32::from(v)).collect();
    let e = quantized.set_param("d1.weight", &Array::from_slice(&ctx, &shape, &floats).unwrap()).unwrap_err();
    assert_eq!(e.status(), Status::Dtype, "{e}");
    w[0] = 64;
    let e = quantized.set_param("d1.weight", &Array::from_slice(&ctx, &shape, &w).unwrap()).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument, "{e}");

    let want = predict(&quantized, &x);
    let path = temp_path("quantized.safetensors");
    quantized.save(&path).unwrap();
    assert_eq!(predict(&Model::load(&ctx, &path).unwrap(), &x), want);
    assert_eq!(predict(&quantized.share().unwrap(), &x), want);
}

#[test]
fn i8_arrays_round_trip() {
    let ctx = context();
    let data = [-128i8, -63, -1, 0, 63, 127];
    let a = Array::from_slice(&ctx, &[2, 3], &data).unwrap();
    assert_eq!(a.dtype().unwrap(), DType::I8);
    assert_eq!((DType::I8.size(), DType::I8.name(), DType::from_raw(9)), (1, "i8", Some(DType::I8)));
    assert_eq!(a.nbytes().unwrap(), 6);
    assert_eq!(a.to_vec::<i8>().unwrap(), data);
    assert_eq!(a.to_vec::<u8>().unwrap_err().status(), Status::Dtype); // same size, another dtype
    assert_eq!(Array::scalar(&ctx, -5i8).unwrap().to_vec::<i8>().unwrap(), [-5]);
}
