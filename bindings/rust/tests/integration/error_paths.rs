//! (4) Error paths: the status and the message of failing calls, from many threads at once, each
//! thread seeing its own message.

use std::path::Path;

use nnrt::{Array, Context, Dataset, Model, Status, Trainer};

use crate::common::{BLOB_MODEL, blob_dataset, blobs, context, temp_path};

/// Asserts a call failed with `status` and a message containing every one of `parts`.
#[track_caller]
fn assert_fails<T: std::fmt::Debug>(result: nnrt::Result<T>, status: Status, parts: &[&str]) {
    let e = result.expect_err("the call should fail");
    assert_eq!(e.status(), status, "{e}");
    for part in parts {
        assert!(e.message().contains(part), "message {:?} lacks {part:?}", e.message());
    }
    assert!(e.to_string().starts_with(status.name()), "{e}");
}

#[test]
fn many_threads_get_their_own_errors() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 40;
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (ctx, model) = (&ctx, &model);
            scope.spawn(move || {
                let a = Array::zeros(ctx, nnrt::DType::F32, &[t as i64 + 2]).unwrap();
                let b = Array::zeros(ctx, nnrt::DType::F32, &[t as i64 + 20]).unwrap();
                for round in 0..ROUNDS {
                    // Each failure names something only this thread and round use, so a message
                    // read from another thread's failure would show.
                    let op = format!("no_such_op_{t}_{round}");
                    assert_fails(ctx.op(&op, &[&a], ""), Status::Unsupported, &[&op]);
                    let shapes = [format!("[{}]", t + 2), format!("[{}]", t + 20)];
                    assert_fails(ctx.op("add", &[&a, &b], ""), Status::Shape, &[&shapes[0], &shapes[1]]);
                    let key = format!("key_{t}_{round}");
                    assert_fails(
                        Context::with_options(&format!(r#"{{"{key}": 1}}"#)),
                        Status::InvalidArgument,
                        &[&key],
                    );
                    let param = format!("layer{t}_{round}.weight");
                    assert_fails(model.param(&param), Status::InvalidArgument, &[&param, "layer0.weight"]);
                    let file = format!("/nonexistent/model_{t}_{round}.safetensors");
                    assert_fails(Model::load(ctx, &file), Status::Io, &[&file]);
                    // A success in between leaves this thread's message alone.
                    ctx.op("add", &[&a, &a], "").unwrap();
                    assert!(nnrt::last_error_message().contains(&file));
                }
            });
        }
    });
}

