//! (11) Predictions into Rust memory (`predict_into`, lent to nnrt without a copy) and run options:
//! cancelling a call, from this thread or another, timeouts and the abort callback.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nnrt::{Array, Model, RunOptions, Status};

use crate::common::{BLOB_MODEL, Rng, blob_dataset, context, temp_path};

/// `n` examples of the blob model's two features, as plain Rust values.
fn features(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..2 * n).map(|_| 2.0 * rng.symmetric()).collect()
}

fn predict_copying(model: &Model, input: &[f32], shape: &[i64]) -> Vec<f32> {
    let ctx = context();
    let x = Array::from_slice(&ctx, shape, input).unwrap();
    model.predict(&x).unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn run_options_may_be_shared_between_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<RunOptions>();
}

#[test]
fn the_output_shape_is_the_batch_and_the_output_layer() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    assert_eq!(model.output_shape(5).unwrap(), [5, 4]);
    assert_eq!(model.output_shape(0).unwrap(), [0, 4]);
    assert_eq!(model.output_shape(-1).unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn predict_into_gives_the_numbers_predict_gives() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let input = features(16, 1);
    let mut output = vec![f32::NAN; 16 * 4];
    model.predict_into(&input, &[16, 2], &mut output).unwrap();
    assert_eq!(output, predict_copying(&model, &input, &[16, 2]));
    // Probabilities: each row sums to 1.
    for row in output.chunks(4) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{row:?}");
    }
    // Another element type: nnrt converts the input, read in place all the same.
    let as_f64: Vec<f64> = input.iter().map(|&v| f64::from(v)).collect();
    let mut from_f64 = vec![0.0f32; 16 * 4];
    model.predict_into(&as_f64, &[16, 2], &mut from_f64).unwrap();
    assert!(from_f64.iter().zip(&output).all(|(a, b)| (a - b).abs() < 1e-6), "{from_f64:?} vs {output:?}");
}

#[test]
fn predict_into_reads_the_input_where_it_lies_on_every_call() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut input = features(8, 2);
    let mut output = vec![0.0f32; 8 * 4];
    model.predict_into(&input, &[8, 2], &mut output).unwrap();
    let first = output.clone();
    // Change the same slice in place and predict into the same output again.
    for v in input.iter_mut() {
        *v = -*v + 0.25;
    }
    model.predict_into(&input, &[8, 2], &mut output).unwrap();
    assert_ne!(output, first, "the second prediction did not see the changed input");
    assert_eq!(output, predict_copying(&model, &input, &[8, 2]));
    // Many rounds on one pair of buffers (the lent memory is given back after every call).
    for round in 0..50 {
        input[round % 16] += 0.01;
        model.predict_into(&input, &[8, 2], &mut output).unwrap();
    }
    assert_eq!(output, predict_copying(&model, &input, &[8, 2]));
}

#[test]
fn predict_into_checks_the_slices_against_the_shapes() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let input = features(4, 3);
    let mut output = vec![0.0f32; 4 * 4];
    let e = model.predict_into(&input, &[4, 2], &mut output[..15]).unwrap_err();
    assert_eq!(e.status(), Status::Shape, "{e}");
    let mut longer = vec![0.0f32; 17];
    assert_eq!(model.predict_into(&input, &[4, 2], &mut longer).unwrap_err().status(), Status::Shape);
    let e = model.predict_into(&input[..7], &[4, 2], &mut output).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument, "{e}");
    // A shape the model does not take: nnrt's own message.
    let mut three = vec![0.0f32; 4 * 4];
    let e = model.predict_into(&features(6, 3)[..12], &[4, 3], &mut three).unwrap_err();
    assert_eq!(e.status(), Status::Shape, "{e}");
    assert_eq!(model.predict_into::<f32>(&[], &[], &mut []).unwrap_err().status(), Status::Shape);
    // The model still predicts after the refusals.
    model.predict_into(&input, &[4, 2], &mut output).unwrap();
    assert_eq!(output, predict_copying(&model, &input, &[4, 2]));
}

