//! Thread safety as the C API states it: contexts and models shared, arrays, datasets and
//! evaluations read from many threads, a trainer moved to (and trained on) another thread while the
//! model keeps predicting.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

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
    send_and_sync::<Dataset>();
    send_and_sync::<Evaluation>();
    send::<Trainer>();
    send::<nnrt::Error>();
    // (That Trainer is not Sync is checked by a compile_fail example in the crate docs.)
}

#[test]
fn one_dataset_feeds_trainers_and_evaluations_on_many_threads() {
    let ctx = context();
    let data = blob_dataset(&ctx, 512, 3);
    let evaluations: Vec<Evaluation> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|k| {
                let (ctx, data) = (&ctx, &data);
                scope.spawn(move || {
                    let model = Model::new(ctx, BLOB_MODEL).unwrap();
                    let options = format!(r#"{{"optimizer": {{"type": "adam", "learning_rate": 0.01}}, "batch_size": 32, "seed": {k}}}"#);
                    let mut trainer = Trainer::new(&model, &options).unwrap();
                    trainer.fit(data, None, 4).unwrap();
                    assert_eq!(data.len().unwrap(), 512);
                    model.evaluate(data).unwrap()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    // The blobs are separable: every model, trained on the shared dataset, learned them.
    let first = &evaluations[0];
    std::thread::scope(|scope| {
        for e in &evaluations {
            scope.spawn(move || assert!(e.accuracy().unwrap().unwrap() > 0.9, "{}", e.report().unwrap()));
            scope.spawn(move || assert!(first.report().unwrap().contains("confusion")));
        }
    });
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
    let (x, _) = blobs(&ctx, 64, 2);
    let x = Arc::new(x);
    let predict = |model: &Model, x: &Array| model.predict(x).unwrap().to_vec::<f32>().unwrap();
    // Every state the weights pass through, predicted on one thread at a time: before training, and
    // after each minibatch from the progress callback, which runs between steps on the training thread.
    let states = Arc::new(Mutex::new(vec![predict(&model, &x)]));
    {
        let (model, x, states) = (Arc::clone(&model), Arc::clone(&x), Arc::clone(&states));
        trainer
            .set_progress(move |_| {
                states.lock().unwrap().push(predict(&model, &x));
                ControlFlow::Continue(())
            })
            .unwrap();
    }
    // The trainer and its dataset move to a training thread.
    let training = std::thread::spawn(move || {
        trainer.fit(&data, None, 3).unwrap();
        trainer
    });
    // Predictions spread over the training (a pause between them leaves the trainer room).
    let seen: Vec<Vec<f32>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..25)
                        .map(|_| {
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            predict(&model, &x)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    let trainer = training.join().unwrap();
    assert!(trainer.result().unwrap().contains("completed"));
    let states = states.lock().unwrap();
    assert!(states.len() > 3 * 16, "{} states recorded", states.len());
    assert_ne!(states.first(), states.last(), "training changed nothing");
    // Each prediction made during training is one of those states, exactly: no torn weights.
    for p in &seen {
        assert!(states.iter().any(|s| s == p), "a prediction during training matches no state of the weights: {p:?}");
    }
}
