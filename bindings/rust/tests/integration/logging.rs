//! nnrt's log messages reach a Rust closure, from whatever thread logs them.

use std::sync::{Arc, Mutex};

use nnrt::{LogLevel, Model, Trainer};

use crate::common::{BLOB_MODEL, blob_dataset, context};

#[test]
fn log_messages_reach_the_callback() {
    let seen: Arc<Mutex<Vec<(LogLevel, String)>>> = Arc::default();
    let sink = Arc::clone(&seen);
    nnrt::set_log_callback(LogLevel::Info, move |level, message| {
        sink.lock().unwrap().push((level, message.to_string()));
    });
    // A finished epoch is logged at level info.
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    Trainer::new(&model, "").unwrap().fit(&blob_dataset(&ctx, 32, 1), None, 1).unwrap();
    nnrt::reset_log_callback(LogLevel::Warn);

    let seen = seen.lock().unwrap();
    assert!(seen.iter().any(|(level, message)| *level == LogLevel::Info && message.contains("epoch")), "{seen:?}");
    assert!(seen.iter().all(|(level, _)| *level >= LogLevel::Info), "{seen:?}");
}
