//! (14) Models of several named inputs and outputs: `predict_many`, `inputs`, `output_count`, and
//! multi-head attention's key mask.

use nnrt::{Array, Model, Status};

use crate::common::context;

/// Token ids and an attention mask (1: a token, 0: padding); outputs the class probabilities and
/// the attention's output.
const ENCODER: &str = r#"{"inputs": [{"name": "ids", "shape": [6]}, {"name": "attention_mask", "shape": [6]}],
  "seed": 3, "nodes": [
  {"name": "emb", "type": "embedding", "inputs": ["ids"], "vocab": 11, "units": 8},
  {"name": "attn", "type": "multi_head_attention", "inputs": ["emb", "attention_mask"], "heads": 2, "mask": "keep"},
  {"name": "out", "type": "output", "inputs": ["attn"], "units": 3, "loss": "nll"}],
  "outputs": ["out", "attn"]}"#;

#[test]
fn predict_many_reads_every_input_and_gives_every_output() {
    let ctx = context();
    let model = Model::new(&ctx, ENCODER).unwrap();
    assert_eq!(
        model.inputs().unwrap(),
        [("ids".to_string(), vec![6]), ("attention_mask".to_string(), vec![6])]
    );
    assert_eq!(model.output_count().unwrap(), 2);
    let ids: Vec<i64> = (0..12).map(|i| (i * 7 % 11) as i64).collect();
    let mask: Vec<f32> = (0..12).map(|i| if i % 6 < 4 { 1.0 } else { 0.0 }).collect();
    let ids_array = Array::from_slice(&ctx, &[2, 6], &ids).unwrap();
    let mask_array = Array::from_slice(&ctx, &[2, 6], &mask).unwrap();
    let outputs = model.predict_many(&[&ids_array, &mask_array]).unwrap();
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0].shape().unwrap(), [2, 3]);
    assert_eq!(outputs[1].shape().unwrap(), [2, 6, 8]);
    let probs = outputs[0].to_vec::<f32>().unwrap();
    for row in probs.chunks(3) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{row:?}");
    }
    // Padding tokens change only their own rows.
    let other: Vec<i64> = ids.iter().enumerate().map(|(i, &t)| if i % 6 < 4 { t } else { (t + 1) % 11 }).collect();
    let other_array = Array::from_slice(&ctx, &[2, 6], &other).unwrap();
    let changed = model.predict_many(&[&other_array, &mask_array]).unwrap()[1].to_vec::<f32>().unwrap();
    let hidden = outputs[1].to_vec::<f32>().unwrap();
    for (i, (a, b)) in hidden.chunks(8).zip(changed.chunks(8)).enumerate() {
        if i % 6 < 4 {
            assert_eq!(a, b, "row {i}");
        } else {
            assert_ne!(a, b, "row {i}");
        }
    }
}

#[test]
fn a_model_of_several_inputs_refuses_one() {
    let ctx = context();
    let model = Model::new(&ctx, ENCODER).unwrap();
    let ids = Array::from_slice(&ctx, &[1, 6], &[1.0f32; 6]).unwrap();
    let err = model.predict(&ids).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("predict_many"), "{}", err.message());
    let err = model.predict_many(&[&ids]).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("n_inputs is 1"), "{}", err.message());
}
