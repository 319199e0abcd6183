//! `ndgather`: TensorFlow's `tf.gather` and `tf.gather_nd` over `.npy` files and inline
//! literals, from the command line.

use ndgather_cli::{bench, error, input, npy, print};

use clap::{Parser, Subcommand, ValueEnum};
use error::CliError;
use ndgather::{examples, BadIndices, GatherNdOptions, GatherOptions, Tensor};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// tf.gather and tf.gather_nd over .npy files, with TensorFlow's semantics and messages.
#[derive(Parser, Debug)]
#[command(name = "ndgather", version, about, allow_negative_numbers = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What to do with an out-of-range index.
#[derive(Copy, Clone, Debug, ValueEnum)]
enum Policy {
    /// Fail on the first bad index (TensorFlow on the CPU).
    Error,
    /// Fill the slice of a bad index with zeros (TensorFlow on the GPU).
    Ignore,
    /// Clamp indices into range (XLA).
    Clamp,
    /// Negative indices count from the end (NumPy).
    Wrap,
}

impl From<Policy> for BadIndices {
    fn from(p: Policy) -> BadIndices {
        match p {
            Policy::Error => BadIndices::Error,
            Policy::Ignore => BadIndices::Ignore,
            Policy::Clamp => BadIndices::Clamp,
            Policy::Wrap => BadIndices::Wrap,
        }
    }
}

#[derive(clap::Args, Debug)]
struct Inputs {
    /// params: a .npy file, or a literal such as `[[0,1,2],[10,11,12]]` or `["a","b"]`.
    params: String,
    /// indices: a .npy file of integers, or a literal such as `[1, 0]` or 3.
    indices: String,
    /// Number of leading batch dimensions shared by params and indices.
    #[arg(
        long = "batch-dims",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    batch_dims: i64,
    /// What to do with an out-of-range index.
    #[arg(long = "bad-indices", value_enum, default_value = "error")]
    bad_indices: Policy,
    /// Write the result to this .npy file instead of printing it.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// tf.gather(params, indices, axis, batch_dims): slices along one axis.
    Gather {
        #[command(flatten)]
        inputs: Inputs,
        /// The axis to gather along (default: the first non-batch dimension); negative
        /// counts from the end.
        #[arg(long, allow_negative_numbers = true)]
        axis: Option<i64>,
    },
    /// tf.gather_nd(params, indices, batch_dims): slices addressed by index vectors.
    GatherNd {
        #[command(flatten)]
        inputs: Inputs,
    },
    /// Runs every worked example of the tf.gather / tf.gather_nd documentation.
    Examples,
    /// Times the cases of a benchmark suite (bench/suite.json) in-process.
    Bench {
        /// The suite file.
        suite: PathBuf,
        /// Use the cases' quick sizes.
        #[arg(long)]
        quick: bool,
        /// Only these cases (comma-separated names).
        #[arg(long, value_delimiter = ',')]
        cases: Option<Vec<String>>,
        /// Samples per case and mode (the median is reported).
        #[arg(long, default_value_t = 9)]
        runs: usize,
        /// Also write the results as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn emit(out: &mut impl Write, text: &str) -> Result<(), CliError> {
    match writeln!(out, "{text}") {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| CliError::io(std::path::Path::new("<stdout>"), e)),
    }
}

fn finish(result: Tensor, output: Option<PathBuf>) -> Result<(), CliError> {
    match output {
        Some(path) => npy::write(&path, &result),
        None => emit(&mut std::io::stdout().lock(), &print::format(&result)),
    }
}

fn run_op(
    inputs: Inputs,
    op: impl FnOnce(&ndgather::TensorView, &ndgather::TensorView) -> ndgather::Result<Tensor>,
) -> Result<(), CliError> {
    let params = input::load("params", &inputs.params, true)?;
    let indices = input::load("indices", &inputs.indices, false)?;
    let result = op(&params.view()?, &indices.view()?)?;
    finish(result, inputs.output)
}

fn run_examples() -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let mut page = "";
    let mut failed = 0;
    for example in examples::ALL {
        if example.page != page {
            page = example.page;
            emit(&mut out, &format!("\n== {page}"))?;
        }
        emit(
            &mut out,
            &format!("\n>>> params = {}", example.params.describe()),
        )?;
        emit(
            &mut out,
            &format!(">>> indices = {}", example.indices.describe()),
        )?;
        emit(&mut out, &format!(">>> {}", example.call))?;
        match example.check() {
            // Where the page shows only a shape (`.shape.as_list()`), so do we.
            Ok(result) => match example.expected {
                examples::Expected::Shape(_) => emit(&mut out, &format!("{:?}", result.shape()))?,
                examples::Expected::Values(_) => emit(&mut out, &print::format(&result))?,
            },
            Err(why) => {
                failed += 1;
                emit(&mut out, &format!("MISMATCH: {why}"))?;
            }
        }
    }
    let total = examples::ALL.len();
    emit(
        &mut out,
        &format!(
            "\n{} of {total} examples give the documented result",
            total - failed
        ),
    )?;
    if failed > 0 {
        return Err(CliError::Usage(format!(
            "{failed} examples differ from the documentation"
        )));
    }
    Ok(())
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Gather { inputs, axis } => {
            let mut options = GatherOptions::new()
                .batch_dims(inputs.batch_dims)
                .bad_indices(inputs.bad_indices.into());
            if let Some(axis) = axis {
                options = options.axis(axis);
            }
            run_op(inputs, |p, i| p.gather(i, &options))
        }
        Command::GatherNd { inputs } => {
            let options = GatherNdOptions::new()
                .batch_dims(inputs.batch_dims)
                .bad_indices(inputs.bad_indices.into());
            run_op(inputs, |p, i| p.gather_nd(i, &options))
        }
        Command::Examples => run_examples(),
        Command::Bench {
            suite,
            quick,
            cases,
            runs,
            json,
        } => {
            let args = bench::BenchArgs { quick, cases, runs };
            let report = bench::run(&suite, &args, &mut std::io::stdout().lock())?;
            if let Some(path) = json {
                let text = serde_json::to_string_pretty(&report)
                    .map_err(|e| CliError::Internal(e.to_string()))?;
                std::fs::write(&path, text).map_err(|e| CliError::io(&path, e))?;
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
