//! `ndgather`: TensorFlow's gather family from the command line (every op of the registry is
//! a subcommand), over `.npy` files, `.npz` members, safetensors tensors, standard input and inline literals.

use ndgather_cli::{
    bench, error, examples, npy, op_commands, output, print, progress, ragged, source,
};

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use clap_complete::Shell;
use error::CliError;
use ndgather::embedding::{EmbeddingLookupOptions, PartitionStrategy};
use ndgather::{
    BadIndices, Error, FillValue, GatherNdOptions, GatherOptions, Op, TakeAlongAxisOptions, Tensor,
};
use print::PrintOptions;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// TensorFlow's gather family over .npy, .npz and safetensors files, pipes and literals, with
/// the semantics and messages of the library whose op it is.
#[derive(Parser, Debug)]
#[command(name = "ndgather", version, about, allow_negative_numbers = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--bad-indices`: a policy of [`BadIndices::ALL`], and for `fill` an optional value.
#[derive(Copy, Clone, Debug)]
struct PolicyArg {
    policy: BadIndices,
    fill: FillValue,
}

/// The policies as `--help` and messages list them.
fn policy_names() -> String {
    let names: Vec<String> = BadIndices::ALL
        .iter()
        .map(|p| match p {
            BadIndices::Fill => "fill[=VALUE]".to_string(),
            other => other.name().to_string(),
        })
        .collect();
    names.join(", ")
}

fn parse_policy(text: &str) -> Result<PolicyArg, String> {
    let (name, value) = match text.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (text, None),
    };
    let policy = BadIndices::ALL
        .iter()
        .copied()
        .find(|p| p.name() == name)
        .ok_or_else(|| format!("expected one of {}", policy_names()))?;
    let fill = match (policy, value) {
        (_, None) => FillValue::Default,
        (BadIndices::Fill, Some(v)) => parse_fill(v)?,
        (_, Some(_)) => return Err(format!("only fill takes a value (fill=VALUE), not {name}")),
    };
    Ok(PolicyArg { policy, fill })
}

/// A fill value: `true`/`false`, an integer, or a number (`nan`, `inf` and `-inf` too).
fn parse_fill(v: &str) -> Result<FillValue, String> {
    match v {
        "true" | "True" => return Ok(FillValue::Bool(true)),
        "false" | "False" => return Ok(FillValue::Bool(false)),
        _ => {}
    }
    if let Ok(i) = v.parse::<i128>() {
        return Ok(FillValue::Int(i));
    }
    v.parse::<f64>()
        .map(FillValue::float)
        .map_err(|_| format!("the fill VALUE must be a number or true/false, got '{v}'"))
}

/// How a printed result looks (NumPy's print options).
#[derive(clap::Args, Debug)]
struct PrintArgs {
    /// At most N digits after the point (each value gets fewer where fewer identify it).
    #[arg(long, value_name = "N", default_value_t = 8)]
    precision: usize,
    /// Summarise arrays of more than N elements with `...`.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    threshold: usize,
    /// Print every element (no summary).
    #[arg(long, conflicts_with = "threshold")]
    full: bool,
    /// Wrap lines at N characters.
    #[arg(long, value_name = "N", default_value_t = 75)]
    line_width: usize,
}

impl PrintArgs {
    fn options(&self) -> PrintOptions {
        PrintOptions {
            precision: self.precision,
            threshold: if self.full {
                usize::MAX
            } else {
                self.threshold
            },
            line_width: self.line_width.max(1),
            ..PrintOptions::default()
        }
    }
}

#[derive(clap::Args, Debug)]
struct Inputs {
    /// params: FILE.npy, ARCHIVE.npz:NAME, MODEL.safetensors:NAME, - (standard input) or a
    /// literal such as `[[0,1,2],[10,11,12]]` or `["a","b"]`.
    params: String,
    /// indices: integers in any form PARAMS takes, e.g. `ids.npy`, `-` or `[1, 0]`.
    indices: String,
    /// What an out-of-range index does: error (TensorFlow on the CPU), ignore (zeros, as on
    /// the GPU), clamp (XLA), negative (negative from the end, NumPy's indexing), wrap
    /// (modulo the dimension, NumPy's and JAX's mode="wrap"), fill[=VALUE] (JAX's
    /// mode="fill": VALUE, by default NaN for floats, the minimum or maximum of integers,
    /// true for bool).
    #[arg(long = "bad-indices", value_name = "POLICY", value_parser = parse_policy, default_value = "error")]
    bad_indices: PolicyArg,
    /// Write the result as .npy to FILE (`-`: standard output) instead of printing it.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    print: PrintArgs,
}