#[test]
fn bad_configs_name_the_key() {
    let ctx = context();
    assert_fails(Context::with_options("{not json"), Status::InvalidArgument, &[]);
    assert_fails(
        Context::with_options(r#"{"backend": "no_such_backend"}"#),
        Status::InvalidArgument,
        &["no_such_backend"],
    );
    assert_fails(Context::with_options(r#"{"threads": "many"}"#), Status::InvalidArgument, &["threads"]);
    assert_fails(
        Model::new(&ctx, r#"{"input": [2], "layers": [{"type": "dense", "units": 4, "colour": "red"}]}"#),
        Status::InvalidArgument,
        &["colour"],
    );
    assert_fails(
        Model::new(&ctx, r#"{"input": [2], "layers": [{"type": "warp_drive"}]}"#),
        Status::InvalidArgument,
        &["warp_drive"],
    );
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    assert_fails(
        Trainer::new(&model, r#"{"optimizer": {"type": "sgd", "learning_rate": -1}}"#),
        Status::InvalidArgument,
        &[],
    );
    assert_fails(Trainer::new(&model, r#"{"workers": 0}"#), Status::InvalidArgument, &["workers"]);
    assert_fails(Trainer::new(&model, r#"{"mode": "averag"}"#), Status::InvalidArgument, &["averag"]);
    let parallel = Trainer::new(&model, r#"{"workers": 2, "mode": "average"}"#).unwrap();
    assert_eq!(parallel.rank().unwrap(), (0, 1));
    assert_fails(Trainer::new(&model, r#"{"batch_sise": 2}"#), Status::InvalidArgument, &["batch_sise"]);
    assert_fails(
        ctx.op("sum", &[&Array::scalar(&ctx, 1.0f32).unwrap()], r#"{"axes": "all"}"#),
        Status::InvalidArgument,
        &["axes"],
    );
}

#[test]
fn strings_with_nul_bytes_are_refused_before_the_call() {
    let ctx = context();
    assert_fails(Model::new(&ctx, "{\0}"), Status::InvalidArgument, &["NUL"]);
    assert_fails(ctx.op("a\0dd", &[], ""), Status::InvalidArgument, &["NUL"]);
    assert_fails(Model::load(&ctx, "bad\0path"), Status::InvalidArgument, &["NUL"]);
}

#[test]
fn arrays_refuse_bad_shapes_and_sizes() {
    let ctx = context();
    assert_fails(Array::from_slice(&ctx, &[2, 2], &[1.0f32, 2.0, 3.0]), Status::InvalidArgument, &["12", "16"]);
    assert_fails(Array::zeros(&ctx, nnrt::DType::F32, &[1; 9]), Status::InvalidArgument, &[]);
    assert_fails(Array::zeros(&ctx, nnrt::DType::F32, &[-1]), Status::InvalidArgument, &[]);
    assert_fails(Array::from_bytes(&ctx, nnrt::DType::Bool, &[1], &[2]), Status::InvalidArgument, &[]);
    let a = Array::from_slice(&ctx, &[2, 3], &[0.0f32; 6]).unwrap();
    assert_fails(ctx.op("matmul", &[&a, &a], ""), Status::Shape, &["[2, 3]"]);
    assert_fails(ctx.op("add", &[&a], ""), Status::InvalidArgument, &["2 input"]);
    let ints = Array::from_slice(&ctx, &[1], &[1i32]).unwrap();
    assert_fails(ctx.op("exp", &[&ints], ""), Status::Dtype, &["i32"]);
}

#[test]
fn models_and_trainers_refuse_data_that_does_not_fit() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let wrong = Array::zeros(&ctx, nnrt::DType::F32, &[4, 3]).unwrap();
    assert_fails(model.predict(&wrong), Status::Shape, &["[4, 3]"]);
    let weight = model.param("layer0.weight").unwrap();
    assert_eq!(weight.shape().unwrap(), [16, 2]);
    assert_fails(model.set_param("layer0.weight", &wrong), Status::Shape, &["[16, 2]", "[4, 3]"]);
    let ints = Array::zeros(&ctx, nnrt::DType::I32, &[16, 2]).unwrap();
    assert_fails(model.set_param("layer0.weight", &ints), Status::Dtype, &[]);

    let mut trainer = Trainer::new(&model, "").unwrap();
    let (x, _) = blobs(&ctx, 8, 1);
    let out_of_range = Array::from_slice(&ctx, &[8], &[9i64; 8]).unwrap();
    assert_fails(trainer.step(&x, &out_of_range), Status::InvalidArgument, &[]);
    assert_fails(trainer.step(&wrong, &out_of_range), Status::Shape, &[]);
    let train = blob_dataset(&ctx, 16, 1);
    assert_fails(trainer.fit(&train, None, -1), Status::InvalidArgument, &[]);
    let no_loss = Model::new(&ctx, r#"{"input": [2], "layers": [{"type": "dense", "units": 2}]}"#).unwrap();
    assert_fails(Trainer::new(&no_loss, ""), Status::InvalidArgument, &[]);
}

#[test]
fn datasets_report_missing_and_malformed_files() {
    let ctx = context();
    assert_fails(
        Dataset::load_idx(&ctx, "/nonexistent/images.gz", "/nonexistent/labels.gz", None),
        Status::Io,
        &["/nonexistent/images.gz"],
    );
    let csv = temp_path("bad.csv");
    std::fs::write(&csv, "0,1.0,2.0\n1,3.0\n").unwrap();
    let spec = format!(r#"{{"format": "csv", "path": {}}}"#, nnrt::json::quote(csv.to_str().unwrap()));
    assert_fails(Dataset::load(&ctx, &spec), Status::Corrupt, &[csv.to_str().unwrap()]);
    assert_fails(Dataset::load(&ctx, r#"{"format": "parquet"}"#), Status::InvalidArgument, &["parquet"]);
    let data = blob_dataset(&ctx, 8, 1);
    assert_fails(data.examples(&ctx, 4, 10), Status::InvalidArgument, &[]);
    let (x, _) = blobs(&ctx, 8, 1);
    let short = Array::from_slice(&ctx, &[3], &[0i64, 1, 2]).unwrap();
    assert_fails(Dataset::from_arrays(&ctx, &x, &short), Status::Shape, &[]);
    assert!(!Path::new("/nonexistent").exists());
}
