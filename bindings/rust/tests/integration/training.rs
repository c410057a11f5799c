//! (3) Training a small model on a synthetic task: the loss falls, the accuracy rises; and the
//! ways a fit stops (plan, callback, cancel from another thread, a panicking callback).

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use nnrt::json::Value;
use nnrt::{Model, Progress, Status, Trainer};

use crate::common::{BLOB_MODEL, blob_dataset, blobs, context};

const ADAM: &str = r#"{"optimizer": {"type": "adam", "learning_rate": 0.01}, "batch_size": 32, "seed": 1}"#;

#[test]
fn fit_lowers_the_loss_and_raises_the_accuracy() {
    let ctx = context();
    let train = blob_dataset(&ctx, 512, 1);
    let validation = blob_dataset(&ctx, 256, 2);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let before = model.evaluate(&validation).unwrap().accuracy().unwrap().unwrap();

    let mut trainer = Trainer::new(&model, ADAM).unwrap();
    let reports = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let sink = Arc::clone(&reports);
    trainer
        .set_progress(move |p| {
            sink.lock().unwrap().push(*p);
            ControlFlow::Continue(())
        })
        .unwrap();
    trainer.fit(&train, Some(&validation), 4).unwrap();

    let evaluation = model.evaluate(&validation).unwrap();
    let after = evaluation.accuracy().unwrap().unwrap();
    assert!(before < 0.6 && after > 0.9, "accuracy {before} -> {after}");
    let report = Value::parse(&evaluation.report().unwrap()).unwrap();
    assert_eq!(report["examples"].as_i64(), Some(256));
    assert_eq!(report["classes"].as_i64(), Some(4));

    let result = Value::parse(&trainer.result().unwrap()).unwrap();
    assert_eq!(result["stop_reason"].as_str(), Some("completed"));
    assert_eq!(result["epochs"].as_i64(), Some(4));
    let losses: Vec<f64> =
        result["history"].as_array().unwrap().iter().map(|epoch| epoch["loss"].as_f64().unwrap()).collect();
    assert_eq!(losses.len(), 4);
    assert!(losses[3] < losses[0] * 0.5, "per-epoch losses {losses:?}");

    // 16 minibatches per epoch plus one report at every epoch's end, with the validation score.
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 4 * 17);
    let ends: Vec<&Progress> = reports.iter().filter(|p| p.epoch_end).collect();
    assert_eq!(ends.len(), 4);
    assert!(ends.iter().all(|p| p.validation_score.is_some()));
    assert!(ends[3].validation_score.unwrap() > ends[0].validation_score.unwrap() - 1e-9);
    let last = reports.last().unwrap();
    assert_eq!((last.epoch, last.iteration, last.batches_per_epoch), (3, 64, Some(16)));
    // A CPU backend reports no device load.
    assert!(reports.iter().all(|p| p.device.is_none()));
}

#[test]
fn steps_lower_the_loss_of_a_batch() {
    let ctx = context();
    let (x, y) = blobs(&ctx, 64, 3);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, ADAM).unwrap();
    let losses: Vec<f64> = (0..40).map(|_| trainer.step(&x, &y).unwrap()).collect();
    assert!(losses[39] < losses[0] * 0.5, "{:?}", &losses[..]);
    let probabilities = model.predict(&x).unwrap();
    assert_eq!(probabilities.shape().unwrap(), [64, 4]);
}

#[test]
fn the_callback_stops_training() {
    let ctx = context();
    let train = blob_dataset(&ctx, 256, 4);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, ADAM).unwrap();
    trainer
        .set_progress(|p| if p.iteration >= 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
        .unwrap();
    trainer.fit(&train, None, 100).unwrap();
    let result = Value::parse(&trainer.result().unwrap()).unwrap();
    assert_eq!(result["stop_reason"].as_str(), Some("callback"));
    assert_eq!(result["iterations"].as_i64(), Some(3));

    // Without the callback, fit goes on from where it stopped.
    trainer.clear_progress().unwrap();
    trainer.fit(&train, None, 1).unwrap();
    let result = Value::parse(&trainer.result().unwrap()).unwrap();
    assert_eq!(result["stop_reason"].as_str(), Some("completed"));
}

#[test]
fn cancel_from_another_thread_stops_fit() {
    let ctx = context();
    let train = blob_dataset(&ctx, 256, 5);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, r#"{"batch_size": 8}"#).unwrap();
    let (started, first_batch) = mpsc::channel();
    trainer
        .set_progress(move |_| {
            let _ = started.send(());
            ControlFlow::Continue(())
        })
        .unwrap();
    let cancel = trainer.cancel_handle();
    let canceller = std::thread::spawn(move || {
        first_batch.recv().unwrap();
        cancel.cancel().unwrap();
    });
    let e = trainer.fit(&train, None, 1000).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.status(), Status::Cancelled);
    assert!(e.message().contains("cancel"), "{e}");
    let result = Value::parse(&trainer.result().unwrap()).unwrap();
    assert_eq!(result["stop_reason"].as_str(), Some("cancelled"));
    assert!(result["epochs"].as_i64().unwrap() < 1000);
}

#[test]
fn cancel_before_fit_stops_the_next_fit_at_once() {
    let ctx = context();
    let train = blob_dataset(&ctx, 64, 6);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, "").unwrap();
    trainer.cancel().unwrap();
    assert_eq!(trainer.fit(&train, None, 5).unwrap_err().status(), Status::Cancelled);
}

#[test]
fn a_panicking_callback_stops_fit_and_resumes_on_the_caller() {
    let ctx = context();
    let train = blob_dataset(&ctx, 64, 7);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, ADAM).unwrap();
    trainer
        .set_progress(|p| if p.iteration == 2 { panic!("callback panic at 2") } else { ControlFlow::Continue(()) })
        .unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| trainer.fit(&train, None, 3)));
    let payload = caught.expect_err("the callback's panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"callback panic at 2"));
    // The trainer stopped cleanly and is still usable.
    let result = Value::parse(&trainer.result().unwrap()).unwrap();
    assert_eq!(result["iterations"].as_i64(), Some(2));
    trainer.clear_progress().unwrap();
    trainer.fit(&train, None, 1).unwrap();
}

#[test]
fn regression_reports_no_accuracy() {
    let ctx = context();
    let x = nnrt::Array::from_slice(&ctx, &[4, 1], &[0.0f32, 1.0, 2.0, 3.0]).unwrap();
    let y = nnrt::Array::from_slice(&ctx, &[4, 1], &[1.0f32, 3.0, 5.0, 7.0]).unwrap();
    let data = nnrt::Dataset::from_arrays(&ctx, &x, &y).unwrap();
    let model = Model::new(
        &ctx,
        r#"{"input": [1], "layers": [{"type": "output", "units": 1, "activation": "identity", "loss": "mse"}]}"#,
    )
    .unwrap();
    let evaluation = model.evaluate(&data).unwrap();
    assert_eq!(evaluation.accuracy().unwrap(), None);
    assert!(Value::parse(&evaluation.report().unwrap()).unwrap()["mse"].as_f64().is_some());
}
