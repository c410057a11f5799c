//! (5) Saving and loading: models, trainer checkpoints, and damaged files.

use nnrt::json::Value;
use nnrt::{Model, Status, Trainer};

use crate::common::{BLOB_MODEL, blob_dataset, blobs, context, deterministic_context, temp_path};

const SGD: &str =
    r#"{"optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.9}, "batch_size": 16, "seed": 3}"#;

#[test]
fn a_saved_model_loads_with_the_same_parameters_and_predictions() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, SGD).unwrap();
    trainer.fit(&blob_dataset(&ctx, 128, 1), None, 1).unwrap();
    let path = temp_path("model.safetensors");
    model.save(&path).unwrap();

    let loaded = Model::load(&ctx, &path).unwrap();
    assert_eq!(loaded.param_count().unwrap(), model.param_count().unwrap());
    assert_eq!(loaded.param_count().unwrap(), 2 * 16 + 16 + 16 * 4 + 4);
    for name in ["layer0.weight", "layer0.bias", "layer1.weight", "layer1.bias"] {
        assert_eq!(
            loaded.param(name).unwrap().to_vec::<f32>().unwrap(),
            model.param(name).unwrap().to_vec::<f32>().unwrap()
        );
    }
    let (x, _) = blobs(&ctx, 32, 2);
    assert_eq!(
        loaded.predict(&x).unwrap().to_vec::<f32>().unwrap(),
        model.predict(&x).unwrap().to_vec::<f32>().unwrap()
    );
    let summary = Value::parse(&loaded.summary().unwrap()).unwrap();
    assert_eq!(summary["total_params"].as_i64(), Some(loaded.param_count().unwrap()));
    assert_eq!(summary["layers"].as_array().map(|l| l.len()), Some(2));
}

#[test]
fn set_param_round_trips_through_a_file() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let bias: Vec<f32> = (0..4).map(|i| i as f32 * 0.5).collect();
    model.set_param("layer1.bias", &nnrt::Array::from_slice(&ctx, &[4], &bias).unwrap()).unwrap();
    let path = temp_path("set_param.safetensors");
    model.save(&path).unwrap();
    assert_eq!(Model::load(&ctx, &path).unwrap().param("layer1.bias").unwrap().to_vec::<f32>().unwrap(), bias);
}

#[test]
fn a_restored_trainer_continues_exactly() {
    let ctx = deterministic_context(11);
    let (x, y) = blobs(&ctx, 32, 3);
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut trainer = Trainer::new(&model, SGD).unwrap();
    for _ in 0..5 {
        trainer.step(&x, &y).unwrap();
    }
    let path = temp_path("trainer.safetensors");
    trainer.save(&path).unwrap();
    let expected: Vec<f64> = (0..3).map(|_| trainer.step(&x, &y).unwrap()).collect();

    // A fresh model and trainer, restored from the checkpoint, take the same next steps.
    let other = Model::new(&ctx, BLOB_MODEL).unwrap();
    let mut resumed = Trainer::new(&other, SGD).unwrap();
    resumed.restore(&path).unwrap();
    let got: Vec<f64> = (0..3).map(|_| resumed.step(&x, &y).unwrap()).collect();
    assert_eq!(got, expected);

    // The checkpoint is a model file too.
    assert_eq!(Model::load(&ctx, &path).unwrap().param_count().unwrap(), model.param_count().unwrap());
}

#[test]
fn restoring_a_checkpoint_of_another_optimizer_is_refused() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let trainer = Trainer::new(&model, SGD).unwrap();
    let path = temp_path("sgd.safetensors");
    trainer.save(&path).unwrap();
    let mut adam = Trainer::new(&model, r#"{"optimizer": {"type": "adam"}}"#).unwrap();
    let e = adam.restore(&path).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument, "{e}");
}

#[test]
fn damaged_and_missing_files_are_reported() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let path = temp_path("damaged.safetensors");
    model.save(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();

    bytes.truncate(bytes.len() - 10);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(Model::load(&ctx, &path).unwrap_err().status(), Status::Corrupt);

    std::fs::write(&path, b"").unwrap();
    assert_eq!(Model::load(&ctx, &path).unwrap_err().status(), Status::Corrupt);

    let missing = temp_path("never_written.safetensors");
    let e = Model::load(&ctx, &missing).unwrap_err();
    assert_eq!(e.status(), Status::Io);
    assert!(e.message().contains(missing.to_str().unwrap()), "{e}");

    let e = model.save("/nonexistent/folder/model.safetensors").unwrap_err();
    assert_eq!(e.status(), Status::Io);
}

#[test]
fn an_exported_onnx_model_imports_to_the_same_predictions() {
    let ctx = context();
    let model = Model::new(&ctx, BLOB_MODEL).unwrap();
    let path = temp_path("model.onnx");
    model.export_onnx(&path).unwrap();
    let (x, _) = blobs(&ctx, 16, 5);
    let want = model.predict(&x).unwrap().to_vec::<f32>().unwrap();
    let from_file = Model::import_onnx(&ctx, &path, "").unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let from_bytes = Model::import_onnx_bytes(&ctx, &bytes, r#"{"loss": "nll"}"#).unwrap();
    for imported in [&from_file, &from_bytes] {
        let got = imported.predict(&x).unwrap().to_vec::<f32>().unwrap();
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6), "{got:?} vs {want:?}");
    }
    // With a loss the imported model trains.
    let mut trainer = Trainer::new(&from_bytes, SGD).unwrap();
    trainer.fit(&blob_dataset(&ctx, 64, 2), None, 1).unwrap();
    let err = Model::import_onnx_bytes(&ctx, &bytes[..bytes.len() / 2], "").unwrap_err();
    assert_eq!(err.status(), Status::Corrupt, "{err}");
}