const FORMS_HELP: &str = "\
Array arguments (PARAMS, INDICES) take any of these forms:
  FILE.npy                 a NumPy .npy file (memory-mapped: only what is gathered is read)
  ARCHIVE.npz:NAME         the array NAME of a .npz archive (np.savez); ':NAME' may be left
                           out when the archive holds one array
  MODEL.safetensors:NAME   the tensor NAME of a safetensors file (memory-mapped; bf16 too)
  -                        a .npy file on standard input (one of the two arguments at most)
  LITERAL                  [[1, 2], [3, 4]], [1.5, 2], ['a', 'b'], 3, True

Examples:
  ndgather gather table.npy '[5, 0, 7]'
  ndgather gather model.safetensors:embed.weight ids.npy -o rows.npy
  ndgather take-along-axis scores.npy top_k.npy --axis -1
  python -c 'import numpy as np, sys; np.save(sys.stdout.buffer, np.array([2, 0]))' \\
    | ndgather gather table.npy - -o - \\
    | python -c 'import io, sys, numpy as np; print(np.load(io.BytesIO(sys.stdin.buffer.read())))'";

#[derive(clap::Args, Debug)]
struct BatchDims {
    /// Number of leading batch dimensions shared by params and indices.
    #[arg(
        long = "batch-dims",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    batch_dims: i64,
}

#[derive(clap::Args, Debug)]
struct RaggedArg {
    /// Which operands are ragged (params, indices, or both: params,indices): each a .npz of
    /// its flat `values` and `row_splits` (then `row_splits_1`, … for more ragged
    /// dimensions), as np.savez(path, values=rt.flat_values, row_splits=rt.row_splits)
    /// writes it. A ragged result is printed as its values and splits, or written with -o
    /// to a .npz of the same members.
    #[arg(long, value_name = "OPERANDS", value_delimiter = ',', value_parser = ["params", "indices"])]
    ragged: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// tf.gather(params, indices, axis, batch_dims): slices along one axis.
    #[command(after_help = FORMS_HELP)]
    Gather {
        #[command(flatten)]
        inputs: Inputs,
        #[command(flatten)]
        batch: BatchDims,
        /// The axis to gather along (default: the first non-batch dimension); negative
        /// counts from the end.
        #[arg(long, allow_negative_numbers = true)]
        axis: Option<i64>,
        #[command(flatten)]
        ragged: RaggedArg,
    },
    /// tf.gather_nd(params, indices, batch_dims): slices addressed by index vectors.
    #[command(after_help = FORMS_HELP)]
    GatherNd {
        #[command(flatten)]
        inputs: Inputs,
        #[command(flatten)]
        batch: BatchDims,
        /// Not an option of gather_nd (kept to explain that, rather than clap's guess).
        #[arg(long, hide = true, allow_negative_numbers = true)]
        axis: Option<String>,
        #[command(flatten)]
        ragged: RaggedArg,
    },
    /// numpy.take_along_axis(params, indices, axis): indices of params' rank pick along one
    /// axis, broadcast against params on the others.
    #[command(after_help = FORMS_HELP)]
    TakeAlongAxis {
        #[command(flatten)]
        inputs: Inputs,
        /// The axis to take along; negative counts from the end.
        #[arg(long, allow_negative_numbers = true)]
        axis: i64,
    },
    /// tf.nn.embedding_lookup: rows of a table, or of a table split into shards (float16,
    /// bfloat16, float32 or float64), by ids.
    #[command(after_help = FORMS_HELP)]
    EmbeddingLookup {
        /// The table, or its shards in order; each in any form PARAMS takes (a big table's
        /// shards stay memory-mapped).
        #[arg(required = true, num_args = 1.., value_name = "SHARD")]
        shards: Vec<String>,
        /// The ids into the whole table, in any form INDICES takes.
        #[arg(long)]
        ids: String,
        /// How ids map to shards: mod (id i is row i / n of shard i % n) or div
        /// (contiguous ranges).
        #[arg(long, default_value = "mod", value_parser = ["mod", "div"])]
        partition_strategy: String,
        /// Clip each looked-up row to this L2 norm.
        #[arg(long, value_name = "X")]
        max_norm: Option<f64>,
        /// Write the result as .npy to FILE (`-`: standard output) instead of printing it.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        print: PrintArgs,
    },
    /// Runs every worked example of the tf.gather / tf.gather_nd documentation.
    Examples,
    /// Times the cases of a benchmark suite (bench/suite.json in this repository) in-process.
    Bench {
        /// The suite file (bench/suite.json).
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
    /// Prints a completion script for a shell: `ndgather completions bash > ~/.local/share/bash-completion/completions/ndgather`.
    Completions {
        /// The shell.
        shell: Shell,
    },
}

fn emit(out: &mut impl Write, text: &str) -> Result<(), CliError> {
    match writeln!(out, "{text}") {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| CliError::io("<stdout>", e)),
    }
}

