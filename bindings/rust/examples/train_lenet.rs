//! Trains the classic LeNet on Fashion-MNIST through the Rust binding, printing progress and the
//! evaluation on the test set.
//!
//! ```text
//! cargo run --release --example train_lenet -- [data folder] [epochs] [training examples]
//! ```
//!
//! The data folder holds train-images-idx3-ubyte.gz and friends (default: Debian's
//! dataset-fashion-mnist, /usr/share/datasets/fashion-mnist); epochs defaults to 1 and the number
//! of training examples to all 60,000.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

use nnrt::{Context, Dataset, Model, Trainer, json};

// The project's one LeNet and its trainer options (Adam, a cosine schedule over 8 epochs), the files
// the C example, the tests and `nnrt train` use, compiled in.
const LENET: &str = include_str!("../../../examples/lenet.json");
const TRAINER_OPTIONS: &str = include_str!("../../../examples/lenet_trainer.json");

/// The command line: data folder, epochs, and how many training examples to keep (None: all).
struct Args {
    data: PathBuf,
    epochs: i32,
    limit: Option<i64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let data = args.next().unwrap_or_else(|| "/usr/share/datasets/fashion-mnist".into()).into();
    let epochs = match args.next() {
        Some(text) => text.parse().map_err(|_| format!("epochs must be an integer, got {text:?}"))?,
        None => 1,
    };
    let limit = match args.next() {
        Some(text) => Some(text.parse().map_err(|_| format!("the example limit must be an integer, got {text:?}"))?),
        None => None,
    };
    Ok(Args { data, epochs, limit: limit.filter(|&n| n > 0) })
}

fn print_progress(p: &nnrt::Progress) -> ControlFlow<()> {
    if p.epoch_end {
        let accuracy = p.validation_score.map_or("n/a".to_string(), |a| format!("{a:.4}"));
        println!("epoch {} done: {:.0} images/s, test accuracy {accuracy}", p.epoch + 1, p.examples_per_second);
    } else if p.batch.unwrap_or(p.iteration) % 100 == 0 {
        println!(
            "epoch {} batch {:4}/{}  loss {:.4}  {:.0} images/s",
            p.epoch + 1,
            p.batch.unwrap_or(p.iteration),
            p.batches_per_epoch.unwrap_or(0),
            p.loss,
            p.examples_per_second
        );
    }
    ControlFlow::Continue(())
}

fn run(args: &Args) -> nnrt::Result<()> {
    nnrt::check_abi()?;
    let ctx = Context::new()?;
    let backend = json::Value::parse(&ctx.describe()?)?["backend"].as_str().unwrap_or("?").to_string();
    println!("nnrt {} on the {backend} backend", nnrt::version());

    let file = |name: &str| args.data.join(name);
    let train =
        Dataset::load_idx(&ctx, file("train-images-idx3-ubyte.gz"), file("train-labels-idx1-ubyte.gz"), args.limit)?;
    let test = Dataset::load_idx(&ctx, file("t10k-images-idx3-ubyte.gz"), file("t10k-labels-idx1-ubyte.gz"), None)?;
    println!("{} training and {} test images", train.len()?, test.len()?);

    let model = Model::new(&ctx, LENET)?;
    let mut trainer = Trainer::new(&model, TRAINER_OPTIONS)?;
    trainer.set_progress(print_progress)?;
    trainer.fit(&train, Some(&test), args.epochs)?;

    let evaluation = model.evaluate(&test)?;
    println!("evaluation: {}", evaluation.report()?);
    println!("test_accuracy={:.4}", evaluation.accuracy()?.unwrap_or(f64::NAN));
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("usage: train_lenet [data folder] [epochs] [training examples]\n{message}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("train_lenet: {e}");
            ExitCode::FAILURE
        }
    }
}
