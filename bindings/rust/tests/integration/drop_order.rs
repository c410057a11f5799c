//! Dropping objects in any order is safe: each keeps alive what it depends on inside the library.

use std::ops::ControlFlow;

use nnrt::{Array, Context, Dataset, Model, Trainer};

use crate::common::{BLOB_MODEL, blob_dataset, blobs, context};

#[test]
fn arrays_outlive_their_context() {
    let ctx = context();
    let a = Array::from_slice(&ctx, &[3], &[1.0f32, 2.0, 3.0]).unwrap();
    drop(ctx);
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    // And take part in ops on another context of the same backend.
    let other = context();
    assert_eq!(other.op("add", &[&a, &a], "").unwrap().to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0]);
}

#[test]
fn a_trainer_outlives_its_model_and_context() {
    let ctx = context();
    let data = blob_dataset(&ctx, 64, 1);
    let (x, y) = blobs(&ctx, 16, 2);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, "").unwrap();
    trainer.set_progress(|_| ControlFlow::Continue(())).unwrap();
    drop(model);
    drop(ctx);
    trainer.fit(&data, None, 1).unwrap();
    trainer.step(&x, &y).unwrap();
    drop(data);
    drop(x);
    trainer.result().unwrap();
}

#[test]
fn a_dataset_and_an_evaluation_outlive_the_rest() {
    let ctx = context();
    let (x, y) = blobs(&ctx, 16, 3);
    let data = Dataset::from_arrays(&ctx, &x, &y).unwrap();
    drop((x, y));
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let evaluation = model.evaluate(&data).unwrap();
    drop(model);
    drop(ctx);
    assert_eq!(data.len().unwrap(), 16);
    let other = context();
    let (features, labels) = data.examples(&other, 0, 4).unwrap();
    assert_eq!(features.shape().unwrap(), [4, 2]);
    assert_eq!(labels.to_vec::<i64>().unwrap(), [0, 1, 2, 3]);
    assert!(evaluation.accuracy().unwrap().is_some());
}

#[test]
fn a_cancel_handle_outlives_its_trainer() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, "").unwrap();
    trainer.set_progress(|_| ControlFlow::Continue(())).unwrap();
    let cancel = trainer.cancel_handle();
    let also = cancel.clone();
    drop(trainer);
    drop(model);
    drop(ctx);
    cancel.cancel().unwrap();
    drop(cancel);
    also.cancel().unwrap();
}

#[test]
fn everything_dropped_in_creation_order() {
    // The reverse of the usual order: the context first, the last-made object last.
    let ctx = Context::new().unwrap();
    let (x, y) = blobs(&ctx, 32, 4);
    let data = Dataset::from_arrays(&ctx, &x, &y).unwrap();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, "").unwrap();
    trainer.fit(&data, None, 1).unwrap();
    let evaluation = model.evaluate(&data).unwrap();
    let prediction = model.predict(&x).unwrap();
    drop(ctx);
    drop(x);
    drop(y);
    drop(data);
    drop(model);
    drop(trainer);
    drop(evaluation);
    assert_eq!(prediction.shape().unwrap(), [32, 4]);
}