#[test]
fn a_model_outlives_its_context_and_still_predicts_into_rust_memory() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    drop(ctx);
    let input = features(3, 4);
    let mut output = vec![0.0f32; 12];
    model.predict_into(&input, &[3, 2], &mut output).unwrap();
    assert_eq!(output, predict_copying(&model, &input, &[3, 2]));
}

#[test]
fn cancelled_options_stop_every_call_until_reset() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let input = features(4, 5);
    let x = Array::from_slice(&ctx, &[4, 2], &input).unwrap();
    let data = blob_dataset(&ctx, 64, 1);
    let saved = temp_path("run_options.safetensors");
    model.save(&saved).unwrap();
    let onnx = temp_path("run_options.onnx");
    model.export_onnx(&onnx).unwrap();
    let mut output = vec![0.0f32; 16];

    let options = RunOptions::new().unwrap();
    options.cancel().unwrap();
    let e = model.predict_with(&x, &options).unwrap_err();
    assert_eq!(e.status(), Status::Cancelled, "{e}");
    let e = model.predict_into_with(&input, &[4, 2], &mut output, &options).unwrap_err();
    assert_eq!(e.status(), Status::Cancelled, "{e}");
    assert_eq!(model.evaluate_with(&data, &options).unwrap_err().status(), Status::Cancelled);
    assert_eq!(Model::load_with(&ctx, &saved, &options).unwrap_err().status(), Status::Cancelled);
    let e = Model::import_onnx_with(&ctx, &onnx, "", &options).unwrap_err();
    assert_eq!(e.status(), Status::Cancelled, "{e}");
    // The model is usable at once, without the options and with others.
    let want = model.predict(&x).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(model.predict_with(&x, &RunOptions::new().unwrap()).unwrap().to_vec::<f32>().unwrap(), want);

    options.reset().unwrap();
    assert_eq!(model.predict_with(&x, &options).unwrap().to_vec::<f32>().unwrap(), want);
    model.predict_into_with(&input, &[4, 2], &mut output, &options).unwrap();
    assert_eq!(output, want);
    assert!(model.evaluate_with(&data, &options).unwrap().accuracy().unwrap().is_some());
    let loaded = Model::load_with(&ctx, &saved, &options).unwrap();
    assert_eq!(loaded.predict(&x).unwrap().to_vec::<f32>().unwrap(), want);
    let imported = Model::import_onnx_with(&ctx, &onnx, "", &options).unwrap();
    let got = imported.predict(&x).unwrap().to_vec::<f32>().unwrap();
    assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6), "{got:?} vs {want:?}");
}

#[test]
fn a_tiny_timeout_is_deadline_exceeded() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let input = features(4, 6);
    let x = Array::from_slice(&ctx, &[4, 2], &input).unwrap();
    let mut output = vec![0.0f32; 16];
    let options = RunOptions::new().unwrap();
    options.set_timeout(Some(Duration::from_nanos(1))).unwrap();
    let e = model.predict_with(&x, &options).unwrap_err();
    assert_eq!(e.status(), Status::DeadlineExceeded, "{e}");
    assert_eq!(e.status().name(), "NNRT_ERR_DEADLINE_EXCEEDED");
    let e = model.predict_into_with(&input, &[4, 2], &mut output, &options).unwrap_err();
    assert_eq!(e.status(), Status::DeadlineExceeded, "{e}");
    assert_eq!(
        model.evaluate_with(&blob_dataset(&ctx, 32, 2), &options).unwrap_err().status(),
        Status::DeadlineExceeded
    );
    // A zero duration is no time at all, not "no limit".
    options.set_timeout(Some(Duration::ZERO)).unwrap();
    assert_eq!(model.predict_with(&x, &options).unwrap_err().status(), Status::DeadlineExceeded);
    // A generous limit, then none.
    options.set_timeout(Some(Duration::from_secs(600))).unwrap();
    model.predict_with(&x, &options).unwrap();
    options.set_timeout(None).unwrap();
    model.predict_into_with(&input, &[4, 2], &mut output, &options).unwrap();
    assert_eq!(output, model.predict(&x).unwrap().to_vec::<f32>().unwrap());
}