/// Writes the result as .npy to `path` (`-`: standard output), with progress for big ones.
fn save(result: &Tensor, path: &Path) -> Result<(), CliError> {
    let label = path.display().to_string();
    let ts = npy::type_str(result);
    let bar = progress::bytes(&format!("writing {label}"), npy::byte_len(result, &ts));
    let written = if path == Path::new("-") {
        let stdout = std::io::stdout();
        if stdout.is_terminal() {
            return Err(CliError::Usage(
                "-o - writes .npy bytes, not text: pipe them to a program or redirect them to a \
                 file (> out.npy), or leave out -o to print the values"
                    .to_string(),
            ));
        }
        npy::write(bar.wrap_write(stdout.lock()), "<stdout>", result, &ts)
    } else {
        output::write_file(path, |file| {
            npy::write(bar.wrap_write(file), &label, result, &ts)
        })
    };
    bar.finish_and_clear();
    match written {
        // A reader that stops early (`| head -c 100`) is the reader's choice.
        Err(CliError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(())
        }
        other => other,
    }
}

/// Adds what a flag allows to the library's error about its value.
fn explain(e: CliError, axis: Option<i64>) -> CliError {
    let CliError::Gather(source) = e else {
        return e;
    };
    let hint = match &source {
        Error::AxisOutOfRange { axis: a, params_rank } if axis.is_some() => format!(
            "--axis {a} is out of range: for params of rank {params_rank}, --axis takes -{params_rank} to {}",
            *params_rank as i64 - 1
        ),
        Error::BatchDimsOutOfRange { batch_dims, indices_rank } => format!(
            "--batch-dims {batch_dims} is out of range: for indices of rank {indices_rank}, --batch-dims takes -{indices_rank} to {indices_rank}"
        ),
        Error::BatchDimsNotLessThanParamsRank { params_rank, .. } => format!(
            "--batch-dims must be less than params' rank ({params_rank})"
        ),
        Error::AlongAxisOutOfRange { rank, .. } => format!(
            "for params of rank {rank}, --axis takes -{rank} to {}",
            *rank as i64 - 1
        ),
        Error::AxisBeforeBatchDims { .. } => {
            "--axis must not come before the batch dimensions: give --axis at least --batch-dims".to_string()
        }
        _ => return CliError::Gather(source),
    };
    CliError::Flag {
        source: Box::new(source),
        hint,
    }
}

fn run_op(inputs: Inputs, call: Op, axis: Option<i64>, ragged: &RaggedArg) -> Result<(), CliError> {
    if !ragged.ragged.is_empty() {
        return run_ragged(inputs, call, &ragged.ragged);
    }
    if inputs.params == "-" && inputs.indices == "-" {
        return Err(CliError::Usage(
            "only one of PARAMS and INDICES can be read from standard input (-)".to_string(),
        ));
    }
    let params = source::load("params", &inputs.params)?;
    let indices = source::load("indices", &inputs.indices)?.into_tensor()?;
    let reads = params.bytes_read_in_place(&call, indices.shape());
    let bar = progress::spinner("gathering", reads);
    let result = params.gather(&call, &indices.view());
    bar.finish_and_clear();
    let result = result.map_err(|e| explain(e, axis))?;
    match inputs.output {
        Some(path) => save(&result, &path),
        None => emit(
            &mut std::io::stdout().lock(),
            &print::format(&result, &inputs.print.options()),
        ),
    }
}

