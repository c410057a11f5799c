//! The binding's integration tests, against the real libnnrt. One test binary (instead of one per
//! file) keeps the build short; each module is one kind of test.

mod common;

mod abi_version;
mod array_math;
mod drop_order;
mod error_paths;
mod generation;
mod library_missing;
mod logging;
mod multi_input;
mod quantization;
mod run_options;
mod save_load;
mod sharing;
mod training;