#[test]
fn cancel_from_another_thread_stops_a_loop_of_predictions() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let options = RunOptions::new().unwrap();
    let (done, status) = std::thread::scope(|scope| {
        let predicting = scope.spawn(|| {
            let mut input = features(32, 7);
            let mut output = vec![0.0f32; 32 * 4];
            let started = Instant::now();
            let mut done = 0usize;
            loop {
                input[done % 64] += 0.001;
                match model.predict_into_with(&input, &[32, 2], &mut output, &options) {
                    Ok(()) => done += 1,
                    Err(e) => return (done, e.status()),
                }
                assert!(started.elapsed() < Duration::from_secs(30), "the cancel never arrived");
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        options.cancel().unwrap();
        predicting.join().unwrap()
    });
    assert_eq!(status, Status::Cancelled);
    assert!(done > 0, "no prediction ran before the cancel");

    // The same with predict_with, the options shared through an Arc, several threads at once.
    options.reset().unwrap();
    let options = Arc::new(options);
    let model = Arc::new(model);
    let threads: Vec<_> = (0..3)
        .map(|k| {
            let (model, options, ctx) = (Arc::clone(&model), Arc::clone(&options), context());
            std::thread::spawn(move || {
                let x = Array::from_slice(&ctx, &[32, 2], &features(32, k)).unwrap();
                let started = Instant::now();
                loop {
                    if let Err(e) = model.predict_with(&x, &options) {
                        return e.status();
                    }
                    assert!(started.elapsed() < Duration::from_secs(30), "the cancel never arrived");
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    options.cancel().unwrap();
    for t in threads {
        assert_eq!(t.join().unwrap(), Status::Cancelled);
    }
}

#[test]
fn the_abort_callback_stops_a_call_and_its_panic_reaches_the_caller() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let x = Array::from_slice(&ctx, &[4, 2], &features(4, 8)).unwrap();
    let mut options = RunOptions::new().unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    {
        let asked = Arc::clone(&asked);
        options.set_abort_callback(move || asked.fetch_add(1, Ordering::SeqCst) >= 1).unwrap();
    }
    // The first check lets the call go on, the second stops it (the model runs several ops).
    assert_eq!(model.predict_with(&x, &options).unwrap_err().status(), Status::Cancelled);
    assert!(asked.load(Ordering::SeqCst) >= 2);

    options.set_abort_callback(|| panic!("abort callback panicked")).unwrap();
    let panic = catch_unwind(AssertUnwindSafe(|| model.predict_with(&x, &options))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"abort callback panicked"));

    options.clear_abort_callback().unwrap();
    model.predict_with(&x, &options).unwrap();
}

#[test]
fn shared_models_predict_alike_and_copy_parameters_on_write() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let input = features(8, 3);
    let before = predict_copying(&model, &input, &[8, 2]);
    let shared = model.share().unwrap();
    let twice = shared.share().unwrap();
    assert_eq!(predict_copying(&shared, &input, &[8, 2]), before);
    assert_eq!(predict_copying(&twice, &input, &[8, 2]), before);
    // Setting a parameter of one copies its parameters first: the others predict as before.
    let bias = Array::from_slice(&ctx, &[4], &[1.0f32, -2.0, 3.0, -4.0]).unwrap();
    shared.set_param("layer1.bias", &bias).unwrap();
    assert_ne!(predict_copying(&shared, &input, &[8, 2]), before);
    assert_eq!(predict_copying(&model, &input, &[8, 2]), before);
    assert_eq!(predict_copying(&twice, &input, &[8, 2]), before);
    drop(model);
    assert_eq!(predict_copying(&twice, &input, &[8, 2]), before);
}
