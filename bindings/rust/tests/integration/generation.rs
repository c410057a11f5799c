//! (10) Generation from a token model: greedy, seeded sampling, the callback, and bad input.

use std::ops::ControlFlow;

use nnrt::{Model, Status};

use crate::common::context;

/// A small GPT: windows of 8 tokens, vocabulary 12.
const GPT: &str = r#"{"input": [8], "seed": 3, "nodes": [
  {"name": "emb", "type": "embedding", "inputs": ["input"], "vocab": 12, "units": 8},
  {"name": "pos", "type": "position_embedding", "inputs": ["emb"]},
  {"name": "att", "type": "multi_head_attention", "inputs": ["pos"], "heads": 2, "causal": true},
  {"name": "res", "type": "add", "inputs": ["pos", "att"]},
  {"name": "out", "type": "output", "inputs": ["res"], "units": 12, "loss": "nll", "flatten": false}],
  "outputs": ["out"]}"#;

#[test]
fn generates_tokens_from_a_prompt() {
    let ctx = context();
    let model = Model::new(&ctx, GPT).unwrap();
    let greedy = model.generate(&[1, 2, 3], 20, "").unwrap();
    assert_eq!(greedy.len(), 20);
    assert!(greedy.iter().all(|&t| (0..12).contains(&t)), "{greedy:?}");
    assert_eq!(model.generate(&[1, 2, 3], 20, r#"{"cache": false}"#).unwrap(), greedy);
    let sampled =
        |seed: u32| model.generate(&[1, 2, 3], 30, &format!(r#"{{"temperature": 1, "seed": {seed}}}"#)).unwrap();
    assert_eq!(sampled(4), sampled(4));
    assert_ne!(sampled(4), sampled(5));
    let mut seen = Vec::new();
    let stopped = model
        .generate_with(&[1, 2, 3], 20, "", |t| {
            seen.push(t);
            if seen.len() == 4 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .unwrap();
    assert_eq!(stopped, greedy[..4]);
    assert_eq!(seen, stopped);
}

#[test]
fn refuses_bad_prompts_and_options() {
    let ctx = context();
    let model = Model::new(&ctx, GPT).unwrap();
    let e = model.generate(&[1, 12], 5, "").unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("prompt[1] is 12"), "{e}");
    let e = model.generate(&[], 5, "").unwrap_err();
    assert!(e.message().contains("prompt_len is 0"), "{e}");
    let e = model.generate(&[1; 9], 5, "").unwrap_err();
    assert!(e.message().contains("more than the 8 positions"), "{e}");
    let e = model.generate(&[1], 5, r#"{"top_p": 0.9}"#).unwrap_err();
    assert!(e.message().contains("top_p"), "{e}");
}
