//! What several test modules need: contexts, a synthetic classification task, temporary paths.

use std::path::PathBuf;

use nnrt::{Array, Context, Dataset};

/// A context with one worker thread: the test harness already runs tests in parallel.
pub fn context() -> Context {
    Context::with_options(r#"{"threads": 1}"#).expect("a context with default options")
}

/// A deterministic context, for tests that compare two runs bit for bit.
pub fn deterministic_context(seed: u64) -> Context {
    Context::with_options(&format!(r#"{{"threads": 1, "deterministic": true, "seed": {seed}}}"#))
        .expect("a deterministic context")
}

/// A classifier for [`blobs`]: 2 features, 4 classes.
pub const BLOB_MODEL: &str = r#"{"input": [2], "seed": 5, "layers": [
  {"type": "dense", "units": 16, "activation": "relu"},
  {"type": "output", "units": 4, "activation": "softmax", "loss": "nll"}]}"#;

/// SplitMix64: reproducible test data without a crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn symmetric(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// A four-class task: points scattered around (±1, ±1), the class being the quadrant of the
/// centre. Returns the features [n, 2] (F32) and the labels [n] (I64).
pub fn blobs(ctx: &Context, n: usize, seed: u64) -> (Array, Array) {
    let mut rng = Rng::new(seed);
    let mut features = Vec::with_capacity(2 * n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let class = (i % 4) as i64;
        let (cx, cy) = (if class & 1 == 0 { -1.0 } else { 1.0 }, if class & 2 == 0 { -1.0 } else { 1.0 });
        features.push(cx + 0.6 * rng.symmetric());
        features.push(cy + 0.6 * rng.symmetric());
        labels.push(class);
    }
    let x = Array::from_slice(ctx, &[n as i64, 2], &features).unwrap();
    let y = Array::from_slice(ctx, &[n as i64], &labels).unwrap();
    (x, y)
}

/// [`blobs`] as a dataset.
pub fn blob_dataset(ctx: &Context, n: usize, seed: u64) -> Dataset {
    let (x, y) = blobs(ctx, n, seed);
    Dataset::from_arrays(ctx, &x, &y).unwrap()
}

/// A fresh path in cargo's per-target temporary folder, unique to this process and `name`.
pub fn temp_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}