/// A gather with ragged operands (`--ragged`).
fn run_ragged(inputs: Inputs, call: Op, which: &[String]) -> Result<(), CliError> {
    let is = |name: &str| which.iter().any(|w| w == name);
    let params = ragged::Loaded::load("params", &inputs.params, is("params"))?;
    let indices = ragged::Loaded::load("indices", &inputs.indices, is("indices"))?;
    let result = ragged::run(&call, &params, &indices)?;
    match inputs.output {
        Some(path) => ragged::save(result, &path, save),
        None => emit(
            &mut std::io::stdout().lock(),
            &ragged::print(result, &inputs.print.options()),
        ),
    }
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
                examples::Expected::Values(_) => {
                    emit(&mut out, &print::format(&result, &PrintOptions::default()))?
                }
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
        Command::Gather {
            inputs,
            batch,
            axis,
            ragged,
        } => {
            let mut options = GatherOptions::new()
                .batch_dims(batch.batch_dims)
                .bad_indices(inputs.bad_indices.policy)
                .fill_value(inputs.bad_indices.fill);
            if let Some(axis) = axis {
                options = options.axis(axis);
            }
            run_op(inputs, Op::Gather(options), axis, &ragged)
        }
        Command::GatherNd {
            inputs,
            batch,
            axis,
            ragged,
        } => {
            if axis.is_some() {
                return Err(CliError::Usage(
                    "gather-nd has no --axis: tf.gather_nd addresses slices by the last axis of \
                     its indices (use --batch-dims for shared leading dimensions, or \
                     `ndgather gather --axis N` to gather along one axis)"
                        .to_string(),
                ));
            }
            let options = GatherNdOptions::new()
                .batch_dims(batch.batch_dims)
                .bad_indices(inputs.bad_indices.policy)
                .fill_value(inputs.bad_indices.fill);
            run_op(inputs, Op::GatherNd(options), None, &ragged)
        }
        Command::TakeAlongAxis { inputs, axis } => {
            let options = TakeAlongAxisOptions::new(axis)
                .bad_indices(inputs.bad_indices.policy)
                .fill_value(inputs.bad_indices.fill);
            run_op(
                inputs,
                Op::TakeAlongAxis(options),
                Some(axis),
                &RaggedArg { ragged: vec![] },
            )
        }
        Command::EmbeddingLookup {
            shards,
            ids,
            partition_strategy,
            max_norm,
            output,
            print,
        } => {
            let strategy = PartitionStrategy::from_name(&partition_strategy)
                .ok_or_else(|| CliError::Usage(format!("unknown strategy {partition_strategy}")))?;
            let lookup = EmbeddingLookupOptions::new()
                .partition_strategy(strategy)
                .max_norm(max_norm);
            let loaded = shards
                .iter()
                .map(|s| source::load("shard", s))
                .collect::<Result<Vec<_>, _>>()?;
            let ids = source::load("ids", &ids)?.into_tensor()?;
            // Shards are read where they lie; big-endian or misaligned ones are copied, after
            // which every shard has a typed view.
            let shards = loaded
                .into_iter()
                .map(|s| match s.typed_view() {
                    Some(_) => Ok(s),
                    None => s.copy().map(source::Loaded::Owned),
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            let views: Vec<_> = shards.iter().filter_map(|s| s.typed_view()).collect();
            let inputs = [
                ndgather::registry::Input::List(views),
                ndgather::registry::Input::from(ids.view()),
            ];
            let result = ndgather::OpDef::run(&lookup, &inputs, ndgather::Out::New)?
                .ok_or(ndgather::Error::Internal(
                    "a run into a new output returns it",
                ))?
                .into_dense()?;
            match output {
                Some(path) => save(&result, &path),
                None => emit(
                    &mut std::io::stdout().lock(),
                    &print::format(&result, &print.options()),
                ),
            }
        }
        Command::Completions { shell } => {
            let mut command = full_command();
            clap_complete::generate(shell, &mut command, "ndgather", &mut std::io::stdout());
            Ok(())
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
                output::write_file(&path, |file| {
                    file.write_all(text.as_bytes())
                        .map_err(|e| CliError::io(path.display(), e))
                })?;
            }
            Ok(())
        }
    }
}

/// Makes the main thread one of rayon's workers (the pool keeps its size: the main thread and
/// one fewer spawned thread). Every call of the library is made from the main thread, which
/// then splits its work on its own deque and works through it instead of handing it to the
/// pool and sleeping until the pool is done: faster on the suite's quick cases (figures:
/// BENCHMARKS.md, "Measurements behind the code"). Should the pool fail to build (it cannot already exist
/// here), calls build the default pool as before.
fn join_the_thread_pool() {
    _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
}

/// The command line: the hand-written subcommands, and one per other registered op
/// (`op_commands.rs`), each with `-o` and the print options.
fn full_command() -> clap::Command {
    op_commands::add(Cli::command(), |c| {
        PrintArgs::augment_args(
            c.arg(
                clap::Arg::new("output")
                    .short('o')
                    .long("output")
                    .value_name("FILE")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help("Write the result as .npy to FILE (`-`: standard output) instead of printing it."),
            ),
        )
    })
}

/// Runs a subcommand generated from the registry.
fn run_generated(
    op: &'static dyn ndgather::OpDef,
    matches: &clap::ArgMatches,
) -> Result<(), CliError> {
    let print = PrintArgs::from_arg_matches(matches).map_err(|e| CliError::Usage(e.to_string()))?;
    let result = op_commands::run(op, matches)?;
    match matches.get_one::<PathBuf>("output") {
        Some(path) => ragged::save(result, path, save),
        None => emit(
            &mut std::io::stdout().lock(),
            &ragged::print(result, &print.options()),
        ),
    }
}

fn main() -> ExitCode {
    join_the_thread_pool();
    let matches = full_command().get_matches();
    let generated = matches.subcommand().and_then(|(name, sub)| {
        let hand_written = Cli::command().find_subcommand(name).is_some();
        op_commands::op_of(name)
            .filter(|_| !hand_written)
            .map(|op| (op, sub))
    });
    let result = match generated {
        Some((op, sub)) => run_generated(op, sub),
        None => match Cli::from_arg_matches(&matches) {
            Ok(cli) => run(cli),
            Err(e) => e.exit(),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
