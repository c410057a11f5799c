//! Thread safety as the C API states it: contexts and models shared, arrays read from many threads,
//! a trainer moved to (and trained on) another thread while the model keeps predicting.

use std::sync::Arc;

use nnrt::{Array, CancelHandle, Context, Dataset, Evaluation, Model, Trainer};

use crate::common::{BLOB_MODEL, blob_dataset, blobs, context};

fn send_and_sync<T: Send + Sync>() {}
fn send<T: Send>() {}

#[test]
fn the_types_say_what_may_cross_threads() {
    send_and_sync::<Context>();
    send_and_sync::<Model>();
    send_and_sync::<Array>();
    send_and_sync::<CancelHandle>();
    send::<Trainer>();
    send::<Dataset>();
    send::<Evaluation>();
    send::<nnrt::Error>();
    // (That Trainer and Dataset are not Sync is checked by compile_fail examples in the crate docs.)
}

#[test]
fn one_array_is_read_by_many_threads() {
    let ctx = context();
    let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let a = Array::from_slice(&ctx, &[10, 100], &data).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..20 {
                    assert_eq!(a.to_vec::<f32>().unwrap(), data);
                    let doubled = ctx.op("add", &[&a, &a], "").unwrap().to_vec::<f32>().unwrap();
                    assert_eq!(doubled[999], 1998.0);
                }
            });
        }
    });
}

#[test]
fn a_model_predicts_on_many_threads_while_another_trains_it() {
    let ctx = Arc::new(context());
    let model = Arc::new(Model::new(&ctx, BLOB_MODEL).unwrap());
    let mut trainer = Trainer::new(&model, r#"{"optimizer": {"type": "adam"}, "batch_size": 16}"#).unwrap();
    let data = blob_dataset(&ctx, 256, 1);
    // The trainer and its dataset move to a training thread.
    let training = std::thread::spawn(move || {
        trainer.fit(&data, None, 3).unwrap();
        trainer
    });
    let (x, _) = blobs(&ctx, 64, 2);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..10 {
                    let p = model.predict(&x).unwrap().to_vec::<f32>().unwrap();
                    // Each row is a probability distribution, whatever step the trainer is at.
                    for row in p.chunks(4) {
                        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{row:?}");
                    }
                }
            });
        }
    });
    let trainer = training.join().unwrap();
    assert!(trainer.result().unwrap().contains("completed"));
}
